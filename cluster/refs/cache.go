package refs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/internal/kindwatch"
	"github.com/kartalua/karta/interpreter"
)

// Options configure New. The zero value gives the defaults.
type Options struct {
	// ServerProbe asks the API server whether it answers (the controller
	// passes watchguard.ReadyzProbe: GET /readyz): a list or watch of a
	// referenced kind that the server did not answer waits for it and is
	// retried at once, as the process's other informers' (nil: retried
	// after a short delay).
	ServerProbe func(context.Context) error
	// Registerer, when set, gets the watches' metrics
	// (karta_watch_errors_total, karta_watch_failing), shared with the
	// process's other informers of the same Registerer.
	Registerer prometheus.Registerer
	// Logger receives the Cache's log records (default: none).
	Logger *slog.Logger
	// WatchFailureBound is how long the server may leave a referenced
	// kind's list or watch unanswered before Ready fails (default
	// watchguard.DefaultBound).
	WatchFailureBound time.Duration
	// Informers, when set, are the process's informers, shared with its
	// other watchers of the same cluster (the gang output, the metrics
	// exporter): one informer per resource. They guard their lists and
	// watches with their own probe, bound and Registerer (ServerProbe and
	// WatchFailureBound are then unused; Ready reports their resources'
	// failures), and run under the context of their Start. Nil: the
	// Cache's own.
	Informers *Informers
}

// Informers are the informers of a process, one per resource, which the
// references cache, the gang output and the metrics exporter of one
// cluster share (Options.Informers).
type Informers = kindwatch.Informers

// Cache is an interpreter.Resolver backed by informers. Create it with
// New, say which kinds to watch with Watch or WatchRegistry (before or
// after Start) and start it with Start. It is safe for concurrent use.
type Cache struct {
	mapper    meta.RESTMapper
	informers *kindwatch.Informers
	// own: the informers are the Cache's alone, run under Start's context.
	own bool
	log *slog.Logger

	// kinds are the watched kinds, read without a lock on the hot path
	// (Resolve), replaced whole under mu.
	kinds atomic.Pointer[map[schema.GroupVersionKind]*kindCache]

	mu sync.Mutex
	// ctx is Start's, nil before it: the informers run under it.
	ctx context.Context

	// handlers are told of every change of a referenced object; apart
	// from mu, which Watch holds while it asks discovery.
	handlersMu sync.Mutex
	handlers   []func(schema.GroupVersionKind, *unstructured.Unstructured)
}

var _ interpreter.Resolver = (*Cache)(nil)

// kindCache is one watched kind: its informer once started, or why it
// cannot be watched.
type kindCache struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
	// unserved is set when the cluster does not serve the kind (or
	// discovery failed): there is no informer.
	unserved error
	// undiscovered: discovery failed (the server did not answer), which
	// says nothing of whether the kind is served; Watch maps it again.
	undiscovered bool
	// w is the kind's watch once started, on the process's informers.
	w *kindwatch.Watch
}

// New returns a Cache that reads with dyn and maps kinds to resources with
// mapper.
func New(dyn dynamic.Interface, mapper meta.RESTMapper, opts Options) (*Cache, error) {
	if dyn == nil || mapper == nil {
		return nil, errors.New("references cache: no dynamic client or REST mapper")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Cache{mapper: mapper, informers: opts.Informers, own: opts.Informers == nil, log: opts.Logger}
	if c.own {
		var err error
		if c.informers, err = kindwatch.NewInformers(dyn, nil, kindwatch.Options{Probe: opts.ServerProbe, Logger: opts.Logger,
			Registerer: opts.Registerer, Bound: opts.WatchFailureBound}); err != nil {
			return nil, fmt.Errorf("references cache: %w", err)
		}
	}
	c.kinds.Store(&map[schema.GroupVersionKind]*kindCache{})
	return c, nil
}

// OnChange registers f, called (from the informers' goroutines: keep it
// short) with every referenced object that is added, changed or deleted
// once its kind's first list is in.
func (c *Cache) OnChange(f func(schema.GroupVersionKind, *unstructured.Unstructured)) {
	c.handlersMu.Lock()
	defer c.handlersMu.Unlock()
	c.handlers = append(c.handlers, f)
}

// Start runs the informers of the watched kinds, and of those Watch adds
// later, until ctx ends. It returns at once.
func (c *Cache) Start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx != nil {
		return
	}
	c.ctx = ctx
	if c.own {
		c.informers.Start(ctx)
	}
	// The kinds Watch added before are published, read without a lock
	// (Resolve, HasSynced): each gets its informer in a new kindCache,
	// and the map is replaced whole, as Watch does.
	cur := *c.kinds.Load()
	next := make(map[schema.GroupVersionKind]*kindCache, len(cur))
	for gvk, k := range cur {
		if k.unserved == nil && k.w == nil {
			k = &kindCache{gvk: k.gvk, gvr: k.gvr, namespaced: k.namespaced}
			c.run(k)
		}
		next[gvk] = k
	}
	c.kinds.Store(&next)
}

// WatchRegistry watches the kinds the registry's Kartas reference
// (referencedKinds) and no others.
func (c *Cache) WatchRegistry(reg *interpreter.Registry) {
	c.Watch(referencedKinds(reg))
}

// referencedKinds are the kinds the references of the registry's Kartas
// name, sorted (compiling the registry's lazy entries, as every live
// consumer does to know its kinds).
func referencedKinds(reg *interpreter.Registry) []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, p := range reg.List() {
		for _, r := range p.Karta().Spec.References {
			if gvk := r.Kind.GVK(); !seen[gvk] {
				seen[gvk] = true
				out = append(out, gvk)
			}
		}
	}
	slices.SortFunc(out, compareGVK)
	return out
}

func compareGVK(a, b schema.GroupVersionKind) int {
	if c := cmpString(a.Group, b.Group); c != 0 {
		return c
	}
	if c := cmpString(a.Kind, b.Kind); c != 0 {
		return c
	}
	return cmpString(a.Version, b.Version)
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Watch makes kinds the watched kinds: the new ones are mapped to their
// resources and their informers started (once Start has run), those no
// longer given are stopped and their stores dropped. Mapping may ask
// discovery: call it off a hook's path.
func (c *Cache) Watch(kinds []schema.GroupVersionKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := *c.kinds.Load()
	next := make(map[schema.GroupVersionKind]*kindCache, len(kinds))
	for _, gvk := range kinds {
		if k, ok := cur[gvk]; ok && k.unserved == nil {
			next[gvk] = k
			continue
		}
		k := c.mapKind(gvk, cur[gvk]) // an unserved kind is mapped again: its CRD may be installed now
		next[gvk] = k
		if c.ctx != nil {
			c.run(k)
		}
	}
	for gvk, k := range cur {
		if _, ok := next[gvk]; !ok {
			k.w.Stop()
			c.log.Info("references: no longer watching", "kind", gvk.String())
		}
	}
	c.kinds.Store(&next)
}

// Kinds are the watched kinds, sorted.
func (c *Cache) Kinds() []schema.GroupVersionKind {
	m := *c.kinds.Load()
	out := make([]schema.GroupVersionKind, 0, len(m))
	for gvk := range m {
		out = append(out, gvk)
	}
	slices.SortFunc(out, compareGVK)
	return out
}

// mapKind maps gvk to its resource; a kind the cluster does not serve is
// kept with the reason, so that Resolve says it, and logged unless prev,
// its last mapping, failed the same way (a kind mapped again every few
// seconds while discovery fails). A discovery that fails for a kind the
// cluster said it does not serve keeps that answer: a passing outage
// does not make Ready fail before its bound.
func (c *Cache) mapKind(gvk schema.GroupVersionKind, prev *kindCache) *kindCache {
	k := &kindCache{gvk: gvk}
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if r, ok := c.mapper.(meta.ResettableRESTMapper); ok && meta.IsNoMatchError(err) {
		// Discovery may predate the kind's CRD: ask it afresh once.
		r.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	switch {
	case meta.IsNoMatchError(err):
		k.unserved = fmt.Errorf("the cluster does not serve %s", gvk)
	case err != nil:
		k.unserved, k.undiscovered = fmt.Errorf("discovering %s: %w", gvk, err), true
	default:
		k.gvr, k.namespaced = m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace
	}
	if k.undiscovered && prev != nil && prev.unserved != nil && !prev.undiscovered {
		return prev // the server did not answer now: its last answer (not served) stands
	}
	if k.unserved != nil && (prev == nil || prev.unserved == nil || prev.unserved.Error() != k.unserved.Error()) {
		c.log.Warn("references: cannot watch a referenced kind", "kind", gvk.String(), "err", k.unserved)
	}
	return k
}

// run starts k's watch; c.mu is held and Start has run.
func (c *Cache) run(k *kindCache) {
	if k.unserved != nil || k.w != nil {
		return
	}
	k.w = c.informers.Watch(kindwatch.Kind{GVK: k.gvk, GVR: k.gvr, Namespaced: k.namespaced}, true, 0, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.changed(k, obj) },
		UpdateFunc: func(_, obj any) { c.changed(k, obj) },
		DeleteFunc: func(obj any) { c.changed(k, obj) },
	})
	c.log.Info("references: watching", "resource", k.gvr.GroupResource().String(), "kind", k.gvk.String())
}

// changed tells the handlers of a change of k's objects.
func (c *Cache) changed(k *kindCache, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	c.handlersMu.Lock()
	handlers := c.handlers
	c.handlersMu.Unlock()
	for _, f := range handlers {
		f(k.gvk, u)
	}
}

// HasSynced reports whether every watched kind's first list is in, or
// failed (forbidden, not served: its references are absent, with a
// warning, and it does not hold the others back).
func (c *Cache) HasSynced() bool {
	for _, k := range *c.kinds.Load() {
		if k.unserved == nil && (k.w == nil || !k.w.SyncedOrFailed()) {
			return false
		}
	}
	return true
}

// Ready is nil while the API server answers the lists and watches of the
// referenced kinds, or has not for less than Options.WatchFailureBound,
// once discovery has mapped every kind (served or not) and their first
// lists are in (HasSynced); else it says why not, for a readiness probe:
// a *watchguard.UnreachableError naming the kinds' resources, the
// discovery errors, or ErrNotSynced.
func (c *Cache) Ready() error {
	if err := c.informers.Err(); err != nil {
		return fmt.Errorf("references: %w", err)
	}
	var undiscovered []error
	for _, gvk := range c.Kinds() {
		if k := (*c.kinds.Load())[gvk]; k != nil && k.undiscovered {
			undiscovered = append(undiscovered, k.unserved)
		}
	}
	if len(undiscovered) > 0 {
		return fmt.Errorf("references: %w", errors.Join(undiscovered...))
	}
	if !c.HasSynced() {
		return ErrNotSynced
	}
	return nil
}

// DiscoveryFailed reports whether discovery failed for a watched kind
// (the server did not answer when Watch mapped it): its references are
// absent until a later Watch maps it, which a caller then calls sooner.
func (c *Cache) DiscoveryFailed() bool {
	for _, k := range *c.kinds.Load() {
		if k.undiscovered {
			return true
		}
	}
	return false
}

// ErrNotSynced is Ready's error before the first lists of the referenced
// kinds are in.
var ErrNotSynced = errors.New("the caches of the referenced kinds are not synced yet")

// WaitForSync waits until HasSynced, or ctx ends (false).
func (c *Cache) WaitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), c.HasSynced)
}
