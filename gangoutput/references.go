package gangoutput

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/internal/kindwatch"
	"github.com/kartalua/karta/interpreter"
)

// withReferences returns ctx carrying Options.References for the hooks
// of one workload's reconcile or admission, and done, which logs the
// references they could not resolve, once each.
func (c *Controller) withReferences(ctx context.Context, workload string) (context.Context, func()) {
	var mu sync.Mutex
	var warnings []string
	seen := map[string]bool{}
	ctx = interpreter.WithResolver(ctx, c.opts.References, func(w interpreter.ReferenceWarning) {
		mu.Lock()
		defer mu.Unlock()
		if s := w.String(); !seen[s] {
			seen[s] = true
			warnings = append(warnings, s)
		}
	})
	return ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range warnings {
			c.log.Info("gang output: a reference is absent", "workload", workload, "warning", w)
		}
	}
}

// ReferenceChanged requeues the workloads a change of obj, an object of
// gvk that a Karta references, concerns (kindwatch.Referencing: the
// workload that controls it, or those of its namespace, or all of them
// when it is cluster-scoped), so that it reaches their gang objects
// without waiting for the resync. It is quick and does not block: give it
// to refs.Cache.OnChange.
func (c *Controller) ReferenceChanged(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	for gk, w := range c.kinds.Load().Roots {
		if p, ok := c.registry.Get(w.GVK); ok {
			kindwatch.Referencing(p.Karta(), w, gvk, obj, func(ns, name string) {
				c.loop.Add(rootKey{gk: gk, namespace: ns, name: name})
			})
		}
	}
}
