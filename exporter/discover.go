package exporter

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kindWant is a kind to watch, mapped to its resource.
type kindWant struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
}

// rediscover discovers the watched kinds again every RediscoverPeriod and
// whenever KindChanged asks.
func (e *Exporter) rediscover(ctx context.Context) {
	var tick <-chan time.Time
	if e.opts.RediscoverPeriod > 0 {
		t := time.NewTicker(e.opts.RediscoverPeriod)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			e.syncWatches(ctx, true)
		case <-e.kick:
			e.syncWatches(ctx, false)
		}
	}
}

// syncWatches watches every kind the registry describes and the owner
// kinds, as far as the cluster serves them; reset asks discovery afresh
// first.
func (e *Exporter) syncWatches(ctx context.Context, reset bool) {
	if r, ok := e.mapper.(meta.ResettableRESTMapper); ok && reset {
		r.Reset()
	}
	kinds := map[schema.GroupKind]kindWant{}
	var ownerKinds []schema.GroupVersionKind
	for _, entry := range e.registry.Entries() {
		gk := entry.GVK.GroupKind()
		if _, done := kinds[gk]; done {
			continue // two versions of a kind: one watch (the first the registry lists)
		}
		if gk == podGVK.GroupKind() {
			kinds[gk] = kindWant{gvk: podGVK, gvr: podGVR, namespaced: true}
		} else if k, ok := e.mapKind(entry.GVK); ok {
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
	owners := map[schema.GroupKind]kindWant{}
	for _, gvk := range append(ownerKinds, e.opts.OwnerKinds...) {
		gk := gvk.GroupKind()
		if _, described := kinds[gk]; described || gk == podGVK.GroupKind() {
			continue
		}
		if _, done := owners[gk]; done {
			continue
		}
		if k, ok := e.mapKind(gvk); ok {
			owners[gk] = k
		}
	}

	e.setMu.Lock()
	defer e.setMu.Unlock()
	if e.runCtx == nil || e.runCtx.Err() != nil {
		return
	}
	next := e.set.Load().clone()
	var added []*watch
	update := func(have map[schema.GroupKind]*watch, want map[schema.GroupKind]kindWant, described bool) {
		for gk, w := range have {
			if k, ok := want[gk]; !ok || k.gvr != w.gvr {
				if w != next.pods {
					w.cancel()
				}
				delete(have, gk)
				e.log.Info("exporter: no longer watching", "resource", w.gvr.GroupResource().String())
				e.requeueWatch(w) // its workloads' summaries go
			}
		}
		for _, gk := range sortedKinds(want) {
			if _, ok := have[gk]; ok {
				continue
			}
			k := want[gk]
			if gk == podGVK.GroupKind() {
				have[gk] = next.pods
				e.requeueWatch(next.pods)
				continue
			}
			resync := time.Duration(0)
			if described {
				resync = e.opts.ResyncPeriod
			}
			w := e.start(e.runCtx, &watch{described: described, gvk: k.gvk, gvr: k.gvr, namespaced: k.namespaced}, resync)
			have[gk] = w
			added = append(added, w)
		}
	}
	update(next.kinds, kinds, true)
	update(next.owners, owners, false)
	if next.initial == nil {
		next.initial = append([]*watch{}, added...)
	}
	e.set.Store(next)
	e.health.kinds.WithLabelValues("described").Set(float64(len(next.kinds)))
	e.health.kinds.WithLabelValues("owner").Set(float64(len(next.owners)))
}

// mapKind maps gvk to its resource; false when the cluster does not serve
// it (or discovery failed, which is logged).
func (e *Exporter) mapKind(gvk schema.GroupVersionKind) (kindWant, bool) {
	m, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if !meta.IsNoMatchError(err) {
			e.log.Warn("exporter: cannot map a kind", "kind", gvk.String(), "err", err)
		}
		return kindWant{}, false
	}
	return kindWant{gvk: gvk, gvr: m.Resource, namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}, true
}

// requeueWatch queues every cached object of w.
func (e *Exporter) requeueWatch(w *watch) {
	if w == nil || w.inf == nil {
		return
	}
	for _, k := range w.inf.GetStore().ListKeys() {
		ns, name, err := splitKey(k)
		if err == nil {
			e.loop.Add(key{gk: w.gvk.GroupKind(), namespace: ns, name: name})
		}
	}
}
