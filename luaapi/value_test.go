package luaapi

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

func newState(t *testing.T) *lua.LState {
	L := lua.NewState()
	t.Cleanup(L.Close)
	return L
}

// eval runs a Lua chunk that returns one value; globals set in env are
// visible to it.
func eval(t *testing.T, L *lua.LState, src string, env map[string]lua.LValue) lua.LValue {
	t.Helper()
	for k, v := range env {
		L.SetGlobal(k, v)
	}
	require.NoError(t, L.DoString(src), src)
	v := L.Get(-1)
	L.Pop(1)
	return v
}

func TestNullIsOneSentinelPerState(t *testing.T) {
	L := newState(t)
	n := Null(L)
	assert.Same(t, n, Null(L))
	assert.Same(t, n, ValuesOf(L).Null)
	assert.True(t, isNull(L, n))
	assert.False(t, isNull(L, lua.LNil))
	assert.Equal(t, KindNull, kindOf(L, n))
	assert.Equal(t, lua.LString("null"), eval(t, L, "return tostring(N)", map[string]lua.LValue{"N": n}))

	// A coroutine shares its state's sentinel; another state has its own.
	co, _ := L.NewThread()
	assert.Same(t, n, Null(co))
	assert.NotSame(t, n, Null(newState(t)))
}

func TestKindOf(t *testing.T) {
	L := newState(t)
	foreignUD := ToLuaView(L, make(chan int))
	for _, c := range []struct {
		src  string
		want Kind
	}{
		{"return true", KindBool},
		{"return 1.5", KindNumber},
		{"return 's'", KindString},
		{"return {1, 2}", KindArray},
		{"return {a = 1}", KindObject},
		{"return {}", KindObject},
		{"return {[2] = 1}", KindObject},
		{"return ARR", KindArray},
		{"return OBJ", KindObject},
		{"return VA", KindArray},
		{"return VO", KindObject},
		{"return nil", KindInvalid},
		{"return print", KindInvalid},
		{"return FOREIGN", KindInvalid},
	} {
		v := eval(t, L, c.src, map[string]lua.LValue{
			"ARR": NewArray(L), "OBJ": NewObject(L),
			"VA": ToLuaView(L, []any{}), "VO": ToLuaView(L, map[string]any{}), "FOREIGN": foreignUD,
		})
		assert.Equal(t, c.want, kindOf(L, v), c.src)
	}
	assert.Equal(t, "object", KindObject.String())
	assert.Equal(t, "invalid", Kind(200).String())
}

func TestMarkersAreShared(t *testing.T) {
	L := newState(t)
	assert.Same(t, ArrayMT(L), NewArray(L).Metatable)
	assert.Same(t, ObjectMT(L), NewObject(L).Metatable)
	assert.NotSame(t, ArrayMT(L), ObjectMT(L))
	// A marker beats the unmarked rule: an empty array stays an array, an
	// object with key 1 stays an object.
	obj := NewObject(L)
	obj.RawSetInt(1, lua.LString("x"))
	assert.Equal(t, KindObject, kindOf(L, obj))
	assert.Equal(t, KindArray, kindOf(L, NewArray(L)))
}

func TestViewReadsLazily(t *testing.T) {
	L := newState(t)
	obj := map[string]any{
		"spec": map[string]any{"replicas": int64(3), "paused": false, "gone": nil, "n": json.Number("2.5")},
		"list": []any{"a", nil, map[string]any{"k": "v"}},
	}
	env := map[string]lua.LValue{"obj": ToLuaView(L, obj), "NULL": Null(L)}
	for src, want := range map[string]lua.LValue{
		"return obj.spec.replicas":          lua.LNumber(3),
		"return obj.spec.n":                 lua.LNumber(2.5),
		"return obj.spec.paused":            lua.LFalse,
		"return obj.spec.gone == nil":       lua.LTrue, // a null member is absent, as in tables
		"return obj.spec.missing == nil":    lua.LTrue,
		"return obj.list[1]":                lua.LString("a"),
		"return obj.list[2] == NULL":        lua.LTrue, // a null element is the sentinel
		"return obj.list[3].k":              lua.LString("v"),
		"return obj.list[4] == nil":         lua.LTrue,
		"return obj.list[0] == nil":         lua.LTrue,
		"return obj.list[1.5] == nil":       lua.LTrue,
		"return obj.list.x == nil":          lua.LTrue,
		"return #obj.list":                  lua.LNumber(3),
		"return #obj.spec":                  lua.LNumber(0),
		"return obj[1] == nil":              lua.LTrue,
		"return tostring(obj):sub(1, 12)":   lua.LString("view(object)"),
		"return tostring(obj.list)":         lua.LString("view(array)"),
		"return getmetatable(obj)":          lua.LString("view"),
		"return obj.spec ~= obj.spec":       lua.LTrue, // each read is a new view
		"return type(obj.spec)":             lua.LString("userdata"),
		"return (obj.list[3].k .. 'x')":     lua.LString("vx"),
		"return obj.spec.replicas * 2 + 1":  lua.LNumber(7),
		"return obj.list[3]['k']":           lua.LString("v"),
		"return obj.list[3]['missing']":     lua.LNil,
		"return obj.spec[true] == nil":      lua.LTrue,
		"return obj.list['1'] == nil":       lua.LTrue,
		"return #obj.list[3] == 0":          lua.LTrue,
		"return obj.spec.paused == false":   lua.LTrue,
		"return obj.spec.replicas == 3":     lua.LTrue,
		"return obj.list[3].k == 'v'":       lua.LTrue,
		"return obj.spec.replicas ~= '3'":   lua.LTrue,
		"return obj.list[2] ~= nil":         lua.LTrue,
		"return tostring(obj.list[2])":      lua.LString("null"),
		"return obj.spec.n + 0.5":           lua.LNumber(3),
		"return obj.list[3].k:upper()":      lua.LString("V"),
		"return #tostring(obj.spec.n)":      lua.LNumber(3),
		"return (obj.spec.replicas or 0)":   lua.LNumber(3),
		"return (obj.spec.missing or 'd')":  lua.LString("d"),
		"return (obj.spec.gone or 'd')":     lua.LString("d"),
		"return obj.list[3].k and 1 or 2":   lua.LNumber(1),
		"return obj.spec.paused and 1 or 2": lua.LNumber(2),
	} {
		assert.Equal(t, want, eval(t, L, src, env), src)
	}
	err := L.DoString("obj.spec.replicas = 4")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read-only JSON view")
}

func TestViewsAliasTheirGoValue(t *testing.T) {
	L := newState(t)
	m := map[string]any{"a": []any{1, 2}, "b": map[string]any{"c": true}}
	got, err := FromLua(L, ToLuaView(L, m))
	require.NoError(t, err)
	assert.Equal(t, reflect.ValueOf(m).Pointer(), reflect.ValueOf(got).Pointer(), "a view unwraps to the very map it wraps")

	// So does a view read out of another, and a view stored in a table.
	tb := eval(t, L, "return {keep = obj.a, n = 1}", map[string]lua.LValue{"obj": ToLuaView(L, m)})
	got, err = FromLua(L, tb)
	require.NoError(t, err)
	kept := got.(map[string]any)["keep"].([]any)
	assert.Same(t, &m["a"].([]any)[0], &kept[0], "the slice is not copied")
	assert.Equal(t, int64(1), got.(map[string]any)["n"])

	v, ok := ViewOf(ToLuaView(L, m))
	require.True(t, ok)
	assert.False(t, v.IsArray())
	assert.Equal(t, 2, v.Len())
	assert.Nil(t, v.Array())
	_, ok = ViewOf(lua.LString("x"))
	assert.False(t, ok)
}

func TestToLuaViewScalars(t *testing.T) {
	L := newState(t)
	for _, c := range []struct {
		in   any
		want lua.LValue
	}{
		{nil, Null(L)},
		{true, lua.LTrue},
		{"s", lua.LString("s")},
		{3.5, lua.LNumber(3.5)},
		{7, lua.LNumber(7)},
		{int64(-9007199254740992), lua.LNumber(-9007199254740992)},
		{int32(5), lua.LNumber(5)},
		{uint8(5), lua.LNumber(5)},
		{float32(0.5), lua.LNumber(0.5)},
		{json.Number("12"), lua.LNumber(12)},
		{json.Number("1e400"), lua.LNumber(math.Inf(1))},
		{big.NewInt(1 << 40), lua.LNumber(1 << 40)},
		{lua.LString("already"), lua.LString("already")},
	} {
		assert.Equal(t, c.want, ToLuaView(L, c.in), "%T %v", c.in, c.in)
	}
	nan := ToLuaView(L, json.Number("x1"))
	assert.True(t, math.IsNaN(float64(nan.(lua.LNumber))), "an unparsable json.Number is NaN")
}

func TestToLuaTableRoundTrip(t *testing.T) {
	L := newState(t)
	in := map[string]any{
		"s": "x", "i": int64(3), "f": 2.5, "b": true,
		"arr":   []any{int64(1), nil, "two", []any{}, map[string]any{}},
		"obj":   map[string]any{"nested": map[string]any{"deep": []any{false}}},
		"empty": map[string]any{},
	}
	lv, err := ToLuaTable(L, in)
	require.NoError(t, err)
	tb := lv.(*lua.LTable)
	assert.Same(t, ObjectMT(L), tb.Metatable)
	assert.Same(t, ArrayMT(L), tb.RawGetString("arr").(*lua.LTable).Metatable)
	assert.Equal(t, Null(L), tb.RawGetString("arr").(*lua.LTable).RawGetInt(2))
	out, err := FromLua(L, lv)
	require.NoError(t, err)
	assert.Equal(t, in, out)

	// User scripts see null object members as absent.
	lv, err = ToLuaTable(L, map[string]any{"a": nil, "b": 1})
	require.NoError(t, err)
	assert.Equal(t, lua.LNil, lv.(*lua.LTable).RawGetString("a"))
	out, err = FromLua(L, lv)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"b": int64(1)}, out)

	lv, err = ToLuaTable(L, nil)
	require.NoError(t, err)
	assert.Equal(t, Null(L), lv)
}

func TestToLuaTableErrors(t *testing.T) {
	L := newState(t)
	for _, c := range []struct {
		in   any
		want string
	}{
		{map[string]any{"a": []any{1, math.NaN()}}, "value.a[1]: NaN is not a JSON number"},
		{[]any{map[string]any{"x y": math.Inf(-1)}}, `value[0]["x y"]: -Inf is not a JSON number`},
		{map[string]any{"c": make(chan int)}, "value.c: unsupported Go type chan int"},
		{map[string]any{"b": struct{}{}, "a": func() {}}, "value.a: unsupported Go type func()"},
		{json.Number("NaN"), "value: NaN is not a JSON number"},
	} {
		_, err := ToLuaTable(L, c.in)
		var ce *ConvertError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, c.want, err.Error())
	}
}

func TestFromLuaNumbers(t *testing.T) {
	L := newState(t)
	for src, want := range map[string]any{
		"return 3":                  int64(3),
		"return -2.5":               -2.5,
		"return 2^53":               int64(1 << 53),
		"return -(2^53)":            int64(-(1 << 53)),
		"return 2^53 + 2":           float64(1<<53 + 2),
		"return 1e300":              1e300,
		"return -0.0":               int64(0),
		"return 'x'":                "x",
		"return false":              false,
		"return {}":                 map[string]any{},
		"return {1, 2.5}":           []any{int64(1), 2.5},
		"return {a = {b = {true}}}": map[string]any{"a": map[string]any{"b": []any{true}}},
	} {
		got, err := FromLua(L, eval(t, L, src, nil))
		require.NoError(t, err, src)
		assert.Equal(t, want, got, src)
	}
	got, err := FromLua(L, eval(t, L, "local s = {1} return {a = s, b = s, c = {s}}", nil))
	require.NoError(t, err, "shared sub-tables are fine")
	assert.Equal(t, map[string]any{"a": []any{int64(1)}, "b": []any{int64(1)}, "c": []any{[]any{int64(1)}}}, got)
	got, err = FromLua(L, eval(t, L, "return {N, {x = N}}", map[string]lua.LValue{"N": Null(L)}))
	require.NoError(t, err)
	assert.Equal(t, []any{nil, map[string]any{"x": nil}}, got)
}

func TestFromLuaErrors(t *testing.T) {
	L := newState(t)
	env := map[string]lua.LValue{
		"ARR": NewArray(L), "OBJ": NewObject(L), "FOREIGN": ToLuaView(L, make(chan int)),
		"UD": L.NewUserData(),
	}
	for _, c := range []struct {
		src  string
		want string
	}{
		{"return {items = {1, {x = 0/0}}}", "result.items[2].x: NaN is not a JSON number"},
		{"return {1, 2, a = 3}", `result: mixed array and object keys (key "a")`},
		{"return {a = 1, [1.5] = 2}", "result: mixed array and object keys (key 1.5)"},
		{"return {1, nil, 3}", "result: sparse array: 2 entries but length 3"},
		{"local t = {1} t[5] = 2 return t", "result: sparse array: 2 entries but length 5"},
		{"local t = {1} t[2^40] = 2 return t", "result: sparse array: 2 entries but length 1"},
		{"return {[2] = 'x'}", "result: sparse array: no element at index 1 (key 2)"},
		{"return {a = {b = 1/0}}", "result.a.b: +Inf is not a JSON number"},
		{"return {f = print}", "result.f: Lua function is not a JSON value"},
		{"return {['a b'] = {FOREIGN}}", `result["a b"][1]: Go value of type chan int is not JSON`},
		{"return {UD}", "result[1]: userdata is not a JSON value"},
		{"local t = {} t.self = t return t", "result.self: cycle: the table contains itself"},
		{"local t = {1} t[2] = {t} return t", "result[2][1]: cycle: the table contains itself"},
		{"ARR.x = 1 return ARR", `result: mixed array and object keys (key "x")`},
		{"OBJ[1] = 1 return OBJ", "result: non-string key 1 in an object"},
		{"return {b = 0/0, a = 1/0, c = print}", "result.a: +Inf is not a JSON number"}, // first bad key in order
		{"return nil", "result: Lua nil is not a JSON value"},
	} {
		_, err := FromLua(L, eval(t, L, c.src, env))
		var ce *ConvertError
		require.ErrorAs(t, err, &ce, c.src)
		assert.Equal(t, c.want, err.Error(), c.src)
	}
}

func TestFromLuaWithOptions(t *testing.T) {
	L := newState(t)
	v := eval(t, L, "return {n = 0/0, view = V}", map[string]lua.LValue{"V": ToLuaView(L, []any{int64(1)})})
	got, err := FromLuaWith(L, v, ConvertOptions{
		Root:   "input",
		Number: func(f float64) (any, error) { return f, nil },
		View:   func(x any) (any, error) { return len(x.([]any)), nil },
	})
	require.NoError(t, err)
	m := got.(map[string]any)
	assert.True(t, math.IsNaN(m["n"].(float64)))
	assert.Equal(t, 1, m["view"])

	_, err = FromLuaWith(L, eval(t, L, "return {x = {print}}", nil), ConvertOptions{Root: "input"})
	assert.EqualError(t, err, "input.x[1]: Lua function is not a JSON value")
}

func TestGoNumber(t *testing.T) {
	for _, v := range []any{1, int8(1), int16(1), int32(1), int64(1), uint(1), uint16(1), uint32(1), uint64(1), float32(1), 1.0} {
		f, ok := GoNumber(v)
		assert.True(t, ok, "%T", v)
		assert.Equal(t, 1.0, f, "%T", v)
	}
	_, ok := GoNumber("1")
	assert.False(t, ok)
}
