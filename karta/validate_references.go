package karta

import (
	"errors"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// jqIdentifier is what a reference's name must be to be a jq variable.
var jqIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// references checks spec.references: names, kinds, shapes and scope, and
// the references' own expressions, which run on the workload before any
// reference is resolved and so may use none (that would be a cycle, or an
// order the consumer would have to guess). It sets v.vars, the variables
// every other expression is checked with; only well-named references
// become variables, so that a broken name is reported once, where it is.
func (v *validator) references() {
	base := field.NewPath("spec", "references")
	seen := map[string]bool{}
	for i := range v.k.Spec.References {
		r := &v.k.Spec.References[i]
		p := base.Index(i)
		switch {
		case r.Name == "":
			v.errorf(p.Child("name"), "required: the reference's name, read as $<name> in expressions")
		case !jqIdentifier.MatchString(r.Name):
			v.errorf(p.Child("name"), "invalid value %q: must be a jq identifier ([A-Za-z_][A-Za-z0-9_]*), read as $%s", r.Name, r.Name)
		case r.Name == "__loc__" || r.Name == "ENV":
			v.errorf(p.Child("name"), "invalid value %q: $%s is jq's own", r.Name, r.Name)
		case seen[r.Name]:
			v.errorf(p.Child("name"), "duplicate value %q", r.Name)
		default:
			seen[r.Name] = true
			v.vars = append(v.vars, "$"+r.Name)
		}
		if r.Kind.Version == "" {
			v.errorf(p.Child("kind", "version"), "required: the referenced kind's version")
		}
		if r.Kind.Kind == "" {
			v.errorf(p.Child("kind", "kind"), "required: the referenced kind")
		}
		if r.Scope != "" && r.Scope != ReferenceNamespaced && r.Scope != ReferenceCluster {
			v.errorf(p.Child("scope"), "unsupported value %q: supported values: \"Namespaced\", \"Cluster\"", r.Scope)
		}
		v.referenceShape(p, r)
	}
}

func (v *validator) referenceShape(p *field.Path, r *Reference) {
	switch {
	case r.Lookup == nil && r.List == nil:
		v.errorf(p, "required: one of lookup and list")
		return
	case r.Lookup != nil && r.List != nil:
		v.errorf(p.Child("list"), "forbidden: lookup is set; a reference has one shape")
	}
	if r.Lookup != nil {
		if r.Lookup.Name == "" {
			v.errorf(p.Child("lookup", "name"), "required: the jq expression yielding the object's name")
		}
		if r.Lookup.Namespace != "" && r.IsCluster() {
			v.errorf(p.Child("lookup", "namespace"), "forbidden: the kind is cluster-scoped (scope: Cluster)")
		}
	}
	if r.List != nil {
		if r.IsCluster() && r.List.Owner {
			v.errorf(p.Child("list", "owner"), "forbidden: a cluster-scoped object is never controlled by a namespaced workload")
		}
		if r.List.LabelSelector == "" && !r.List.Owner {
			v.errorf(p.Child("list"), "required: labelSelector or owner; a list of every object of a kind is not a reference")
		}
	}
	for _, e := range r.Expressions() {
		if e.Expr != "" {
			v.referenceExpr(p.Child(e.Shape, e.Field), e.Expr)
		}
	}
	if r.ExportFallback != "" {
		fp := p.Child("exportFallback")
		if q := v.referenceExpr(fp, r.ExportFallback); q != nil {
			if ok, why := jqexpr.Constant(q); !ok {
				v.errorf(fp, "invalid value %q: must be a jq constant (null, [], {\"spec\": {}} …), what an export reads in place of $%s: %s", r.ExportFallback, r.Name, why)
			}
		}
	}
}

// referenceExpr checks one of a reference's own expressions, with no
// variables bound: using a reference there is reported as such. It
// returns the parsed query when the expression is valid.
func (v *validator) referenceExpr(p *field.Path, expr string) *gojq.Query {
	a, errs := jqexpr.Check(expr)
	for _, err := range errs {
		var e *jqexpr.Error
		switch {
		case errors.As(err, &e) && e.IsDisallowed():
			v.errorf(p, "%s", e.Msg)
		case strings.Contains(err.Error(), "variable not defined"):
			v.errorf(p, "invalid jq: %v (a reference's expressions run on the workload before any reference is resolved, so they cannot use one)", err)
		default:
			v.errorf(p, "invalid jq: %v", err)
		}
	}
	if len(errs) > 0 {
		return nil
	}
	v.refExprs[expr] = a
	return a.Query
}
