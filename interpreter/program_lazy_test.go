package interpreter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGeneratedHooksMatchCodegen: the hooks Compile enables without
// generating the chunk are the ones the chunk defines.
func TestGeneratedHooksMatchCodegen(t *testing.T) {
	for _, name := range []string{"pytorchjob", "jobset", "leaderworkerset", "raycluster"} {
		k := gangKarta(t, name)
		p := progCompile(t, k, Options{})
		require.NoError(t, p.buildLua())
		assert.Equal(t, p.gen.hooks, generatedHooks(p.model), name)
	}
}

// TestLuaSideIsLazy: a Program without scripts builds its Lua side on the
// first call that needs a state, not at Compile; hooks that run direct
// never need it. Prewarm builds it at Compile.
func TestLuaSideIsLazy(t *testing.T) {
	ctx := context.Background()
	obj := progObjFile(t, "testdata/gang/pytorchjob.yaml")[0]

	p := progCompile(t, gangKarta(t, "pytorchjob"), Options{})
	assert.False(t, p.luaBuilt.Load(), "Compile builds no Lua")
	assert.Equal(t, int64(0), p.PoolStats().Created)
	st, err := p.InterpretStatus(ctx, obj)
	require.NoError(t, err)
	assert.False(t, p.luaBuilt.Load(), "InterpretStatus ran direct")

	p.noDirect = true
	st2, err := p.InterpretStatus(ctx, obj)
	require.NoError(t, err)
	assert.True(t, p.luaBuilt.Load(), "the Lua path built it")
	assert.Equal(t, st, st2)
	assert.Equal(t, int64(1), p.PoolStats().Created)

	warm := progCompile(t, gangKarta(t, "pytorchjob"), Options{Prewarm: 2, PoolSize: 2})
	assert.True(t, warm.luaBuilt.Load())
	assert.Equal(t, int64(2), warm.PoolStats().Created)
	_, err = Compile(gangKarta(t, "pytorchjob"), Options{Scripts: []Script{{Name: "bad.lua", Source: `function GetPodSpecs(obj`}}})
	assert.Error(t, err, "a script that does not compile fails Compile, with the Lua side still lazy")
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
