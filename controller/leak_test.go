package controller

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
)

// TestKartaUpdatesDoNotLeakPrograms: a Karta edited a thousand times is
// compiled a thousand times, and every replaced Program is collected with
// its Lua states — the heap comes back to where it was.
func TestKartaUpdatesDoNotLeakPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a thousand Programs")
	}
	f := newFakeCluster(kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0))
	reg := interpreter.NewRegistry()
	startController(t, f, reg, Options{})
	f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	edited := readYAML(t, "examples/kartas/trainjob.yaml")

	update := func(i int) {
		// A new luaScript comment is a new spec: a new Program.
		require.NoError(t, unstructured.SetNestedField(edited.Object, fmt.Sprintf("-- revision %d\n", i), "spec", "luaScript"))
		f.updateSpec(t, "trainjob", edited)
		f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
		p, ok := reg.Get(trainJobGVK)
		require.True(t, ok)
		_, err := p.InterpretStatus(t.Context(), readYAML(t, "examples/tutorial-trainjob/running.yaml"))
		require.NoError(t, err)
		// The fake client records every action it serves; that is the
		// fake's memory, not the controller's.
		f.ClearActions()
	}
	for i := range 50 { // warm up: caches, informer buffers, the first Programs
		update(i)
	}
	before := liveHeap()
	first, _ := reg.Get(trainJobGVK)
	for i := range 1000 {
		update(50 + i)
	}
	last, _ := reg.Get(trainJobGVK)
	require.NotSame(t, first, last, "every update compiled a new Program")
	first, last = nil, nil
	after := liveHeap()
	// A Program with its states is a few hundred KiB: a thousand leaked
	// would be hundreds of MiB.
	assert.Less(t, after, before+16<<20, "live heap %d MiB → %d MiB after 1000 updates", before>>20, after>>20)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
