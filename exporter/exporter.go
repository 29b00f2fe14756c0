package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kartalua/karta/internal/kindwatch"
	"github.com/kartalua/karta/internal/reconcile"
	"github.com/kartalua/karta/interpreter"
)

// Exporter keeps a summary of every workload of a cluster that the
// registry's Programs describe and serves them as Prometheus series
// (Collector). Create it with New and start it with Run.
type Exporter struct {
	mapper   meta.RESTMapper
	registry *interpreter.Registry
	opts     Options
	log      *slog.Logger
	loop     *reconcile.Loop[key]
	health   *health
	// kinds are the watched kinds (the described ones are its roots), on
	// the process's informers.
	kinds *kindwatch.Tracker

	started atomic.Bool

	// mu guards summaries, the workloads' summaries by key.
	mu        sync.RWMutex
	summaries map[key]*summary
}

// New returns an Exporter of the registry's workloads. dyn reads the
// workloads and pods, meta the owners between them, mapper maps kinds to
// resources (a restmapper.DeferredDiscoveryRESTMapper is reset before
// each rediscovery). With Options.Registerer, the collectors are
// registered.
func New(dyn dynamic.Interface, meta metadata.Interface, mapper meta.RESTMapper, reg *interpreter.Registry, opts Options) (*Exporter, error) {
	opts = opts.withDefaults()
	kinds, err := kindwatch.NewTracker(dyn, meta, mapper, reg, opts.Informers, kindwatch.Options{Probe: opts.ServerProbe,
		Logger: opts.Logger, Registerer: opts.Registerer, Bound: opts.WatchFailureBound, ResyncCheck: opts.ResyncPeriod})
	if err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	e := &Exporter{mapper: mapper, registry: reg, opts: opts, log: opts.Logger, kinds: kinds, summaries: map[key]*summary{}}
	e.loop = reconcile.New("karta-exporter", e.reconcile, func(k key, err error) {
		e.log.Error("exporter: summarizing failed; retrying", "workload", k.String(), "err", err)
	})
	if e.health, err = newHealth(e, opts.Registerer); err != nil {
		return nil, err
	}
	return e, nil
}

// Run watches until ctx ends, then returns nil once the workers have
// finished. Run may be called once.
func (e *Exporter) Run(ctx context.Context) error {
	if e.started.Swap(true) {
		return errors.New("exporter: Run called twice")
	}
	defer e.loop.ShutDown()
	// The exporter's own informers, if it has them, have stopped when Run
	// returns: a caller may then tear down what they use (klog's logger).
	return e.kinds.Run(ctx, e.opts.RediscoverPeriod, func(ctx context.Context) error {
		e.kinds.Begin(ctx, func(next *kindwatch.Set) {
			e.log.Info("exporter: watching", "resource", kindwatch.Pods.GVR.GroupResource().String(), "described", true)
			next.Pods = e.kinds.Informers().Watch(kindwatch.Pods, true, 0, e.handler(kindwatch.Pods))
		})
		e.syncWatches(false)
		return nil
	}, e.syncWatches, func(ctx context.Context) { e.loop.Work(ctx, e.opts.Workers) })
}

// HasSynced reports whether the caches hold the pods and every kind
// watched at the start (or the kind's list failed: a kind the exporter
// may not read does not hold the others back).
func (e *Exporter) HasSynced() bool { return e.kinds.Load().Synced() }

// ErrNotSynced is Ready's error before the caches are synced.
var ErrNotSynced = errors.New("the metrics exporter's caches are not synced yet")

// Ready is nil once the caches are synced and while the API server
// answers their watches (or has not for less than
// Options.WatchFailureBound); else it says why not.
func (e *Exporter) Ready() error { return e.kinds.Ready(ErrNotSynced) }

// KindChanged tells the exporter that the registry's Program for gvk
// changed: its workloads are summarized again and the watched kinds
// discovered again. It is quick and does not block: give it to
// controller.Options.OnChange.
func (e *Exporter) KindChanged(gvk schema.GroupVersionKind, _ *interpreter.Program) {
	if w := e.kinds.Load().Roots[gvk.GroupKind()]; w != nil {
		e.requeueWatch(w)
	}
	e.kinds.Kick()
}

// ReferenceChanged summarizes again the workloads a change of obj, an
// object of gvk that a Karta references, concerns
// (kindwatch.Referencing: the workload that controls it, or those of its
// namespace, or all of them when it is cluster-scoped), so that their
// series follow it without waiting for the resync. It is quick and does
// not block: give it to refs.Cache.OnChange.
func (e *Exporter) ReferenceChanged(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	for gk, w := range e.kinds.Load().Roots {
		if p, ok := e.registry.Get(w.GVK); ok {
			kindwatch.Referencing(p.Karta(), w, gvk, obj, func(ns, name string) {
				e.loop.Add(key{gk: gk, namespace: ns, name: name})
			})
		}
	}
}

// reconcile summarizes the workload k, or forgets it when it is gone, is
// no longer described or is a component of another.
func (e *Exporter) reconcile(ctx context.Context, k key) error {
	set := e.kinds.Load()
	w := set.Roots[k.gk]
	var obj *unstructured.Unstructured
	if w != nil {
		obj, _ = w.Get(k.namespace, k.name).(*unstructured.Unstructured)
	}
	if obj == nil {
		e.forget(k)
		return nil
	}
	if _, nested := topOf(set, obj); nested {
		e.forget(k)
		return nil
	}
	p, ok := e.registry.Get(w.GVK)
	if !ok {
		e.forget(k)
		return nil
	}
	pods, nested := descend(set, obj)
	for _, n := range nested {
		e.forget(n)
	}
	kind := k.gk.String()
	start := e.opts.Now()
	s, errs := summarize(interpreter.WithResolver(ctx, e.opts.References, nil), p, obj, pods, start)
	e.health.duration.WithLabelValues(kind).Observe(e.opts.Now().Sub(start).Seconds())
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for _, err := range errs {
		e.health.errors.WithLabelValues(kind).Inc()
		e.log.Debug("exporter: a hook failed", "workload", k.String(), "err", err)
	}
	e.mu.Lock()
	if old := e.summaries[k]; old != nil && old.status == s.status {
		s.since = old.since
	}
	e.summaries[k] = s
	e.mu.Unlock()
	return nil
}

func (e *Exporter) forget(k key) {
	e.mu.Lock()
	delete(e.summaries, k)
	e.mu.Unlock()
}
