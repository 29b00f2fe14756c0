package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karta/schemacheck"
)

// ConditionSchemaChecked is written when Options.CRDs is set, on every
// accepted Karta: True when its paths fit the schema of the CRD its kind is
// served from, False when the schema refutes some, Unknown when the kind
// has no served CRD (or it could not be read).
const ConditionSchemaChecked = "SchemaChecked"

// The reasons of the SchemaChecked condition.
const (
	// ReasonSchemaMatches (SchemaChecked=True): no path is refuted;
	// warnings, if any, are in the message.
	ReasonSchemaMatches = "SchemaMatches"
	// ReasonSchemaMismatch (SchemaChecked=False): the message lists every
	// problem with the Karta's field path and the schema path.
	ReasonSchemaMismatch = "SchemaMismatch"
	// ReasonCRDNotServed (SchemaChecked=Unknown): no CRD serves the
	// Karta's kind and version, so nothing was checked.
	ReasonCRDNotServed = "CRDNotServed"
	// ReasonCRDUnreadable (SchemaChecked=Unknown): reading the CRD failed.
	ReasonCRDUnreadable = "CRDUnreadable"
)

// schemaVerdict checks an accepted Karta against the schema of its kind's
// served CRD, and its expressions over referenced objects against their
// kinds' served CRDs (a kind without one is not checked through a
// schema): a CRD is found through discovery (the plural of the kind) when
// Options.Discovery is set, else among every CRD.
func (c *Controller) schemaVerdict(ctx context.Context, e *entry) verdict {
	s, err := c.servedSchema(ctx, e.gvk)
	switch {
	case errors.Is(err, schemacheck.ErrNoCRD), errors.Is(err, schemacheck.ErrNotServed), errors.Is(err, errNotDiscovered):
		return verdict{status: metav1.ConditionUnknown, reason: ReasonCRDNotServed,
			message: fmt.Sprintf("not checked: no CRD serves %s", gvkString(e.gvk))}
	case errors.Is(err, schemacheck.ErrNoVersion):
		return verdict{status: metav1.ConditionFalse, reason: ReasonSchemaMismatch, message: err.Error()}
	case err != nil:
		return verdict{status: metav1.ConditionUnknown, reason: ReasonCRDUnreadable, message: err.Error()}
	}
	// Expressions over a referenced object are checked through its kind's
	// CRD when the cluster serves one, as karta validate --live does.
	refs := schemacheck.ReferenceSchemas(ctx, e.checked.Karta, c.servedSchema)
	problems := schemacheck.Check(e.checked, s, refs...).Karta()
	fit := "the paths fit the schema of CRD " + s.CRD
	if len(refs) > 0 {
		names := make([]string, len(refs))
		for i, r := range refs {
			names[i] = r.CRD
		}
		fit += " and of the referenced kinds' CRDs " + strings.Join(names, ", ")
	}
	switch {
	case problems.HasErrors():
		return verdict{status: metav1.ConditionFalse, reason: ReasonSchemaMismatch, message: problemLines(problems)}
	case len(problems) > 0:
		return verdict{status: metav1.ConditionTrue, reason: ReasonSchemaMatches, message: fit + ", with warnings:\n" + problemLines(problems)}
	}
	return verdict{status: metav1.ConditionTrue, reason: ReasonSchemaMatches, message: fit}
}

// errNotDiscovered is a kind discovery does not list.
var errNotDiscovered = errors.New("not served")

func (c *Controller) servedSchema(ctx context.Context, gvk schema.GroupVersionKind) (*schemacheck.Schema, error) {
	if c.opts.Discovery == nil {
		return schemacheck.Served(ctx, c.opts.CRDs, gvk)
	}
	list, err := c.opts.Discovery.ServerResourcesForGroupVersionWithContext(ctx, gvk.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return nil, errNotDiscovered
	}
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", gvk.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
			crd, err := c.opts.CRDs.Get(ctx, r.Name+"."+gvk.Group, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil, errNotDiscovered // a built-in API, not a CRD
			}
			if err != nil {
				return nil, err
			}
			return schemacheck.ServedIn(crd, gvk)
		}
	}
	return nil, errNotDiscovered
}

// schemaCondition is the SchemaChecked condition of an entry.
func schemaCondition(e *entry) metav1.Condition {
	return metav1.Condition{Type: ConditionSchemaChecked, Status: e.schema.status, Reason: e.schema.reason,
		Message: truncate(e.schema.message), ObservedGeneration: e.generation}
}
