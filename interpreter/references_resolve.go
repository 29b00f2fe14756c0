package interpreter

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HasReferences reports whether the Program's Karta declares references.
func (p *Program) HasReferences() bool { return len(p.refs) > 0 }

// ResolveReferences resolves the Program's references for obj with the
// resolver ctx carries (WithResolver), as a hook does on entry, warnings
// and bounds included, and returns the objects they bound. A caller that
// runs the hooks elsewhere — a worker process, which holds no cache —
// passes them there to a StaticResolver, which binds the same values.
func (p *Program) ResolveReferences(ctx context.Context, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if len(p.refs) == 0 || obj == nil {
		return nil, nil
	}
	var out []*unstructured.Unstructured
	if _, err := p.resolveAll(ctx, "", obj, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// BindReferences resolves the Program's references for obj with the
// resolver ctx carries and returns ctx with their values bound, for a
// caller that runs the Program through an adapter's own entry (package
// karmada's operations), which resolves nothing: without it the
// references are absent there. The hooks resolve on entry whatever ctx
// carries.
func (p *Program) BindReferences(ctx context.Context, obj *unstructured.Unstructured) (context.Context, error) {
	if obj == nil {
		return ctx, nil
	}
	return p.bindReferences(ctx, "", obj)
}
