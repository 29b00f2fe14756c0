package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/internal/reconcile"
	"github.com/kartalua/karta/internal/watchguard"
	"github.com/kartalua/karta/interpreter"
)

// Controller keeps a Registry in step with the cluster's Kartas. Create it
// with New and start it with Run.
type Controller struct {
	dyn      dynamic.Interface
	registry *interpreter.Registry
	opts     Options
	log      *slog.Logger
	loop     *reconcile.Loop[key]
	metrics  *metrics
	// watches guards the informers' lists and watches (watch.go).
	watches *watchguard.Guard

	started atomic.Bool
	synced  atomic.Bool

	// mu guards the fields below it.
	mu sync.Mutex
	// base are the Programs the registry held at New, by kind.
	base map[schema.GroupVersionKind]*interpreter.Program
	// sources are the watched resources, with their informers once Run
	// starts them.
	sources   []source
	informers []cache.SharedIndexInformer
	entries   map[key]*entry
	// serving is, per kind claimed by a compiled Karta, the winner of the
	// conflict rule, whose Program is registered.
	serving map[schema.GroupVersionKind]key
	// pending are the objects listed at the initial sync and not yet
	// reconciled; HasSynced waits for them.
	pending map[key]bool
	// stuck records, per object, the generation whose status the server
	// did not keep, so that it is not written again and again.
	stuck map[key]int64
	// limits are the limit errors seen of each registered Karta's Program
	// (limits.go).
	limits map[key]*limitWatch

	// notify serialises OnChange calls in the order of the changes: a
	// worker takes it before releasing mu.
	notify sync.Mutex
}

// New returns a Controller that watches Kartas with dyn and keeps reg in
// step. The Programs in reg now are the base: see the package doc.
func New(dyn dynamic.Interface, reg *interpreter.Registry, opts Options) (*Controller, error) {
	if dyn == nil {
		return nil, errors.New("controller: no dynamic client")
	}
	if reg == nil {
		return nil, errors.New("controller: no registry")
	}
	opts = opts.withDefaults()
	if _, err := labels.Parse(opts.LabelSelector); err != nil {
		return nil, fmt.Errorf("controller: label selector: %w", err)
	}
	c := &Controller{
		dyn:      dyn,
		registry: reg,
		opts:     opts,
		log:      opts.Logger,
		base:     map[schema.GroupVersionKind]*interpreter.Program{},
		entries:  map[key]*entry{},
		serving:  map[schema.GroupVersionKind]key{},
		stuck:    map[key]int64{},
		limits:   map[key]*limitWatch{},
	}
	for _, p := range reg.List() {
		c.base[p.GVK()] = p
	}
	c.loop = reconcile.New("karta", c.reconcile, func(k key, err error) {
		c.log.Error("reconcile failed; retrying", "object", k.String(), "err", err)
		c.metrics.reconciles.WithLabelValues(resultError).Inc()
	})
	c.loop.SetLeading(!opts.Standby)
	var err error
	if c.watches, err = watchguard.New(watchguard.Options{Probe: opts.ServerProbe, Logger: c.log, Registerer: opts.Registerer,
		Bound: opts.WatchFailureBound}); err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	m, err := newMetrics(c, opts.Registerer)
	if err != nil {
		return nil, err
	}
	c.metrics = m
	return c, nil
}

// Run watches until ctx ends, then returns nil once the workers have
// finished. It fails at once when discovery (Options.Discovery) shows the
// Karta CRD is not installed. Run may be called once.
func (c *Controller) Run(ctx context.Context) error {
	if c.started.Swap(true) {
		return errors.New("controller: Run called twice")
	}
	defer c.loop.ShutDown()
	sources, err := discoverSources(ctx, c.opts.Discovery)
	if err != nil {
		return err
	}
	informers := make([]cache.SharedIndexInformer, len(sources))
	synced := make([]cache.InformerSynced, len(sources))
	for i, s := range sources {
		inf := c.informer(s.gvr)
		if _, err := inf.AddEventHandler(c.handler(i)); err != nil {
			return fmt.Errorf("controller: watching %s: %w", s.gvr.GroupResource(), err)
		}
		informers[i], synced[i] = inf, inf.HasSynced
		c.log.Info("watching", "resource", s.gvr.GroupResource().String(), "namespaced", s.namespaced, "statusSubresource", s.status)
	}
	c.mu.Lock()
	c.sources, c.informers = sources, informers
	c.mu.Unlock()

	var informersDone sync.WaitGroup
	defer informersDone.Wait()
	for _, inf := range informers {
		informersDone.Go(func() { inf.RunWithContext(ctx) })
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil // ctx ended first
	}
	c.markInitial()

	var wg sync.WaitGroup
	if c.opts.LimitInterval > 0 {
		wg.Go(func() { c.watchLimits(ctx) })
	}
	c.loop.Work(ctx, c.opts.Workers)
	wg.Wait()
	return nil
}

// HasSynced reports whether the registry reflects every Karta that existed
// when the informers first synced.
func (c *Controller) HasSynced() bool { return c.synced.Load() }

// Ready is nil once the registry reflects every Karta of the initial list
// (HasSynced) and while the API server answers the Kartas' watches, or has
// not for less than Options.WatchFailureBound; else it says why not.
func (c *Controller) Ready() error {
	if !c.synced.Load() {
		return ErrNotSynced
	}
	return c.watches.Err()
}

// ErrNotSynced is Ready's error before the registry reflects the Kartas
// of the initial list.
var ErrNotSynced = errors.New("the Kartas are not synced yet")

// Leading reports whether the controller writes status.
func (c *Controller) Leading() bool { return c.loop.Leading() }

// SetLeading starts or stops the status writes. Starting them requeues
// every Karta, so that the new leader writes what its standby time left
// unwritten.
func (c *Controller) SetLeading(leading bool) {
	if !c.loop.SetLeading(leading) {
		return
	}
	for _, k := range c.knownKeys() {
		c.loop.Add(k)
	}
}

// markInitial records the objects of the initial list; HasSynced turns true
// once each was reconciled.
func (c *Controller) markInitial() {
	keys := c.knownKeys()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = make(map[key]bool, len(keys))
	for _, k := range keys {
		c.pending[k] = true
	}
	if len(c.pending) == 0 {
		c.synced.Store(true)
	}
}

// knownKeys lists the objects in the informers' caches.
func (c *Controller) knownKeys() []key {
	c.mu.Lock()
	informers := c.informers
	c.mu.Unlock()
	var keys []key
	for i, inf := range informers {
		for _, obj := range inf.GetStore().List() {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				keys = append(keys, key{src: i, namespace: u.GetNamespace(), name: u.GetName()})
			}
		}
	}
	return keys
}

// handler queues the key of every added, updated or deleted object of
// source src.
func (c *Controller) handler(src int) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		c.loop.Add(key{src: src, namespace: u.GetNamespace(), name: u.GetName()})
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}
}
