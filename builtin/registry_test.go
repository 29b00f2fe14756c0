package builtin

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

// TestIndexMatchesLoad: the index's peek at each file gives the name and
// GVK the full load gives, so lookups by GVK never load the wrong file.
func TestIndexMatchesLoad(t *testing.T) {
	idx, err := readIndex()
	require.NoError(t, err)
	require.NotEmpty(t, idx)
	for _, x := range idx {
		b, err := x.load()
		require.NoError(t, err, x.file)
		assert.Equal(t, b.Karta.Name, x.name, x.file)
		assert.Equal(t, b.Karta.Spec.StructureDefinition.RootComponent.Kind.GVK(), x.gvk, x.file)
	}
}

// TestRegistryIsLazy: asking for one kind loads and compiles that one.
func TestRegistryIsLazy(t *testing.T) {
	idx, err := readIndex()
	require.NoError(t, err)
	r, err := registryFrom(idx, interpreter.Options{PoolSize: 1})
	require.NoError(t, err)
	require.Len(t, r.Entries(), len(idx))
	assert.Empty(t, r.Compiled(), "registering compiles nothing")
	for _, x := range idx {
		assert.Nil(t, x.b, "registering loads nothing: %s", x.name)
	}
	p, ok := r.Get(pytorchJobGVK)
	require.True(t, ok)
	assert.Equal(t, "pytorchjob", p.Name())
	assert.Equal(t, []*interpreter.Program{p}, r.Compiled())
	loaded := 0
	for _, x := range idx {
		if x.b != nil {
			loaded++
		}
	}
	assert.Equal(t, 1, loaded, "only the kind asked for is loaded")
	require.NoError(t, r.CompileAll())
	assert.Len(t, r.Compiled(), len(idx))
}

var pytorchJobGVK = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}

// BenchmarkRegistry measures what a process pays for the catalog:
// first-answer is a fresh process's first InterpretStatus of one kind
// (index, lazy registry, load and compile of that kind, the call) against
// the eager baseline that loads and compiles every built-in first;
// compile-all compiles the whole catalog. Both paths must give the same
// status.
func BenchmarkRegistry(b *testing.B) {
	data, err := os.ReadFile("../examples/pytorchjob/running.yaml")
	require.NoError(b, err)
	docs, err := object.Decode(data, "running.yaml")
	require.NoError(b, err)
	obj := &unstructured.Unstructured{Object: object.Items(docs)[0]}
	ctx := context.Background()
	opts := interpreter.Options{PoolSize: 1}
	lazy := func() string {
		idx, err := readIndex()
		require.NoError(b, err)
		r, err := registryFrom(idx, opts)
		require.NoError(b, err)
		p, ok := r.Get(pytorchJobGVK)
		require.True(b, ok)
		st, err := p.InterpretStatus(ctx, obj)
		require.NoError(b, err)
		return string(st.Status)
	}
	eager := func() string {
		idx, err := readIndex()
		require.NoError(b, err)
		r := interpreter.NewRegistry()
		for _, x := range idx {
			bi, err := x.load()
			require.NoError(b, err)
			p, err := bi.Compile(opts)
			require.NoError(b, err)
			r.Put(p)
		}
		p, ok := r.Get(pytorchJobGVK)
		require.True(b, ok)
		st, err := p.InterpretStatus(ctx, obj)
		require.NoError(b, err)
		return string(st.Status)
	}
	require.Equal(b, eager(), lazy(), "the lazy registry answers as the eager one")
	b.Run("first-answer/karta", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			lazy()
		}
	})
	b.Run("first-answer/eager", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			eager()
		}
	})
	b.Run("compile-all", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			idx, err := readIndex()
			require.NoError(b, err)
			r, err := registryFrom(idx, opts)
			require.NoError(b, err)
			require.NoError(b, r.CompileAll())
		}
	})
}
