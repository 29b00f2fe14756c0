package luaapi

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// nestedGo nests depth maps {"k": …} around bottom.
func nestedGo(depth int, bottom any) any {
	v := bottom
	for range depth {
		v = map[string]any{"k": v}
	}
	return v
}

// nestedLua nests depth tables {k = …} around bottom.
func nestedLua(L *lua.LState, depth int, bottom lua.LValue) lua.LValue {
	v := bottom
	for range depth {
		t := L.NewTable()
		t.RawSetString("k", v)
		v = t
	}
	return v
}

func TestConversionDepthLimit(t *testing.T) {
	L := newState(t)

	_, err := ToLuaTable(L, nestedGo(MaxDepth, "x"))
	require.NoError(t, err, "MaxDepth levels convert")
	_, err = ToLuaTable(L, nestedGo(MaxDepth+1, "x"))
	var ce *ConvertError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "value.k.k.k.k.k.k.k.k…", ce.Path, "the path names the first steps only")
	assert.Equal(t, "nesting deeper than 1000 levels", ce.Msg)

	_, err = FromLua(L, nestedLua(L, MaxDepth, lua.LString("x")))
	require.NoError(t, err, "MaxDepth levels convert")
	_, err = FromLua(L, nestedLua(L, MaxDepth+1, lua.LString("x")))
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "result.k.k.k.k.k.k.k.k…", ce.Path)
	assert.Equal(t, "nesting deeper than 1000 levels", ce.Msg)

	// Arrays count as levels too, and 100 000 levels stop at the limit
	// (the cycle check used to make this quadratic).
	var deep lua.LValue = lua.LString("x")
	for range 100_000 {
		t := L.CreateTable(1, 0)
		t.RawSetInt(1, deep)
		deep = t
	}
	_, err = FromLua(L, deep)
	require.ErrorAs(t, err, &ce)
	assert.True(t, strings.HasPrefix(ce.Path, "result[1][1]"), ce.Path)
}

// TestConversionErrorsAreLinear: a bad value deep inside nested objects
// used to be converted again at every level to find the first failing key
// in key order, 2^depth conversions; at depth 64 that never ends. The
// first failing key is still the one reported.
func TestConversionErrorsAreLinear(t *testing.T) {
	L := newState(t)

	_, err := ToLuaTable(L, nestedGo(64, math.NaN()))
	var ce *ConvertError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "value"+strings.Repeat(".k", 64), ce.Path)

	fn := L.NewFunction(func(*lua.LState) int { return 0 })
	_, err = FromLua(L, nestedLua(L, 64, fn))
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "result"+strings.Repeat(".k", 64), ce.Path)

	// Several failing keys: the first in key order, whatever the map or
	// table order.
	goVal := map[string]any{"d": math.Inf(1), "b": map[string]any{"y": math.NaN(), "x": math.NaN()}, "c": math.NaN(), "a": "ok"}
	tb := L.NewTable()
	inner := L.NewTable()
	inner.RawSetString("y", fn)
	inner.RawSetString("x", fn)
	tb.RawSetString("d", fn)
	tb.RawSetString("b", inner)
	tb.RawSetString("c", fn)
	tb.RawSetString("a", lua.LString("ok"))
	for range 20 {
		_, err = ToLuaTable(L, goVal)
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "value.b.x", ce.Path)
		_, err = FromLua(L, tb)
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "result.b.x", ce.Path)
	}

	// A non-string key is reported before any bad value.
	tb.RawSetInt(7, lua.LTrue)
	_, err = FromLua(L, tb)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "result", ce.Path)
	assert.Equal(t, "mixed array and object keys (key 7)", ce.Msg)
}
