package interpreter

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// StaticResolver resolves references from a fixed set of objects (files
// given to the CLI with --ref, tests): it never blocks, and an object it
// does not hold is absent.
type StaticResolver struct {
	objs []*unstructured.Unstructured
}

// NewStaticResolver holds objs, in namespace and name order (the order
// of a list reference's value).
func NewStaticResolver(objs ...*unstructured.Unstructured) *StaticResolver {
	s := &StaticResolver{objs: slices.Clone(objs)}
	slices.SortStableFunc(s.objs, func(a, b *unstructured.Unstructured) int {
		if c := strings.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
	return s
}

// Resolve returns the held objects q selects: of its kind and namespace,
// then by name (lookup), or by labels and controller (list).
func (s *StaticResolver) Resolve(_ context.Context, q ReferenceQuery, _ *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range s.objs {
		if o.GroupVersionKind() != q.GVK || o.GetNamespace() != q.Namespace {
			continue
		}
		if q.Shape == "lookup" {
			if o.GetName() == q.Name {
				return []*unstructured.Unstructured{o}, nil
			}
			continue
		}
		if q.Selects(o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Selects reports whether a list query selects o by what it says of
// objects: its labels match the selector, and, with an owner, the
// workload controls it. The kind and namespace are the resolver's to
// match.
func (q ReferenceQuery) Selects(o *unstructured.Unstructured) bool {
	if q.Selector != nil && !q.Selector.Matches(labels.Set(o.GetLabels())) {
		return false
	}
	return q.OwnerUID == "" || controlledBy(o, q.OwnerUID)
}

func controlledBy(o *unstructured.Unstructured, uid types.UID) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == uid && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}
