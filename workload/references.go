package workload

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
)

// referenceNodes are the Reference nodes of obj's Karta: each reference
// resolved with the resolver ctx carries, with the objects it bound.
func referenceNodes(ctx context.Context, p *interpreter.Program, obj *unstructured.Unstructured) ([]*Node, error) {
	refs, err := p.DescribeReferences(ctx, obj)
	if err != nil {
		return nil, err
	}
	out := make([]*Node, 0, len(refs))
	for _, r := range refs {
		n := &Node{Kind: KindReference, Name: r.Name, Children: []*Node{}, Fields: Fields{
			APIVersion: r.GVK.GroupVersion().String(), Kind: r.GVK.Kind, Namespace: r.Namespace,
			Shape: r.Shape, Target: r.Target, Reason: r.Warning,
		}}
		for _, o := range r.Objects {
			n.Children = append(n.Children, &Node{Kind: KindObject, Name: o.GetName(), Children: []*Node{},
				Fields: Fields{Namespace: o.GetNamespace(), APIVersion: o.GetAPIVersion(), Kind: o.GetKind()}})
		}
		out = append(out, n)
	}
	return out, nil
}
