package interpreter

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRegistry(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}
	a := &Program{name: "a", gvk: gvk}
	b := &Program{name: "b", gvk: gvk}
	c := &Program{name: "c", gvk: schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayJob"}}
	r := NewRegistry()
	assert.Nil(t, r.Put(a))
	assert.Nil(t, r.Put(c))
	got, ok := r.Get(gvk)
	require.True(t, ok)
	assert.Same(t, a, got)
	assert.Same(t, a, r.Put(b), "Put returns the Program it replaced")
	got, _ = r.Get(gvk)
	assert.Same(t, b, got)
	byName, ok := r.ByName("c")
	require.True(t, ok)
	assert.Same(t, c, byName)
	assert.Equal(t, []*Program{b, c}, r.List())
	assert.Same(t, b, r.Delete(gvk))
	_, ok = r.Get(gvk)
	assert.False(t, ok)
}

// TestRegistryConcurrentSwap hammers reads while writers swap Programs: a
// reader always sees one whole Program, never a torn state (run with -race).
func TestRegistryConcurrentSwap(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "x", Version: "v1", Kind: "X"}
	progs := []*Program{{name: "p0", gvk: gvk}, {name: "p1", gvk: gvk}}
	r := NewRegistry()
	r.Put(progs[0])
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				r.Put(progs[(i+w)%2])
			}
		}(w)
	}
	for rd := 0; rd < 8; rd++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				p, ok := r.Get(gvk)
				if !ok || (p != progs[0] && p != progs[1]) {
					t.Errorf("torn read: %v %v", p, ok)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestRegistryLazy: a lazy entry is listed without compiling, compiles
// once on first use (shared with clones), and reports its error on every
// lookup.
func TestRegistryLazy(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}
	bad := schema.GroupVersionKind{Group: "x", Version: "v1", Kind: "Broken"}
	wrong := schema.GroupVersionKind{Group: "x", Version: "v1", Kind: "Wrong"}
	calls := 0
	p := &Program{name: "pytorchjob", gvk: gvk}
	r := NewRegistry()
	assert.False(t, r.PutLazy(gvk, "pytorchjob", func() (*Program, error) { calls++; return p, nil }))
	r.PutLazy(bad, "broken", func() (*Program, error) { return nil, assert.AnError })
	r.PutLazy(wrong, "wrong", func() (*Program, error) { return p, nil })
	assert.Equal(t, []Entry{{Name: "broken", GVK: bad}, {Name: "pytorchjob", GVK: gvk}, {Name: "wrong", GVK: wrong}}, r.Entries())
	assert.Equal(t, 3, r.Len())
	assert.Empty(t, r.Compiled())
	assert.Equal(t, 0, calls, "listing compiles nothing")

	c := r.Clone()
	got, ok := c.Get(gvk)
	require.True(t, ok)
	assert.Same(t, p, got)
	got, ok = r.ByName("pytorchjob")
	require.True(t, ok)
	assert.Same(t, p, got)
	assert.Equal(t, 1, calls, "compiled once, for the registry and its clone")
	assert.Equal(t, []*Program{p}, r.Compiled())

	_, err := r.Lookup(bad)
	assert.ErrorIs(t, err, assert.AnError)
	_, ok = r.Get(bad)
	assert.False(t, ok, "a failed compilation is not a Program")
	_, err = r.Lookup(wrong)
	assert.ErrorContains(t, err, `registry entry "wrong" for x/v1, Kind=Wrong compiled to Karta "pytorchjob"`)
	assert.ErrorIs(t, r.CompileAll(), assert.AnError)
	assert.Equal(t, []*Program{p}, r.List(), "List leaves out what does not compile")

	missing, err := r.Lookup(schema.GroupVersionKind{Kind: "None"})
	assert.NoError(t, err)
	assert.Nil(t, missing)

	// Replacing a lazy entry that never compiled returns no Program.
	never := schema.GroupVersionKind{Group: "y", Version: "v1", Kind: "Never"}
	r.PutLazy(never, "never", func() (*Program, error) { t.Fatal("must not compile"); return nil, nil })
	assert.Nil(t, r.Put(&Program{name: "never", gvk: never}))
}
