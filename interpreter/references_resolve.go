package interpreter

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
// resolver ctx carries and returns ctx with their values bound, for an
// adapter that runs the Program through its own entry (WithState, as
// package karmada's operations do, which call it): without it the
// references are absent there. The hooks resolve on entry whatever ctx
// carries.
func (p *Program) BindReferences(ctx context.Context, obj *unstructured.Unstructured) (context.Context, error) {
	if obj == nil {
		return ctx, nil
	}
	return p.bindReferences(ctx, "", obj)
}

// ResolvedReference is one reference of a Program resolved for a
// workload, as karta describe shows it.
type ResolvedReference struct {
	// Name is the reference's ($<name>), GVK and Shape its kind and shape.
	Name  string
	GVK   schema.GroupVersionKind
	Shape string
	// Namespace is where it was looked up ("" for a cluster-scoped
	// kind); Target the name a lookup looked up, or a list's label
	// selector ("" when its expression named nothing).
	Namespace, Target string
	// Objects are the objects bound: at most one for a lookup.
	Objects []*unstructured.Unstructured
	// Warning says why the reference is absent or cut; "" when it
	// resolved whole.
	Warning string
}

// DescribeReferences resolves the Program's references for obj with the
// resolver ctx carries, as a hook does on entry (its warnings go to ctx's
// too), and returns each with what it bound and, when it is absent or
// cut, why.
func (p *Program) DescribeReferences(ctx context.Context, obj *unstructured.Unstructured) ([]ResolvedReference, error) {
	if len(p.refs) == 0 || obj == nil {
		return nil, nil
	}
	rv, _ := ctx.Value(resolverKey{}).(resolverValue)
	out := make([]ResolvedReference, len(p.refs))
	var cur *ResolvedReference
	capture := resolverValue{r: rv.r, warn: func(w ReferenceWarning) {
		if cur.Warning != "" {
			cur.Warning += "; "
		}
		cur.Warning += w.Message
		if rv.warn != nil {
			rv.warn(w)
		}
	}}
	var objs []*unstructured.Unstructured
	b := refBinding{p: p, rv: capture, left: MaxReferencedObjects, bytes: p.limits.MaxMemory, resolved: &objs}
	for i := range p.refs {
		cr := &p.refs[i]
		cur = &out[i]
		*cur = ResolvedReference{Name: cr.ref.Name, GVK: cr.ref.Kind.GVK(), Shape: cr.ref.Shape()}
		quiet := refBinding{p: p, left: b.left} // the query alone, its warnings told by resolve
		if q, ok := quiet.query(ctx, cr, obj); ok {
			cur.Namespace, cur.Target = q.Namespace, q.Name
			if q.Selector != nil {
				cur.Target = q.Selector.String()
			}
		}
		objs = nil
		if _, err := b.resolve(ctx, cr, obj); err != nil {
			return nil, err
		}
		cur.Objects = objs
	}
	return out, nil
}
