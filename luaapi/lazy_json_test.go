package luaapi

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// jsonLazyCases are values whose conversion has something to normalize: null
// members and elements, every number form, views, empty objects and arrays.
func jsonLazyCases() map[string]any {
	return map[string]any{
		"normal": map[string]any{"a": "x", "b": true, "n": int64(3), "f": 1.5, "e": map[string]any{}, "l": []any{}},
		"null members": map[string]any{
			"metadata": map[string]any{"creationTimestamp": nil, "name": "a"},
			"spec":     map[string]any{"x": nil},
		},
		"null elements": []any{nil, "a", []any{nil}, map[string]any{"k": nil}},
		"numbers": map[string]any{
			"int": 1, "int32": int32(-2), "uint8": uint8(7), "whole float": 4.0, "negative zero": math.Copysign(0, -1),
			"json int": json.Number("6379"), "json spelled": json.Number("1.0"), "json exp": json.Number("1e3"),
			"json frac": json.Number("0.25"), "beyond 2^53": json.Number("9007199254740993"), "big int64": int64(1) << 60,
			"float32": float32(0.5),
		},
		"nested numbers": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "c", "ports": []any{map[string]any{"containerPort": json.Number("80")}}},
		}}, "untouched": map[string]any{"a": "b"}},
		"a view": map[string]any{"v": &View{obj: map[string]any{"k": json.Number("2"), "z": nil}}},
		"scalar": "s",
		"null":   nil,
	}
}

// NormalizeJSON is FromLua of ToLuaTable's tables, and leaves a normal
// value as it is, without allocating.
func TestNormalizeJSONIsTheTablesRoundTrip(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	for name, v := range jsonLazyCases() {
		t.Run(name, func(t *testing.T) {
			tb, err := ToLuaTable(L, v)
			require.NoError(t, err)
			want, err := FromLua(L, tb)
			require.NoError(t, err)
			got, err := NormalizeJSON(v)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	normal := jsonLazyCases()["normal"].(map[string]any)
	got, err := NormalizeJSON(normal)
	require.NoError(t, err)
	got.(map[string]any)["probe"] = true
	assert.Equal(t, true, normal["probe"], "a normal object comes back as itself")
	delete(normal, "probe")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = NormalizeJSON(normal) }))

	mixed := jsonLazyCases()["nested numbers"].(map[string]any)
	got, err = NormalizeJSON(mixed)
	require.NoError(t, err)
	gm := got.(map[string]any)
	gm["untouched"].(map[string]any)["probe"] = true
	assert.Equal(t, true, mixed["untouched"].(map[string]any)["probe"], "an unchanged member is shared, not copied")
	assert.Equal(t, json.Number("80"), mixed["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["ports"].([]any)[0].(map[string]any)["containerPort"],
		"the input is not changed")
}

// NewLazyJSON and NormalizeJSON refuse what ToLuaTable refuses, with its
// error, before the script sees anything.
func TestNewLazyJSONErrorsAreToLuaTables(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	for name, v := range map[string]any{
		"unsupported type": map[string]any{"spec": map[string]any{"ok": "x", "c": make(chan int)}},
		"NaN":              map[string]any{"items": []any{"a", math.NaN()}},
		"infinity":         []any{math.Inf(1)},
		"two bad keys":     map[string]any{"b": struct{}{}, "a": math.Inf(-1)},
		"bad json.Number":  map[string]any{"n": json.Number("x")},
	} {
		t.Run(name, func(t *testing.T) {
			_, want := ToLuaTable(L, v)
			require.Error(t, want)
			_, err := NewLazyJSON(L, v)
			assert.Equal(t, want, err)
			_, err = NormalizeJSON(v)
			assert.Equal(t, want, err)
		})
	}
	deep := any("leaf")
	for range MaxDepth + 1 {
		deep = []any{deep}
	}
	_, want := ToLuaTable(L, deep)
	require.Error(t, want)
	_, err := NewLazyJSON(L, deep)
	assert.Equal(t, want, err)
}

// A JSON lazy table, filled, is ToLuaTable's table: the same markers, keys,
// values and Null elements; and FromLua of it untouched, filled at the top
// only, or filled through, is FromLua of the eager table.
func TestLazyJSONIsToLuaTable(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	for name, v := range jsonLazyCases() {
		t.Run(name, func(t *testing.T) {
			eager, err := ToLuaTable(L, v)
			require.NoError(t, err)
			want, err := FromLua(L, eager)
			require.NoError(t, err)

			untouched, err := NewLazyJSON(L, v)
			require.NoError(t, err)
			got, err := FromLua(L, untouched)
			require.NoError(t, err)
			assert.Equal(t, want, got, "untouched")

			top, err := NewLazyJSON(L, v)
			require.NoError(t, err)
			if tb, ok := top.(*lua.LTable); ok {
				FillLazy(L, tb)
			}
			got, err = FromLua(L, top)
			require.NoError(t, err)
			assert.Equal(t, want, got, "filled at the top")

			all, err := NewLazyJSON(L, v)
			require.NoError(t, err)
			assertSameTables(t, L, eager, all)
		})
	}
}

// assertSameTables fills lazy, as a script reading all of it would, and
// compares it with eager.
func assertSameTables(t *testing.T, L *lua.LState, eager, lazy lua.LValue) {
	t.Helper()
	et, ok := eager.(*lua.LTable)
	if !ok {
		assert.Equal(t, eager, lazy)
		return
	}
	lt, ok := lazy.(*lua.LTable)
	require.True(t, ok, "a table for a table")
	FillLazy(L, lt)
	assert.Equal(t, et.Metatable, lt.Metatable, "the same marker")
	n := 0
	et.ForEach(func(k, ev lua.LValue) {
		n++
		assertSameTables(t, L, ev, lt.RawGet(k))
	})
	m := 0
	lt.ForEach(func(lua.LValue, lua.LValue) { m++ })
	assert.Equal(t, n, m, "the same keys")
}

// What scripts do to a JSON lazy table goes through the metamethods and
// the sandbox: reads, writes, #, ipairs, pairs, table.insert; and Go code
// that reads kinds (TableKind) sees the filled table.
func TestLazyJSONFromScripts(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	obj := map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{"name": "a"}, nil}, "n": json.Number("2")},
		"meta": map[string]any{"creationTimestamp": nil},
	}
	lv, err := NewLazyJSON(L, obj)
	require.NoError(t, err)
	fn, err := L.LoadString(`
local obj = ...
local cs = obj.spec.containers
local names = {}
for _, c in ipairs(cs) do names[#names + 1] = type(c) == "table" and c.name or tostring(c) end
table.insert(cs, {name = "b"})
local keys = 0
for _ in pairs(obj.meta) do keys = keys + 1 end
obj.spec.n = obj.spec.n + 1
return table.concat(names, ","), #cs, keys, obj.spec.n
`)
	require.NoError(t, err)
	L.Push(fn)
	L.Push(lv)
	require.NoError(t, L.PCall(1, 4, nil))
	assert.Equal(t, "a,null", L.Get(-4).String(), "a null element is Null, as ToLuaTable makes it")
	assert.Equal(t, lua.LNumber(3), L.Get(-3))
	assert.Equal(t, lua.LNumber(0), L.Get(-2), "a null member is absent")
	assert.Equal(t, lua.LNumber(3), L.Get(-1))
	L.Pop(4)
	assert.Equal(t, json.Number("2"), obj["spec"].(map[string]any)["n"], "the Go value is never written")
	assert.Len(t, obj["spec"].(map[string]any)["containers"], 2)

	arr, err := NewLazyJSON(L, []any{"x"})
	require.NoError(t, err)
	assert.Equal(t, KindArray, ValuesOf(L).TableKind(arr.(*lua.LTable)), "TableKind fills first")
}

// ConvertOptions.Lazy hands the Go value of an untouched JSON lazy table to
// the caller: the K helpers read the object itself.
func TestFromLuaLazyOption(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	obj := map[string]any{"n": json.Number("1.0"), "z": nil}
	lv, err := NewLazyJSON(L, obj)
	require.NoError(t, err)
	same, err := FromLuaWith(L, lv, ConvertOptions{Lazy: func(v any) (any, error) { return v, nil }})
	require.NoError(t, err)
	same.(map[string]any)["probe"] = true
	assert.Equal(t, true, obj["probe"], "the very value")
	delete(obj, "probe")
	norm, err := FromLua(L, lv)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"n": int64(1)}, norm)

	EndLazy(L)
	got, err := FromLua(L, lv)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{}, got, "after the call, an empty table")
}

// FuzzNormalizeJSON: for any JSON document (numbers kept as json.Number,
// as karta's object decoder keeps them), NormalizeJSON is FromLua of
// ToLuaTable's tables, and a JSON lazy table converts back to the same.
func FuzzNormalizeJSON(f *testing.F) {
	for _, s := range []string{`{"a":null,"b":[1,null,2.5,1e3,"x"],"c":{"d":{}}}`, `[[],{},-0,9007199254740993]`, `"s"`, `null`, `{"x":1.0}`} {
		f.Add([]byte(s))
	}
	L := NewState(SandboxOptions{})
	defer L.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		tb, err := ToLuaTable(L, v)
		if err != nil {
			_, nerr := NormalizeJSON(v)
			require.Equal(t, err, nerr)
			return
		}
		want, err := FromLua(L, tb)
		require.NoError(t, err)
		got, err := NormalizeJSON(v)
		require.NoError(t, err)
		require.Equal(t, want, got)
		lv, err := NewLazyJSON(L, v)
		require.NoError(t, err)
		got, err = FromLua(L, lv)
		require.NoError(t, err)
		require.Equal(t, want, got)
		EndLazy(L)
	})
}
