package isolation

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/corpus"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// busyPIDs are the process ids of the Program's workers running a call.
func (ip *Program) busyPIDs() []int {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	var busy []int
	for w := range ip.busy {
		busy = append(busy, w.cmd.Process.Pid)
	}
	return busy
}

// pytorchKarta is the built-in PyTorchJob Karta, with luaScript as its
// spec.luaScript when not "".
func pytorchKarta(t testing.TB, luaScript string) *karta.Karta {
	t.Helper()
	b, ok, err := builtin.Get("pytorchjob")
	require.NoError(t, err)
	require.True(t, ok)
	k := b.Karta.DeepCopy()
	k.Spec.LuaScript = luaScript
	return k
}

// compile compiles k in process with opts.
func compile(t testing.TB, k *karta.Karta, opts interpreter.Options) *interpreter.Program {
	t.Helper()
	p, err := interpreter.Compile(k, opts)
	require.NoError(t, err)
	return p
}

// example reads examples/pytorchjob/FILE's objects.
func example(t testing.TB, file string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := corpus.LoadObjects(filepath.Join("..", "examples", "pytorchjob", file))
	require.NoError(t, err)
	return objs
}

// pytorchRevisions reads examples/pytorchjob/revisions.yaml.
func pytorchRevisions(t testing.TB) []interpreter.Revision {
	t.Helper()
	ws, err := corpus.LoadWorkloads(filepath.Join("..", "examples"))
	require.NoError(t, err)
	for _, w := range ws {
		if w.Name == "pytorchjob" {
			return w.Revisions
		}
	}
	t.Fatal("no pytorchjob workload")
	return nil
}

// supervisor is a Supervisor under opts, closed when the test ends.
func supervisor(t testing.TB, opts Options) *Supervisor {
	t.Helper()
	s, err := NewSupervisor(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// bounded is a context that ends a test's call after d at most.
func bounded(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
