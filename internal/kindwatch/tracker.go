package kindwatch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/interpreter"
)

// Set is what a consumer watches. It is never modified once stored: a
// change stores a new one, so that hot paths (the pod webhook) read it
// without a lock.
type Set struct {
	// Roots are the workload kinds, Owners the kinds between them and
	// their pods; both by group and kind, as owner references name them
	// (a reference's version need not be the one watched).
	Roots, Owners map[schema.GroupKind]*Watch
	// Pods and Fixed (the gang output's target kinds) are watched for the
	// whole run.
	Pods  *Watch
	Fixed map[schema.GroupKind]*Watch
	// Initial are the roots and owners of the first discovery (nil before
	// it, empty when there were none).
	Initial []*Watch
}

func newSet() *Set {
	return &Set{Roots: map[schema.GroupKind]*Watch{}, Owners: map[schema.GroupKind]*Watch{}, Fixed: map[schema.GroupKind]*Watch{}}
}

func (s *Set) clone() *Set {
	n := newSet()
	n.Pods, n.Initial = s.Pods, s.Initial
	for k, v := range s.Roots {
		n.Roots[k] = v
	}
	for k, v := range s.Owners {
		n.Owners[k] = v
	}
	for k, v := range s.Fixed {
		n.Fixed[k] = v
	}
	return n
}

// Synced reports whether the caches hold the pods, the fixed kinds and
// every kind of the first discovery, or that kind's list failed (a kind
// the consumer may not read does not hold the others back).
func (s *Set) Synced() bool {
	if s.Pods == nil || !s.Pods.Synced() || s.Initial == nil {
		return false
	}
	for _, w := range s.Fixed {
		if !w.Synced() {
			return false
		}
	}
	for _, w := range s.Initial {
		if !w.SyncedOrFailed() {
			return false
		}
	}
	return true
}

// Tracker keeps a consumer's Set in step with the kinds it wants, on the
// process's Informers: Run runs it (its start calls Begin), Update
// changes the kinds, Kick asks for its discovery again.
type Tracker struct {
	informers *Informers
	// own: the informers are the consumer's alone, and End waits for them.
	own  bool
	set  atomic.Pointer[Set]
	mu   sync.Mutex
	ctx  context.Context // Begin's, for the watches made later
	kick chan struct{}
}

// NewTracker returns a Tracker of a consumer that reads whole objects
// with dyn and metadata with meta, maps kinds with mapper and describes
// them with reg: on shared, the process's informers, or when shared is
// nil on informers of its own, made with opts. It fails when a client,
// the mapper or the registry is missing.
func NewTracker(dyn dynamic.Interface, meta metadata.Interface, mapper meta.RESTMapper, reg *interpreter.Registry,
	shared *Informers, opts Options) (*Tracker, error) {
	switch {
	case dyn == nil:
		return nil, errors.New("no dynamic client")
	case meta == nil:
		return nil, errors.New("no metadata client")
	case mapper == nil:
		return nil, errors.New("no REST mapper")
	case reg == nil:
		return nil, errors.New("no registry")
	}
	t := &Tracker{informers: shared, own: shared == nil, kick: make(chan struct{}, 1)}
	if t.own {
		var err error
		if t.informers, err = NewInformers(dyn, meta, opts); err != nil {
			return nil, err
		}
	}
	t.set.Store(newSet())
	return t, nil
}

// Informers are the informers the tracker's watches share.
func (t *Tracker) Informers() *Informers { return t.informers }

// Load is the current Set.
func (t *Tracker) Load() *Set { return t.set.Load() }

// Begin starts the run under ctx (and the informers, when they are the
// consumer's own: shared ones run under their owner's context), and
// stores what fixed adds to the set: the watches of the whole run (Pods,
// Fixed).
func (t *Tracker) Begin(ctx context.Context, fixed func(next *Set)) {
	if t.own {
		t.informers.Start(ctx)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ctx = ctx
	next := t.set.Load().clone()
	fixed(next)
	t.set.Store(next)
}

// Update makes the set's roots and owners the kinds wanted: start makes
// the Watch of a kind not watched yet (root says which map it goes to);
// removed is told of each one no longer wanted, or now of another
// resource (the caller stops it). The first Update's new watches are the
// set's Initial. It returns the set stored, nil when the run has ended.
func (t *Tracker) Update(roots, owners map[schema.GroupKind]Kind, start func(k Kind, root bool) *Watch, removed func(w *Watch, root bool)) *Set {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctx == nil || t.ctx.Err() != nil {
		return nil
	}
	next := t.set.Load().clone()
	added := []*Watch{}
	update := func(have map[schema.GroupKind]*Watch, want map[schema.GroupKind]Kind, root bool) {
		for gk, w := range have {
			if k, ok := want[gk]; !ok || k.GVR != w.GVR {
				delete(have, gk)
				removed(w, root)
			}
		}
		for _, gk := range sortedKinds(want) {
			if _, ok := have[gk]; !ok {
				have[gk] = start(want[gk], root)
				added = append(added, have[gk])
			}
		}
	}
	update(next.Roots, roots, true)
	update(next.Owners, owners, false)
	if next.Initial == nil {
		next.Initial = added
	}
	t.set.Store(next)
	return next
}

// Kick asks Run to discover again now. It does not block.
func (t *Tracker) Kick() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// Run runs a consumer until ctx ends: start makes its first watches
// (Begin, a first Update) and may wait for them; then work runs while
// discover is called every period (reset: ask discovery afresh; 0 or
// less: never) and on each Kick (reset false). Its watches stop when it
// returns (End). An error of start ends it: nil when ctx ended first.
func (t *Tracker) Run(ctx context.Context, period time.Duration, start func(context.Context) error, discover func(reset bool),
	work func(context.Context)) error {
	ctx, cancel := context.WithCancel(ctx)
	// Deferred first, so run last: once the rediscovery has stopped (it
	// starts watches), every watch stops.
	defer t.End()
	defer cancel()
	if err := start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { t.rediscover(ctx, period, discover) })
	work(ctx)
	return nil
}

func (t *Tracker) rediscover(ctx context.Context, period time.Duration, discover func(reset bool)) {
	var tick <-chan time.Time
	if period > 0 {
		tk := time.NewTicker(period)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			discover(true)
		case <-t.kick:
			discover(false)
		}
	}
}

// Ready is nil once the set is synced and while the API server answers
// the informers' lists and watches, or has not for less than their
// bound; else notSynced, or the informers' error.
func (t *Tracker) Ready(notSynced error) error {
	if !t.Load().Synced() {
		return notSynced
	}
	return t.informers.Err()
}

// End stops every watch of the set (their caches keep what they hold),
// and when the informers are the consumer's own, waits until they have
// stopped. Run calls it once Begin's context has ended.
func (t *Tracker) End() {
	t.mu.Lock()
	set := t.set.Load()
	t.mu.Unlock()
	for _, ws := range []map[schema.GroupKind]*Watch{set.Roots, set.Owners, set.Fixed} {
		for _, w := range ws {
			w.Stop()
		}
	}
	set.Pods.Stop()
	if t.own {
		t.informers.Wait()
	}
}

// EachKey calls f with the namespace and name of every object w's cache
// holds.
func EachKey(w *Watch, f func(namespace, name string)) {
	for _, k := range w.Keys() {
		if ns, name, err := cache.SplitMetaNamespaceKey(k); err == nil {
			f(ns, name)
		}
	}
}
