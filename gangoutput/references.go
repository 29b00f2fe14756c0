package gangoutput

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
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

// ReferenceChanged requeues the workloads whose Karta references gvk:
// those of obj's namespace, or all of them when obj is cluster-scoped, so
// that a change of a referenced object (a TrainJob's runtime) reaches
// their gang objects without waiting for the resync. It is quick and does
// not block: give it to refs.Cache.OnChange.
func (c *Controller) ReferenceChanged(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	for gk, w := range c.set.Load().roots {
		p, ok := c.registry.Get(w.gvk)
		if !ok || !references(p.Karta(), gvk) {
			continue
		}
		var keys []string
		if ns := obj.GetNamespace(); ns != "" {
			objs, err := w.inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
			if err != nil {
				continue
			}
			for _, o := range objs {
				if k, err := cache.MetaNamespaceKeyFunc(o); err == nil {
					keys = append(keys, k)
				}
			}
		} else {
			keys = w.inf.GetStore().ListKeys()
		}
		for _, key := range keys {
			if ns, name, err := splitKey(key); err == nil {
				c.loop.Add(rootKey{gk: gk, namespace: ns, name: name})
			}
		}
	}
}

// references reports whether k declares a reference to gvk.
func references(k *karta.Karta, gvk schema.GroupVersionKind) bool {
	for _, r := range k.Spec.References {
		if r.Kind.GVK() == gvk {
			return true
		}
	}
	return false
}
