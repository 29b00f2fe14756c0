package exporter

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/internal/kindwatch"
)

// syncWatches watches every kind the registry describes and the owner
// kinds, as far as the cluster serves them; reset asks discovery afresh
// first.
func (e *Exporter) syncWatches(reset bool) {
	if reset {
		kindwatch.ResetMapper(e.mapper)
	}
	kinds := map[schema.GroupKind]kindwatch.Kind{}
	var ownerKinds []schema.GroupVersionKind
	for _, entry := range e.registry.Entries() {
		gk := entry.GVK.GroupKind()
		if _, done := kinds[gk]; done {
			continue // two versions of a kind: one watch (the first the registry lists)
		}
		if gk == podGVK.GroupKind() {
			kinds[gk] = kindwatch.Pods
		} else if k, ok := kindwatch.Map(e.mapper, e.log, entry.GVK); ok {
			kinds[gk] = k
		} else {
			continue
		}
		p, err := e.registry.Lookup(entry.GVK)
		if err != nil || p == nil {
			continue
		}
		ownerKinds = append(ownerKinds, p.Karta().Spec.StructureDefinition.ChildKinds()...)
	}
	owners := kindwatch.Owners(e.mapper, e.log, kinds, append(ownerKinds, e.opts.OwnerKinds...))
	next := e.kinds.Update(kinds, owners, e.start, func(w *kindwatch.Watch, _ bool) {
		e.log.Info("exporter: no longer watching", "resource", w.GVR.GroupResource().String())
		e.requeueWatch(w) // its workloads' summaries go
		if w != e.kinds.Load().Pods {
			w.Stop()
		}
	})
	if next == nil {
		return
	}
	e.health.kinds.WithLabelValues("described").Set(float64(len(next.Roots)))
	e.health.kinds.WithLabelValues("owner").Set(float64(len(next.Owners)))
}

// requeueWatch queues every cached object of w.
func (e *Exporter) requeueWatch(w *kindwatch.Watch) {
	gk := w.GVK.GroupKind()
	kindwatch.EachKey(w, func(ns, name string) { e.loop.Add(key{gk: gk, namespace: ns, name: name}) })
}
