package exporter

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/internal/reconcile"
	"github.com/kartalua/karta/internal/watchguard"
	"github.com/kartalua/karta/interpreter"
)

// Exporter keeps a summary of every workload of a cluster that the
// registry's Programs describe and serves them as Prometheus series
// (Collector). Create it with New and start it with Run.
type Exporter struct {
	dyn      dynamic.Interface
	meta     metadata.Interface
	mapper   meta.RESTMapper
	registry *interpreter.Registry
	opts     Options
	log      *slog.Logger
	loop     *reconcile.Loop[key]
	watches  *watchguard.Guard
	health   *health

	started atomic.Bool
	// informers are the informers' goroutines, which Run waits for: a
	// caller may tear down what they use (klog's logger) once it returns.
	informers sync.WaitGroup
	// set is the current watch set, replaced whole under setMu.
	set   atomic.Pointer[watchSet]
	setMu sync.Mutex
	// runCtx is Run's context, for the informers started later.
	runCtx context.Context
	// kick asks Run's loop to discover the watched kinds again.
	kick chan struct{}

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
	switch {
	case dyn == nil:
		return nil, errors.New("exporter: no dynamic client")
	case meta == nil:
		return nil, errors.New("exporter: no metadata client")
	case mapper == nil:
		return nil, errors.New("exporter: no REST mapper")
	case reg == nil:
		return nil, errors.New("exporter: no registry")
	}
	opts = opts.withDefaults()
	e := &Exporter{dyn: dyn, meta: meta, mapper: mapper, registry: reg, opts: opts, log: opts.Logger,
		kick: make(chan struct{}, 1), summaries: map[key]*summary{}}
	e.set.Store(&watchSet{kinds: map[schema.GroupKind]*watch{}, owners: map[schema.GroupKind]*watch{}})
	e.loop = reconcile.New("karta-exporter", e.reconcile, func(k key, err error) {
		e.log.Error("exporter: summarizing failed; retrying", "workload", k.String(), "err", err)
	})
	var err error
	if e.watches, err = watchguard.New(watchguard.Options{Probe: opts.ServerProbe, Logger: e.log, Registerer: opts.Registerer,
		Bound: opts.WatchFailureBound}); err != nil {
		return nil, err
	}
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
	// Deferred first, so run last: after the rediscovery has stopped (it
	// starts informers), every informer has stopped too.
	defer e.informers.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.setMu.Lock()
	e.runCtx = ctx
	next := e.set.Load().clone()
	next.pods = e.start(ctx, &watch{described: true, gvk: podGVK, gvr: podGVR, namespaced: true}, 0)
	e.set.Store(next)
	e.setMu.Unlock()
	e.syncWatches(ctx, false)

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { e.rediscover(ctx) })
	e.loop.Work(ctx, e.opts.Workers)
	return nil
}

// HasSynced reports whether the caches hold the pods and every kind
// watched at the start (or the kind's list failed: a kind the exporter
// may not read does not hold the others back).
func (e *Exporter) HasSynced() bool {
	set := e.set.Load()
	if set.pods == nil || !set.pods.inf.HasSynced() || set.initial == nil {
		return false
	}
	for _, w := range set.initial {
		if !w.inf.HasSynced() && !w.failed.Load() {
			return false
		}
	}
	return true
}

// ErrNotSynced is Ready's error before the caches are synced.
var ErrNotSynced = errors.New("the metrics exporter's caches are not synced yet")

// Ready is nil once the caches are synced and while the API server
// answers their watches (or has not for less than
// Options.WatchFailureBound); else it says why not.
func (e *Exporter) Ready() error {
	if !e.HasSynced() {
		return ErrNotSynced
	}
	return e.watches.Err()
}

// KindChanged tells the exporter that the registry's Program for gvk
// changed: its workloads are summarized again and the watched kinds
// discovered again. It is quick and does not block: give it to
// controller.Options.OnChange.
func (e *Exporter) KindChanged(gvk schema.GroupVersionKind, _ *interpreter.Program) {
	if w := e.set.Load().kinds[gvk.GroupKind()]; w != nil {
		e.requeueWatch(w)
	}
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// reconcile summarizes the workload k, or forgets it when it is gone, is
// no longer described or is a component of another.
func (e *Exporter) reconcile(ctx context.Context, k key) error {
	set := e.set.Load()
	w := set.kinds[k.gk]
	var obj *unstructured.Unstructured
	if w != nil {
		obj, _ = w.get(k.namespace, k.name).(*unstructured.Unstructured)
	}
	if obj == nil {
		e.forget(k)
		return nil
	}
	if _, nested := set.topOf(obj); nested {
		e.forget(k)
		return nil
	}
	p, ok := e.registry.Get(w.gvk)
	if !ok {
		e.forget(k)
		return nil
	}
	pods, nested := set.descend(obj)
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

// splitKey reads a cache key.
func splitKey(k string) (namespace, name string, err error) {
	return cache.SplitMetaNamespaceKey(k)
}
