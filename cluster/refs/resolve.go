package refs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/internal/kindwatch"
	"github.com/kartalua/karta/interpreter"
)

// NotWatchedError is a reference to a kind the Cache does not watch: no
// registered Karta referenced it when the watches were last set.
type NotWatchedError struct {
	GVK schema.GroupVersionKind
}

func (e *NotWatchedError) Error() string {
	return fmt.Sprintf("%s is not watched (no registered Karta referenced it)", e.GVK)
}

// NotSyncedError is a reference to a kind whose first list is not in yet,
// or failed (Err: forbidden, for one).
type NotSyncedError struct {
	GVK schema.GroupVersionKind
	Err error
}

func (e *NotSyncedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s cannot be listed: %v", e.GVK, e.Err)
	}
	return fmt.Sprintf("the cache of %s has not synced yet", e.GVK)
}

func (e *NotSyncedError) Unwrap() error { return e.Err }

// Resolve answers a reference from the store of its kind: the object of
// a lookup, or the objects a list selects, in namespace and name order.
// It never calls the API server; a kind not watched, not served or not
// synced is an error (the reference is then absent, with a warning).
func (c *Cache) Resolve(_ context.Context, q interpreter.ReferenceQuery, _ *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	k := (*c.kinds.Load())[q.GVK]
	switch {
	case k == nil:
		return nil, &NotWatchedError{GVK: q.GVK}
	case k.unserved != nil:
		return nil, k.unserved
	case k.w == nil:
		return nil, &NotSyncedError{GVK: q.GVK}
	case !k.w.Synced():
		return nil, &NotSyncedError{GVK: q.GVK, Err: k.w.Err()}
	}
	ns := q.Namespace
	if !k.namespaced {
		ns = ""
	}
	if q.Shape == "lookup" {
		u, _ := k.w.Get(ns, q.Name).(*unstructured.Unstructured)
		if u == nil {
			return nil, nil
		}
		return []*unstructured.Unstructured{u}, nil
	}
	var items []any
	if q.OwnerUID != "" {
		items = kindwatch.ByOwner(k.w, q.OwnerUID)
	} else {
		items = k.w.ByIndex(cache.NamespaceIndex, ns)
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		if u, ok := it.(*unstructured.Unstructured); ok && u.GetNamespace() == ns && q.Selects(u) {
			out = append(out, u)
		}
	}
	// All of them, sorted: the interpreter cuts the list to the call's
	// bound and says how many there were.
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		if c := strings.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
	return out, nil
}
