package interpreter

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Registry answers "which Program interprets this GVK". Reads take no lock
// (a copy-on-write map behind an atomic pointer), so the hot path scales
// with cores; a Put replaces a Program atomically: calls in flight finish
// on the old one, later lookups see the new one.
//
// An entry may be lazy (PutLazy): it knows its Karta's name and GVK and
// compiles its Program on first use, once, so that a process that asks for
// one kind of a large catalog pays for that one. Entries lists what is
// registered without compiling anything.
type Registry struct {
	mu   sync.Mutex // serialises writers
	byGV atomic.Pointer[map[schema.GroupVersionKind]*entry]
}

// Entry is what a Registry knows of a registered Karta without compiling
// it.
type Entry struct {
	Name string
	GVK  schema.GroupVersionKind
}

// entry is one registration: a compiled Program, or a compile function
// run on first use. Entries are shared between a Registry and its clones,
// so a Program compiled through one is compiled for all.
type entry struct {
	Entry
	once    sync.Once
	done    atomic.Bool // once has run: p and err are final
	compile func() (*Program, error)
	p       *Program
	err     error
}

func (e *entry) program() (*Program, error) {
	e.once.Do(func() {
		if e.compile != nil {
			e.p, e.err = e.compile()
			if e.err == nil && (e.p.Name() != e.Name || e.p.GVK() != e.GVK) {
				e.p, e.err = nil, fmt.Errorf("registry entry %q for %s compiled to Karta %q for %s", e.Name, e.GVK, e.p.Name(), e.p.GVK())
			}
			e.compile = nil
		}
		e.done.Store(true)
	})
	return e.p, e.err
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	r := &Registry{}
	m := map[schema.GroupVersionKind]*entry{}
	r.byGV.Store(&m)
	return r
}

// Put registers p for its GVK and returns the Program it replaced, if any
// (nil too when the replaced entry was lazy and never compiled). Calls in
// flight finish on the old one; once nothing refers to it, it is collected
// with its Lua states (a Program has nothing to close).
func (r *Registry) Put(p *Program) *Program {
	e := &entry{Entry: Entry{Name: p.Name(), GVK: p.GVK()}, p: p}
	e.program() // no compile function: marks the entry done
	old := r.update(e.GVK, e)
	if old == nil {
		return nil
	}
	return old.compiled()
}

// PutLazy registers the Karta name for gvk, to be compiled by compile on
// first use (Get, Lookup, ByName, List); it reports whether it replaced an
// entry. compile must return a Program of that name and GVK.
func (r *Registry) PutLazy(gvk schema.GroupVersionKind, name string, compile func() (*Program, error)) bool {
	return r.update(gvk, &entry{Entry: Entry{Name: name, GVK: gvk}, compile: compile}) != nil
}

// compiled is the entry's Program if it has been compiled, without
// compiling it.
func (e *entry) compiled() *Program {
	if e.done.Load() {
		return e.p
	}
	return nil
}

// Delete forgets the Program of a GVK and returns it (nil when it was
// lazy and never compiled).
func (r *Registry) Delete(gvk schema.GroupVersionKind) *Program {
	old := r.update(gvk, nil)
	if old == nil {
		return nil
	}
	return old.compiled()
}

func (r *Registry) update(gvk schema.GroupVersionKind, e *entry) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := *r.byGV.Load()
	next := make(map[schema.GroupVersionKind]*entry, len(cur)+1)
	for k, v := range cur {
		next[k] = v
	}
	old := next[gvk]
	if e == nil {
		delete(next, gvk)
	} else {
		next[gvk] = e
	}
	r.byGV.Store(&next)
	return old
}

// Lookup returns the Program registered for a GVK, compiling a lazy entry
// first; nil and no error when nothing is registered for it. The error is
// the entry's compilation's, the same on every call.
func (r *Registry) Lookup(gvk schema.GroupVersionKind) (*Program, error) {
	e := (*r.byGV.Load())[gvk]
	if e == nil {
		return nil, nil
	}
	return e.program()
}

// Get returns the Program registered for a GVK; false when there is none
// or its lazy compilation failed (Lookup says why).
func (r *Registry) Get(gvk schema.GroupVersionKind) (*Program, bool) {
	p, err := r.Lookup(gvk)
	return p, err == nil && p != nil
}

// LookupName returns the Program whose Karta has the given name, compiling
// it first if it is lazy; nil and no error when there is none.
func (r *Registry) LookupName(name string) (*Program, error) {
	for _, e := range *r.byGV.Load() {
		if e.Name == name {
			return e.program()
		}
	}
	return nil, nil
}

// ByName returns the Program whose Karta has the given name; false when
// there is none or its lazy compilation failed (LookupName says why).
func (r *Registry) ByName(name string) (*Program, bool) {
	p, err := r.LookupName(name)
	return p, err == nil && p != nil
}

// Entries lists what is registered, sorted by name, compiling nothing.
func (r *Registry) Entries() []Entry {
	m := *r.byGV.Load()
	out := make([]Entry, 0, len(m))
	for _, e := range m {
		out = append(out, e.Entry)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Len is the number of entries.
func (r *Registry) Len() int { return len(*r.byGV.Load()) }

// List returns every registered Program, sorted by name, compiling the
// lazy ones; an entry whose compilation fails is left out (CompileAll
// reports it).
func (r *Registry) List() []*Program {
	m := *r.byGV.Load()
	out := make([]*Program, 0, len(m))
	for _, e := range m {
		if p, err := e.program(); err == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Compiled returns the Programs compiled so far, sorted by name, compiling
// nothing (for statistics that must not compile a catalog to report it).
func (r *Registry) Compiled() []*Program {
	var out []*Program
	for _, e := range *r.byGV.Load() {
		if p := e.compiled(); p != nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// CompileAll compiles every lazy entry now and returns the first error in
// name order, for a process that would rather fail at start than on first
// use.
func (r *Registry) CompileAll() error {
	for _, en := range r.Entries() {
		if _, err := r.Lookup(en.GVK); err != nil {
			return err
		}
	}
	return nil
}

// Clone returns a Registry with the same entries; later Puts to either do
// not show in the other, but a lazy entry compiled through one is compiled
// for both.
func (r *Registry) Clone() *Registry {
	c := &Registry{}
	m := make(map[schema.GroupVersionKind]*entry, r.Len())
	for k, v := range *r.byGV.Load() {
		m[k] = v
	}
	c.byGV.Store(&m)
	return c
}
