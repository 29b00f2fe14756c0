package luaapi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

var testRules = LazyRules{SortKeys: true}

// A lazy table converts one level when it is first touched, keeps its
// identity, and tells Go its value while it is untouched.
func TestLazyFillsOneLevel(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	obj := map[string]any{
		"spec":   map[string]any{"b": int64(2), "a": "x", "c": nil, "d": []any{nil, true, map[string]any{}}},
		"status": map[string]any{"phase": "Running"},
	}
	root := NewLazy(L, obj, &testRules).(*lua.LTable)
	v, ok := LazySource(L, root)
	require.True(t, ok)
	assert.Equal(t, obj, v)
	assert.Equal(t, 0, root.Len(), "empty until touched")

	FillLazy(L, root)
	_, ok = LazySource(L, root)
	assert.False(t, ok, "filled")
	assert.Equal(t, lua.LNil, root.Metatable)
	spec := root.RawGetString("spec").(*lua.LTable)
	src, ok := LazySource(L, spec)
	require.True(t, ok, "children stay lazy")
	assert.Equal(t, obj["spec"], src)

	FillLazy(L, spec)
	var keys []string
	spec.ForEach(func(k, _ lua.LValue) { keys = append(keys, k.String()) })
	assert.ElementsMatch(t, []string{"a", "b", "d"}, keys, "a null member is absent")
	k, _ := spec.Next(lua.LNil)
	assert.Equal(t, lua.LString("a"), k, "SortKeys: members in sorted order")
	d := spec.RawGetString("d").(*lua.LTable)
	FillLazy(L, d)
	assert.Equal(t, 2, d.Len(), "a null element is left out")
	assert.Equal(t, lua.LTrue, d.RawGetInt(1))
	assert.Equal(t, lua.LString("x"), spec.RawGetString("a"))
	assert.Same(t, spec, root.RawGetString("spec"), "same table")

	// A script's own reads fill through the metatable.
	env := NewEnv(L)
	env.RawSetString("obj", NewLazy(L, obj, &testRules))
	proto, err := Compile("t", `local s = obj.status return {s.phase, #obj.spec.d, obj.spec == obj.spec}`)
	require.NoError(t, err)
	res, err := CallProtected(context.Background(), L, 0, Instantiate(L, proto, env), 1)
	require.NoError(t, err)
	out := res[0].(*lua.LTable)
	assert.Equal(t, lua.LString("Running"), out.RawGetInt(1))
	assert.Equal(t, lua.LNumber(2), out.RawGetInt(2))
	assert.Equal(t, lua.LTrue, out.RawGetInt(3))

	// EndLazy forgets the values: a table left behind fills as empty.
	left := NewLazy(L, obj, &testRules).(*lua.LTable)
	EndLazy(L)
	_, ok = LazySource(L, left)
	assert.False(t, ok)
	FillLazy(L, left)
	assert.Equal(t, lua.LNil, left.Metatable)
	k, _ = left.Next(lua.LNil)
	assert.Equal(t, lua.LNil, k)

	assert.Equal(t, lua.LString("s"), NewLazy(L, "s", &testRules), "scalars convert at once")
	assert.Equal(t, lua.LNil, NewLazy(L, nil, &testRules))
}

func TestLazyNeedsASandboxState(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	assert.Panics(t, func() { NewLazy(L, map[string]any{}, &testRules) })
	tb := L.NewTable()
	FillLazy(L, tb) // a plain table: nothing to do
	_, ok := LazySource(L, tb)
	assert.False(t, ok)
}

// Compile drops the vararg table gopher-lua builds for a main chunk
// (nothing can name it); a chunk's own "..." and the arg of nested vararg
// functions are as before.
func TestChunkVarargs(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	for src, want := range map[string][]string{
		`return arg`:              {"nil"},
		`local a return a, arg`:   {"nil", "nil"},
		`return select('#', ...)`: {"0"},
		`local function f(...) return arg.n, arg[2] end return f(1, 2)`:           {"2", "2"},
		`local function f(...) return select('#', ...), ... end return f(nil, 3)`: {"2", "nil", "3"},
	} {
		assert.Equal(t, want, luaStrings(mustRun(t, L, src)), src)
	}
	proto, err := Compile("t", `return 1`)
	require.NoError(t, err)
	assert.Zero(t, proto.IsVarArg&lua.VarArgNeedsArg)
}

// pairs returns the sandbox's next (which fills lazy tables), as Lua's
// pairs returns the global next.
func TestPairsReturnsNext(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	assert.Equal(t, []string{"true"}, luaStrings(mustRun(t, L, `return pairs({}) == next`)))
}
