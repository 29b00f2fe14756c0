package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/refs"
	"github.com/kartalua/karta/interpreter"
)

// rewatchPeriod is how often a long-running command sets the references'
// watches from its registry again, besides each registry change: a kind
// whose CRD was installed since is then watched. rediscoverPeriod is how
// often while discovery fails for a kind (the API server down at start).
const (
	rewatchPeriod    = time.Minute
	rediscoverPeriod = 2 * time.Second
)

// liveReferences is the references cache of a long-running command
// (controller, serve): it watches what the registry's Kartas reference,
// again after each registry change and every rewatchPeriod.
type liveReferences struct {
	cache *refs.Cache
	reg   *interpreter.Registry
	kick  chan struct{}
}

func newLiveReferences(dyn dynamic.Interface, mapper meta.RESTMapper, reg *interpreter.Registry, opts refs.Options) (*liveReferences, error) {
	c, err := refs.New(dyn, mapper, opts)
	if err != nil {
		return nil, err
	}
	return &liveReferences{cache: c, reg: reg, kick: make(chan struct{}, 1)}, nil
}

// run starts the cache's informers and keeps its watches in step with
// the registry until ctx ends.
func (l *liveReferences) run(ctx context.Context) {
	l.cache.WatchRegistry(l.reg)
	l.cache.Start(ctx)
	for {
		wait := rewatchPeriod
		if l.cache.DiscoveryFailed() {
			wait = rediscoverPeriod
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-l.kick:
		case <-t.C:
		}
		t.Stop()
		l.cache.WatchRegistry(l.reg)
	}
}

// ready is the cache's readiness (refs.Cache.Ready), for /readyz: nil
// without a cache.
func (l *liveReferences) ready() error {
	if l == nil {
		return nil
	}
	return l.cache.Ready()
}

// resolver is the cache as the webhook's resolver: nil without one.
func (l *liveReferences) resolver() interpreter.Resolver {
	if l == nil {
		return nil
	}
	return l.cache
}

// changed asks for the watches to be set again (a Karta changed); it does
// not block.
func (l *liveReferences) changed() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// syncedReferences is a references cache of c for the kinds the Programs
// reference, started under ctx and synced: a one-shot command (get,
// describe, --live) waits for it once rather than answer with the
// references absent. Nil when no Program references anything.
func syncedReferences(ctx context.Context, c *cluster.Client, progs ...*interpreter.Program) (*refs.Cache, error) {
	reg := interpreter.NewRegistry()
	for _, p := range progs {
		if p != nil && p.HasReferences() {
			reg.Put(p)
		}
	}
	if reg.Len() == 0 {
		return nil, nil
	}
	cache, err := refs.New(c.Dynamic, c.Mapper, refs.Options{})
	if err != nil {
		return nil, err
	}
	cache.WatchRegistry(reg)
	cache.Start(ctx)
	if !cache.WaitForSync(ctx) {
		return nil, ctx.Err()
	}
	return cache, nil
}

// withReferenceWarnings returns ctx carrying r for the hooks, whose
// unresolved references are printed once each as warnings.
func withReferenceWarnings(ctx context.Context, s streams, r interpreter.Resolver) context.Context {
	var mu sync.Mutex
	seen := map[string]bool{}
	warn := warner(s)
	return interpreter.WithResolver(ctx, r, func(w interpreter.ReferenceWarning) {
		mu.Lock()
		defer mu.Unlock()
		if line := w.String(); !seen[line] {
			seen[line] = true
			warn(line)
		}
	})
}

// resolverOrNil is r as an interpreter.Resolver: nil (not a typed nil
// pointer) when there is none, so that the references are told absent
// for want of a resolver.
func resolverOrNil(r *refs.Cache) interpreter.Resolver {
	if r == nil {
		return nil
	}
	return r
}

// referencingKartas names the registry's compiled Kartas that declare
// references (the lazy built-ins are not compiled to tell).
func referencingKartas(reg *interpreter.Registry) []string {
	var out []string
	for _, p := range reg.Compiled() {
		if p.HasReferences() {
			out = append(out, fmt.Sprintf("%s (%s)", p.Name(), p.GVK().Kind))
		}
	}
	return out
}
