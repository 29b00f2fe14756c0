package kindwatch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/internal/watchguard"
)

// OwnerIndex indexes every informer's objects by the uid of their
// controller (ByOwner).
const OwnerIndex = "karta-controller-uid"

// DefaultResyncCheck is how often, by default, an informer checks
// whether a handler's resync is due.
const DefaultResyncCheck = time.Minute

// Options configure NewInformers. The zero value gives the defaults.
type Options struct {
	// Probe, Registerer, Logger and Bound are the guard's
	// (watchguard.Options): the server probe a list or watch the server
	// does not answer waits for, where karta_watch_errors_total goes, the
	// log, and how long the server may fail before Err says so.
	Probe      func(ctx context.Context) error
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	Bound      time.Duration
	// ResyncCheck is how often each informer checks whether a handler's
	// resync is due (default DefaultResyncCheck). A handler whose resync
	// is shorter gets it only if it joins before the informer runs.
	ResyncCheck time.Duration
}

// Informers are the informers of one process, one per resource: a
// resource's informer is started by the first Watch of it and stopped
// when the last one stops. Create them with NewInformers and run them
// with Start. They are safe for concurrent use.
type Informers struct {
	dyn         dynamic.Interface
	meta        metadata.Interface
	guard       *watchguard.Guard
	log         *slog.Logger
	resyncCheck time.Duration

	mu sync.Mutex
	// ctx is Start's, nil before it: the informers run under it.
	ctx     context.Context
	entries map[schema.GroupVersionResource]*entry
	// running are the informers' goroutines (and the upgrades'), which
	// Wait waits for.
	running sync.WaitGroup
}

// NewInformers returns the informers of the cluster dyn and meta read:
// whole objects with dyn, metadata with meta (nil: every resource is
// watched whole).
func NewInformers(dyn dynamic.Interface, meta metadata.Interface, opts Options) (*Informers, error) {
	if dyn == nil {
		return nil, errors.New("no dynamic client")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ResyncCheck <= 0 {
		opts.ResyncCheck = DefaultResyncCheck
	}
	g, err := watchguard.New(watchguard.Options{Probe: opts.Probe, Logger: opts.Logger, Registerer: opts.Registerer, Bound: opts.Bound})
	if err != nil {
		return nil, err
	}
	return &Informers{dyn: dyn, meta: meta, guard: g, log: opts.Logger, resyncCheck: opts.ResyncCheck,
		entries: map[schema.GroupVersionResource]*entry{}}, nil
}

// Start runs the informers of the watches made before, and of those made
// later, until ctx ends. It returns at once; only its first call counts.
func (f *Informers) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx != nil {
		return
	}
	f.ctx = ctx
	for _, e := range f.entries {
		f.run(e)
	}
}

// Wait waits until every informer started has stopped (Start's context
// ended), so that a caller may tear down what they use (klog's logger).
func (f *Informers) Wait() { f.running.Wait() }

// Err is nil while the API server answers the informers' lists and
// watches, or has not for less than Options.Bound; else a
// *watchguard.UnreachableError naming the resources.
func (f *Informers) Err() error { return f.guard.Err() }

// entry is one resource's informer and the watches that share it.
type entry struct {
	gvr    schema.GroupVersionResource
	whole  bool
	inf    cache.SharedIndexInformer
	cancel context.CancelFunc // nil until it runs
	// failed is the last error that ended the informer's list or watch on
	// the server's answer (forbidden, not served); nil while none has.
	failed atomic.Pointer[error]
	users  map[*Watch]cache.ResourceEventHandlerRegistration
}

// binding is the entry a Watch reads and its handler's registration there.
type binding struct {
	e   *entry
	reg cache.ResourceEventHandlerRegistration
}

// Watch is a consumer's watch of one kind: its handler on the resource's
// shared informer, and reads of that informer's cache.
type Watch struct {
	Kind
	f       *Informers
	handler cache.ResourceEventHandler
	resync  time.Duration
	cur     atomic.Pointer[binding]
	stopped atomic.Bool
}

// Watch watches k's resource with h, whole objects or (whole false) their
// metadata at least, h's resync every resync (0: none). The informer is
// shared with every other Watch of the resource.
func (f *Informers) Watch(k Kind, whole bool, resync time.Duration, h cache.ResourceEventHandler) *Watch {
	w := &Watch{Kind: k, f: f, handler: h, resync: resync}
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.entries[k.GVR]
	switch {
	case e == nil:
		e = f.newEntry(k.GVR, whole)
	case whole && !e.whole:
		e = f.upgrade(e)
	}
	w.cur.Store(&binding{e: e, reg: e.add(f, w)})
	f.log.Debug("informer shared", "resource", k.GVR.GroupResource().String(), "whole", e.whole, "watches", len(e.users))
	return w
}

// newEntry makes gvr's informer, run once Start has run; f.mu is held.
func (f *Informers) newEntry(gvr schema.GroupVersionResource, whole bool) *entry {
	whole = whole || f.meta == nil
	e := &entry{gvr: gvr, whole: whole, users: map[*Watch]cache.ResourceEventHandlerRegistration{}}
	o := watchguard.InformerOptions{Resource: gvr, Resync: f.resyncCheck, Failed: func(err error) { e.failed.Store(&err) },
		Indexers: cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, OwnerIndex: controllerUIDIndex}}
	if whole {
		o.Dynamic = f.dyn
	} else {
		o.Metadata = f.meta
	}
	e.inf = f.guard.Informer(o)
	f.entries[gvr] = e
	if f.ctx != nil {
		f.run(e)
	}
	return e
}

// run starts e's informer under f.ctx; f.mu is held.
func (f *Informers) run(e *entry) {
	if e.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(f.ctx)
	e.cancel = cancel
	f.running.Go(func() { e.inf.RunWithContext(ctx) })
}

// add registers w's handler on e's informer; f.mu is held.
func (e *entry) add(f *Informers, w *Watch) cache.ResourceEventHandlerRegistration {
	reg, err := e.inf.AddEventHandlerWithOptions(w.handler, cache.HandlerOptions{ResyncPeriod: &w.resync})
	if err != nil {
		f.log.Error("cannot handle events", "resource", e.gvr.GroupResource().String(), "err", err)
	}
	e.users[w] = reg
	return reg
}

// upgrade replaces old, a metadata informer, by a whole one: its watches
// handle the new one's events at once, and read its cache once it has
// synced, when the old one stops. f.mu is held.
func (f *Informers) upgrade(old *entry) *entry {
	e := f.newEntry(old.gvr, true)
	for w := range old.users {
		e.add(f, w)
	}
	if f.ctx == nil {
		f.swap(old, e) // nothing runs yet
		return e
	}
	ctx := f.ctx
	f.running.Go(func() {
		cache.WaitForCacheSync(ctx.Done(), func() bool { return e.inf.HasSynced() || e.failed.Load() != nil })
		f.mu.Lock()
		defer f.mu.Unlock()
		f.swap(old, e)
	})
	return e
}

// swap moves old's watches onto e and stops old; f.mu is held.
func (f *Informers) swap(old, e *entry) {
	for w, reg := range old.users {
		if r, ok := e.users[w]; ok {
			w.cur.Store(&binding{e: e, reg: r})
		}
		_ = old.inf.RemoveEventHandler(reg)
		delete(old.users, w)
	}
	old.stop()
}

func (e *entry) stop() {
	if e.cancel != nil {
		e.cancel()
	}
}

// Stop removes w's handler; the informer stops with its last watch.
func (w *Watch) Stop() {
	if w == nil || w.stopped.Swap(true) {
		return
	}
	f := w.f
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range []*entry{w.cur.Load().e, f.entries[w.GVR]} {
		if e == nil {
			continue
		}
		reg, ok := e.users[w]
		if !ok {
			continue
		}
		_ = e.inf.RemoveEventHandler(reg)
		delete(e.users, w)
		if len(e.users) == 0 {
			e.stop()
			if f.entries[w.GVR] == e {
				delete(f.entries, w.GVR)
			}
			f.log.Debug("informer stopped", "resource", w.GVR.GroupResource().String())
		}
	}
}

// Synced reports whether w's handler has had the informer's first list.
func (w *Watch) Synced() bool {
	b := w.cur.Load()
	return b.reg != nil && b.reg.HasSynced()
}

// Failed reports whether the informer's list or watch failed on the
// server's answer (forbidden, not served): a caller need not wait for it
// to sync.
func (w *Watch) Failed() bool { return w.Err() != nil }

// Err is the last error that ended the informer's list or watch on the
// server's answer (forbidden, not served), nil while none has.
func (w *Watch) Err() error {
	if err := w.cur.Load().e.failed.Load(); err != nil {
		return *err
	}
	return nil
}

// SyncedOrFailed is Synced or Failed.
func (w *Watch) SyncedOrFailed() bool { return w.Synced() || w.Failed() }

// Get is the cached object namespace/name (name alone for a
// cluster-scoped kind), nil when the cache has none: an
// *unstructured.Unstructured, or a *metav1.PartialObjectMetadata when the
// resource is watched by its metadata only.
func (w *Watch) Get(namespace, name string) any {
	key := name
	if w.Namespaced {
		key = namespace + "/" + name
	}
	obj, ok, err := w.cur.Load().e.inf.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil
	}
	return obj
}

// GetMeta is Get's object's metadata, nil when the cache has none.
func (w *Watch) GetMeta(namespace, name string) metav1.Object {
	m, err := meta.Accessor(w.Get(namespace, name))
	if err != nil {
		return nil
	}
	return m
}

// ByIndex lists the cached objects whose index (cache.NamespaceIndex,
// OwnerIndex) has value.
func (w *Watch) ByIndex(index, value string) []any {
	objs, err := w.cur.Load().e.inf.GetIndexer().ByIndex(index, value)
	if err != nil {
		return nil
	}
	return objs
}

// Keys are the cache keys (namespace/name) of every cached object.
func (w *Watch) Keys() []string { return w.cur.Load().e.inf.GetStore().ListKeys() }

// controllerUIDIndex indexes an object by its controller's uid.
func controllerUIDIndex(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}
