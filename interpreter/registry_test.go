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
