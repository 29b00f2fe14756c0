package interpreter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestGeneratedHooksMatchSource: karta.generated holds the hooks the
// generated source defines (generatedHooks), each a Go function.
func TestGeneratedHooksMatchSource(t *testing.T) {
	for _, name := range []string{"pytorchjob", "jobset", "leaderworkerset", "raycluster"} {
		k := gangKarta(t, name)
		p := progCompile(t, k, Options{})
		sd, err := p.newState()
		require.NoError(t, err)
		var got []string
		sd.generated.ForEach(func(k, v lua.LValue) {
			fn, ok := v.(*lua.LFunction)
			if assert.True(t, ok, "%s: %s", name, k) {
				assert.NotNil(t, fn.GFunction, "%s: %s is Go", name, k)
			}
			got = append(got, k.String())
		})
		sd.L.Close()
		var want []string
		for _, h := range generatedHooks(p.model) {
			want = append(want, string(h))
		}
		assert.ElementsMatch(t, want, got, name)
	}
}

// TestPoolIsLazy: a Program without scripts builds its pool of Lua
// states on the first call that needs a state, not at Compile; its hooks
// never need one. Prewarm builds it at Compile.
func TestPoolIsLazy(t *testing.T) {
	ctx := context.Background()
	obj := progObjFile(t, "testdata/gang/pytorchjob.yaml")[0]

	p := progCompile(t, gangKarta(t, "pytorchjob"), Options{})
	assert.False(t, p.poolBuilt.Load(), "Compile builds no pool")
	assert.Equal(t, int64(0), p.PoolStats().Created)
	_, err := p.InterpretStatus(ctx, obj)
	require.NoError(t, err)
	_, err = p.GetPodSpecs(ctx, obj)
	require.NoError(t, err)
	assert.False(t, p.poolBuilt.Load(), "the hooks ran without a state")

	require.NoError(t, p.WithState(ctx, HookInterpretStatus, func(context.Context, *PooledState) error { return nil }))
	assert.True(t, p.poolBuilt.Load(), "a state was asked for")
	assert.Equal(t, int64(1), p.PoolStats().Created)

	warm := progCompile(t, gangKarta(t, "pytorchjob"), Options{Prewarm: 2, PoolSize: 2})
	assert.True(t, warm.poolBuilt.Load())
	assert.Equal(t, int64(2), warm.PoolStats().Created)
	_, err = Compile(gangKarta(t, "pytorchjob"), Options{Scripts: []Script{{Name: "bad.lua", Source: `function GetPodSpecs(obj`}}})
	assert.Error(t, err, "a script that does not compile fails Compile, with the pool still lazy")
}

// TestPathProgramsCompileForEveryBuiltin: path(EXPR) is compiled on the
// first write (jqPath.pathProgram), not at Compile; for every writable
// path of every built-in it compiles, so deferring it hides no error.
func TestPathProgramsCompileForEveryBuiltin(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "builtin", "kartas", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		p := progCompile(t, progKartaFile(t, f), Options{})
		var paths []*jqPath
		for _, cm := range p.model.comps {
			paths = append(paths, cm.spec, cm.meta, cm.replicas)
			for _, fr := range cm.fragments {
				paths = append(paths, fr.p)
			}
			for _, a := range append(append([]actionModel(nil), cm.suspend...), cm.resume...) {
				paths = append(paths, a.p)
			}
		}
		compiled := 0
		for _, jp := range paths {
			if jp == nil || jp.notAssignable != "" {
				continue
			}
			prog, err := jp.pathProgram()
			require.NoError(t, err, "%s: %s", filepath.Base(f), jp.field)
			require.NotNil(t, prog)
			again, _ := jp.pathProgram()
			assert.Same(t, prog, again, "compiled once")
			compiled++
		}
		assert.Positive(t, compiled, filepath.Base(f))
	}
}
