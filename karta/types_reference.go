package karta

// Reference is a named pointer to another object (lookup) or set of
// objects (list), resolved by the consumer and exposed to every expression
// of the Karta as $<name>: the object or null for a lookup, an array of
// objects (possibly empty) for a list. Exactly one of Lookup and List is
// set. Its own expressions run on the workload and may not use
// references.
type Reference struct {
	// Name is a jq identifier ([A-Za-z_][A-Za-z0-9_]*), unique in the
	// Karta; expressions read the reference as $<name>.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Name string `json:"name"`
	// Kind is the referenced objects' group, version and kind.
	Kind GroupVersionKind `json:"kind"`
	// Scope is Namespaced (the default) or Cluster: a cluster-scoped
	// kind's reference has no namespace.
	// +optional
	// +kubebuilder:validation:Enum=Namespaced;Cluster
	Scope ReferenceScope `json:"scope,omitempty"`
	// Lookup points to one object by name.
	// +optional
	Lookup *ReferenceLookup `json:"lookup,omitempty"`
	// List points to the objects a label selector and/or ownership
	// select, in the workload's namespace.
	// +optional
	List *ReferenceList `json:"list,omitempty"`
	// ExportFallback is a jq expression over the workload that an export
	// (Karmada's or Argo CD's Lua, which resolve nothing) binds to
	// $<name> in place of the referenced objects; it may not read a
	// reference. Without it, exporting an expression that reads the
	// reference fails, naming it.
	// +optional
	ExportFallback string `json:"exportFallback,omitempty"`
}

// ReferenceScope is the scope of a referenced kind.
type ReferenceScope string

// The scopes of a reference.
const (
	ReferenceNamespaced ReferenceScope = "Namespaced"
	ReferenceCluster    ReferenceScope = "Cluster"
)

// IsCluster reports whether the reference names a cluster-scoped kind.
func (r *Reference) IsCluster() bool { return r.Scope == ReferenceCluster }

// Shape is "lookup" or "list" (or "" when neither is set).
func (r *Reference) Shape() string {
	switch {
	case r.Lookup != nil:
		return "lookup"
	case r.List != nil:
		return "list"
	}
	return ""
}

// ReferenceLookup names one object with jq over the workload.
type ReferenceLookup struct {
	// Name yields the object's name (a string); null or empty: no object.
	Name string `json:"name"`
	// Namespace yields the object's namespace; absent: the workload's.
	// Forbidden on a cluster-scoped reference.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ReferenceList selects objects in the workload's namespace (every
// namespace is never listed; a cluster-scoped kind has none). At least one
// of LabelSelector and Owner is set; with both, both must hold.
type ReferenceList struct {
	// LabelSelector yields a Kubernetes label selector ({matchLabels,
	// matchExpressions}) from the workload; null selects nothing.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
	// Owner, when true, keeps only the objects the workload controls (an
	// ownerReference with the workload's uid and controller: true).
	// +optional
	Owner bool `json:"owner,omitempty"`
}

// Expressions returns the reference's own jq expressions with their
// field names under the reference, in order, unset ones left out.
func (r *Reference) Expressions() []ReferenceExpr {
	var out []ReferenceExpr
	if l := r.Lookup; l != nil {
		out = append(out, ReferenceExpr{"lookup", "name", l.Name})
		if l.Namespace != "" {
			out = append(out, ReferenceExpr{"lookup", "namespace", l.Namespace})
		}
	}
	if l := r.List; l != nil && l.LabelSelector != "" {
		out = append(out, ReferenceExpr{"list", "labelSelector", l.LabelSelector})
	}
	return out
}

// ReferenceExpr is one expression of a reference: Shape.Field = Expr.
type ReferenceExpr struct {
	Shape, Field, Expr string
}

// Variables returns the jq variables the Karta's expressions are checked
// and run with: "$" and each reference's name, in order.
func (s *KartaSpec) Variables() []string {
	if len(s.References) == 0 {
		return nil
	}
	out := make([]string, len(s.References))
	for i, r := range s.References {
		out[i] = "$" + r.Name
	}
	return out
}
