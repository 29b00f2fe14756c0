package luaapi

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// eagerSorted is the table a lazy table with testRules stands for, built
// with gopher-lua's own setters: members in sorted order, nil members and
// elements left out.
func eagerSorted(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		tb := L.CreateTable(0, len(x))
		for _, k := range keys {
			if lv := eagerSorted(L, x[k]); lv != lua.LNil {
				tb.RawSetString(k, lv)
			}
		}
		return tb
	case []any:
		tb := L.CreateTable(len(x), 0)
		for _, e := range x {
			tb.Append(eagerSorted(L, e))
		}
		return tb
	}
	return lazyScalar(v)
}

// assertSameWalk fills lazy throughout and compares it with eager as
// pairs walks them: the same keys in the same order, the same scalars, and
// tables alike in turn.
func assertSameWalk(t *testing.T, L *lua.LState, eager, lazy lua.LValue) {
	t.Helper()
	et, ok := eager.(*lua.LTable)
	if !ok {
		assert.Equal(t, eager, lazy)
		return
	}
	lt, ok := lazy.(*lua.LTable)
	require.True(t, ok, "a table for a table")
	FillLazy(L, lt)
	assert.Equal(t, et.Len(), lt.Len())
	ek, ev := et.Next(lua.LNil)
	lk, lv := lt.Next(lua.LNil)
	for steps := 0; ek != lua.LNil && steps <= 300; steps++ {
		require.Equal(t, ek, lk)
		assertSameWalk(t, L, ev, lv)
		ek, ev = et.Next(ek)
		lk, lv = lt.Next(lk)
	}
	assert.Equal(t, lua.LNil, lk, "no more members than the eager table")
}

// A level's member tables come from a slab (memberSlabs): the
// tables are the eager ones, each member table is its own table (filling
// or writing one leaves its siblings as they were), and a level with one
// member of a kind, or none, is filled alike.
func TestLazyFillFromSlabs(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	wide := map[string]any{"nothing": nil}
	for i := range 12 {
		wide[fmt.Sprint("s", i)] = fmt.Sprint("value ", i)
		wide[fmt.Sprint("m", i)] = map[string]any{"i": int64(i), "name": fmt.Sprint("n", i)}
		wide[fmt.Sprint("a", i)] = []any{fmt.Sprint("x", i), nil, int64(i), []any{"y", "z"}, map[string]any{}}
		wide[fmt.Sprint("n", i)] = float64(i) / 2
	}
	for name, v := range map[string]any{
		"wide object": wide,
		"array of strings and tables": []any{"a", "b", nil, map[string]any{"k": "v"}, []any{"c"}, "d",
			map[string]any{"k": "w", "l": []any{"e", "f"}}},
		"one of each":   map[string]any{"s": "x", "m": map[string]any{"a": "b"}, "a": []any{"y"}},
		"empty members": map[string]any{"o": map[string]any{}, "a": []any{}, "p": map[string]any{}},
	} {
		t.Run(name, func(t *testing.T) {
			assertSameWalk(t, L, eagerSorted(L, v), NewLazy(L, v, &testRules))
		})
	}

	root := NewLazy(L, wide, &testRules).(*lua.LTable)
	FillLazy(L, root)
	m3 := root.RawGetString("m3").(*lua.LTable)
	m4 := root.RawGetString("m4").(*lua.LTable)
	require.NotSame(t, m3, m4)
	FillLazy(L, m3)
	FillLazy(L, m4)
	m3.RawSetString("name", lua.LString("changed"))
	assert.Equal(t, lua.LString("changed"), m3.RawGetString("name"))
	assert.Equal(t, lua.LString("n4"), m4.RawGetString("name"), "a sibling is its own table")
	assert.Equal(t, lua.LString("n3"), eagerSorted(L, wide["m3"]).(*lua.LTable).RawGetString("name"))
	_, lazy := LazySource(L, root.RawGetString("m5").(*lua.LTable))
	assert.True(t, lazy, "a sibling stays unfilled")
	assertSameWalk(t, L, eagerSorted(L, wide["a7"]), root.RawGetString("a7"))
	EndLazy(L)
}

// DropLazy leaves an unfilled lazy table empty and plain, its Go value
// forgotten; a filled or plain table is left as it is.
func TestDropLazy(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	tb := NewLazy(L, map[string]any{"a": "b"}, &testRules).(*lua.LTable)
	DropLazy(L, tb)
	_, lazy := LazySource(L, tb)
	assert.False(t, lazy)
	assert.Equal(t, lua.LNil, tb.Metatable)
	assert.Equal(t, lua.LNil, tb.RawGetString("a"))

	filled := NewLazy(L, map[string]any{"a": "b"}, &testRules).(*lua.LTable)
	FillLazy(L, filled)
	DropLazy(L, filled)
	assert.Equal(t, lua.LString("b"), filled.RawGetString("a"))
	plain := L.NewTable()
	plain.Metatable = L.NewTable()
	DropLazy(L, plain)
	assert.NotEqual(t, lua.LNil, plain.Metatable, "not a lazy table: untouched")
}
