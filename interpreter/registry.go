package interpreter

import (
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Registry answers "which Program interprets this GVK". Reads take no lock
// (a copy-on-write map behind an atomic pointer), so the hot path scales
// with cores; a Put replaces a Program atomically: calls in flight finish
// on the old one, later lookups see the new one.
type Registry struct {
	mu   sync.Mutex // serialises writers
	byGV atomic.Pointer[map[schema.GroupVersionKind]*Program]
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	r := &Registry{}
	m := map[schema.GroupVersionKind]*Program{}
	r.byGV.Store(&m)
	return r
}

// Put registers p for its GVK and returns the Program it replaced, if any.
// Calls in flight finish on the old one; once nothing refers to it, it is
// collected with its Lua states (a Program has nothing to close).
func (r *Registry) Put(p *Program) *Program {
	return r.update(p.GVK(), p)
}

// Delete forgets the Program of a GVK and returns it.
func (r *Registry) Delete(gvk schema.GroupVersionKind) *Program {
	return r.update(gvk, nil)
}

func (r *Registry) update(gvk schema.GroupVersionKind, p *Program) *Program {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := *r.byGV.Load()
	next := make(map[schema.GroupVersionKind]*Program, len(cur)+1)
	for k, v := range cur {
		next[k] = v
	}
	old := next[gvk]
	if p == nil {
		delete(next, gvk)
	} else {
		next[gvk] = p
	}
	r.byGV.Store(&next)
	return old
}

// Get returns the Program registered for a GVK.
func (r *Registry) Get(gvk schema.GroupVersionKind) (*Program, bool) {
	p, ok := (*r.byGV.Load())[gvk]
	return p, ok
}

// ByName returns the Program whose Karta has the given name.
func (r *Registry) ByName(name string) (*Program, bool) {
	for _, p := range *r.byGV.Load() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// List returns every registered Program, sorted by name.
func (r *Registry) List() []*Program {
	m := *r.byGV.Load()
	out := make([]*Program, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}
