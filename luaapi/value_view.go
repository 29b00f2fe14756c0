package luaapi

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// View is a Go map[string]any or []any seen from Lua without converting it:
// a userdata whose reads convert only what they touch (scalars become Lua
// scalars, nested maps and slices become new views). This is how generated
// hooks read a workload object in proportion to the fields they use.
//
// A view never copies: FromLua returns the very Go value it wraps, so an
// unchanged subtree handed back from Lua is the input's own value. Views
// are read-only; nothing in karta mutates the Go values behind them.
//
// From Lua a view indexes like a script's table:
// view.key on an object view (nil when absent or JSON null), view[i] on an
// array view (1-based; a JSON null element is the null sentinel), and #view
// on an array view. pairs and ipairs do not see views (gopher-lua has no
// __pairs); the jq runtime iterates them.
//
// Why not gopher-luar (luar.New on the same map[string]any), which gives
// a lazy proxy too: it costs on this hot path and changes what scripts
// see. BenchmarkObjectBridge (value_luar_test.go), an InterpretStatus's
// reads of a LeaderWorkerSet, takes 1.7× the view's time through luar
// with 75 allocations against 34 (docs/performance.md). And
// TestLuarProxySemantics: luar's proxy is writable (obj.spec.replicas = 0
// changes the caller's object), hands out the exported fields and methods
// of any typed Go value in the object, raises past the end of an array,
// reads a JSON null element as nil and a json.Number as a string, and is
// no JSON value to FromLua, so it could not reach jq, a Program's
// generated hooks or a result.
type View struct {
	obj   map[string]any
	arr   []any
	isArr bool
}

// Value returns the wrapped Go value: a map[string]any or a []any.
func (v *View) Value() any {
	if v.isArr {
		return v.arr
	}
	return v.obj
}

// IsArray reports whether the view wraps a []any.
func (v *View) IsArray() bool { return v.isArr }

// Object returns the wrapped map, nil for an array view.
func (v *View) Object() map[string]any { return v.obj }

// Array returns the wrapped slice, nil for an object view.
func (v *View) Array() []any { return v.arr }

// Len returns the number of elements or keys.
func (v *View) Len() int {
	if v.isArr {
		return len(v.arr)
	}
	return len(v.obj)
}

// ViewOf returns the view lv is, if it is one.
func ViewOf(lv lua.LValue) (*View, bool) {
	if ud, ok := lv.(*lua.LUserData); ok {
		v, ok := ud.Value.(*View)
		return v, ok
	}
	return nil, false
}

// foreign wraps a Go value of a type that is not JSON, so that ToLuaView can
// stay total; every conversion back to Go rejects it.
type foreign struct{ v any }

// ToLuaView converts a decoded JSON value to Lua lazily: nil becomes
// Null(L), booleans, numbers and strings become Lua scalars, and
// map[string]any and []any become views. Numbers may be float64, float32,
// any Go integer type, json.Number or *big.Int; they become float64, exact
// to ±2^53 (an unparsable json.Number becomes NaN, which FromLua rejects).
// A value of any other Go type becomes a userdata of KindInvalid that every
// conversion rejects.
func ToLuaView(L *lua.LState, v any) lua.LValue { return ValuesOf(L).ToLuaView(L, v) }

// ToLuaView is ToLuaView without the registry lookup.
func (vs *Values) ToLuaView(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return vs.Null
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case float64:
		return lua.LNumber(x)
	case map[string]any:
		ud := L.NewUserData()
		ud.Value = &View{obj: x}
		ud.Metatable = vs.viewMT
		return ud
	case []any:
		ud := L.NewUserData()
		ud.Value = &View{arr: x, isArr: true}
		ud.Metatable = vs.viewMT
		return ud
	case lua.LValue:
		return x
	}
	if f, ok := GoNumber(v); ok {
		return lua.LNumber(f)
	}
	ud := L.NewUserData()
	ud.Value = foreign{v}
	return ud
}

// shortInteger is s as a float64 when s is an optional minus sign and 1
// to 15 decimal digits, which a float64 holds exactly, so the result is
// strconv.ParseFloat's ("-0" is negative zero, as ParseFloat gives it)
// without its cost: the numbers karta's own decoding keeps as json.Number
// (object.Decode) are mostly such replica counts and sizes, which the
// direct evaluator reads on every call (a Milvus GetPodSpecs 27).
func shortInteger(s string) (float64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if s == "" || len(s) > 15 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	f := float64(n)
	if neg {
		f = -f
	}
	return f, true
}

// GoNumber returns the float64 value of a Go number of any of the types a
// JSON or YAML decoder (or gojq) produces, and whether v is such a number.
func GoNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		if f, ok := shortInteger(string(x)); ok {
			return f, true
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !isRangeErr(err) {
			return math.NaN(), true
		}
		return f, true
	case float32:
		return float64(x), true
	case int32:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint8:
		return float64(x), true
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	}
	return 0, false
}

// isRangeErr reports a ParseFloat overflow, whose result (±Inf) is still the
// number's value.
func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func newViewMetatable(L *lua.LState, vs *Values) *lua.LTable {
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		v, _ := ViewOf(L.Get(1))
		L.Push(vs.viewIndex(L, v, L.Get(2)))
		return 1
	}))
	mt.RawSetString("__len", L.NewFunction(func(L *lua.LState) int {
		v, _ := ViewOf(L.Get(1))
		n := 0
		if v != nil && v.isArr {
			n = len(v.arr)
		}
		L.Push(lua.LNumber(n))
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("attempt to modify a read-only JSON view")
		return 0
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		v, _ := ViewOf(L.Get(1))
		s := "view(object)"
		if v != nil && v.isArr {
			s = "view(array)"
		}
		L.Push(lua.LString(s))
		return 1
	}))
	mt.RawSetString("__metatable", lua.LString("view"))
	return mt
}

// viewIndex implements view[key] for Lua code: the table conventions of
// JSON values (value.go), where an object's null member is absent.
func (vs *Values) viewIndex(L *lua.LState, v *View, key lua.LValue) lua.LValue {
	if v == nil {
		return lua.LNil
	}
	if v.isArr {
		n, ok := key.(lua.LNumber)
		if !ok || n != lua.LNumber(math.Trunc(float64(n))) || n < 1 || float64(n) > float64(len(v.arr)) {
			return lua.LNil
		}
		return vs.ToLuaView(L, v.arr[int(n)-1])
	}
	s, ok := key.(lua.LString)
	if !ok {
		return lua.LNil
	}
	x, ok := v.obj[string(s)]
	if !ok || x == nil {
		return lua.LNil
	}
	return vs.ToLuaView(L, x)
}
