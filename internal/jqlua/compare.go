package jqlua

import (
	"math"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// compare is gojq.Compare on Lua values: jq's order within a type and
// null < false < true < numbers < strings < arrays < objects across types.
// Scalars compare here; two arrays or two objects compare in gojq.
func (r *runtime) compare(L *lua.LState, a, b lua.LValue) int {
	ka, kb := r.vs.Kind(a), r.vs.Kind(b)
	if ka == luaapi.KindInvalid || kb == luaapi.KindInvalid {
		// Not JSON: let the conversion raise its error.
		return gojq.Compare(r.toGo(L, a), r.toGo(L, b))
	}
	if oa, ob := typeOrder(ka, a), typeOrder(kb, b); oa != ob {
		if oa < ob {
			return -1
		}
		return 1
	}
	switch ka {
	case luaapi.KindNumber:
		return compareFloats(float64(a.(lua.LNumber)), float64(b.(lua.LNumber)))
	case luaapi.KindString:
		return strings.Compare(string(a.(lua.LString)), string(b.(lua.LString)))
	case luaapi.KindArray, luaapi.KindObject:
		return gojq.Compare(r.toGo(L, a), r.toGo(L, b))
	}
	return 0 // null and null, or the same boolean
}

// typeOrder is gojq's typeIndex.
func typeOrder(k luaapi.Kind, v lua.LValue) int {
	switch k {
	case luaapi.KindBool:
		if v == lua.LFalse {
			return 1
		}
		return 2
	case luaapi.KindNumber:
		return 3
	case luaapi.KindString:
		return 4
	case luaapi.KindArray:
		return 5
	case luaapi.KindObject:
		return 6
	}
	return 0
}

// compareFloats is gojq's float comparison, in which NaN is less than
// everything, itself included.
func compareFloats(l, r float64) int {
	switch {
	case l < r || math.IsNaN(l):
		return -1
	case l == r:
		return 0
	}
	return 1
}

func (r *runtime) luaEq(L *lua.LState) int {
	L.Push(lua.LBool(r.compare(L, L.Get(1), L.Get(2)) == 0))
	return 1
}

func (r *runtime) luaNe(L *lua.LState) int {
	L.Push(lua.LBool(r.compare(L, L.Get(1), L.Get(2)) != 0))
	return 1
}

func (r *runtime) luaLt(L *lua.LState) int {
	L.Push(lua.LBool(r.compare(L, L.Get(1), L.Get(2)) < 0))
	return 1
}

func (r *runtime) luaLe(L *lua.LState) int {
	L.Push(lua.LBool(r.compare(L, L.Get(1), L.Get(2)) <= 0))
	return 1
}

func (r *runtime) luaGt(L *lua.LState) int {
	L.Push(lua.LBool(r.compare(L, L.Get(1), L.Get(2)) > 0))
	return 1
}

func (r *runtime) luaGe(L *lua.LState) int {
	L.Push(lua.LBool(r.compare(L, L.Get(1), L.Get(2)) >= 0))
	return 1
}
