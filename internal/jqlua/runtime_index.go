package jqlua

import (
	"maps"
	"math"
	"slices"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// J.index(v, k) is gojq's _index: .[k] for a string key on an object or
// null, a number key on an array or null; the rest (strings indexed by
// number, array keys, slice objects, and every error) goes to gojq. It is
// J.field too, J.index for a string key, which only portable accessors
// call (portable.lua's own J.field needs none of index's other keys).
func (r *runtime) luaIndex(L *lua.LState) int {
	L.Push(r.index(L, L.Get(1), L.Get(2), false))
	return 1
}

// J.index_opt(v, k) is .[k]? on a constant key: nil (no output) where
// J.index would raise.
func (r *runtime) luaIndexOpt(L *lua.LState) int {
	L.Push(r.index(L, L.Get(1), L.Get(2), true))
	return 1
}

func (r *runtime) index(L *lua.LState, v, k lua.LValue, opt bool) lua.LValue {
	switch key := k.(type) {
	case lua.LString:
		switch x := v.(type) {
		case *lua.LUserData:
			if x == r.null {
				return r.null
			}
			if view, ok := x.Value.(*luaapi.View); ok && !view.IsArray() {
				e, ok := view.Object()[string(key)]
				if !ok {
					return r.null
				}
				return r.vs.ToLuaView(L, e)
			}
		case *lua.LTable:
			if r.vs.TableKind(x) == luaapi.KindObject {
				return r.orNull(x.RawGetString(string(key)))
			}
		}
	case lua.LNumber:
		switch x := v.(type) {
		case *lua.LUserData:
			if x == r.null {
				return r.null
			}
			if view, ok := x.Value.(*luaapi.View); ok && view.IsArray() {
				arr := view.Array()
				i := clampIndex(floatToInt(float64(key)), -1, len(arr))
				if 0 <= i && i < len(arr) {
					return r.vs.ToLuaView(L, arr[i])
				}
				return r.null
			}
		case *lua.LTable:
			if r.vs.TableKind(x) == luaapi.KindArray {
				n := x.Len()
				i := clampIndex(floatToInt(float64(key)), -1, n)
				if 0 <= i && i < n {
					return r.orNull(x.RawGetInt(i + 1))
				}
				return r.null
			}
		}
	}
	if opt {
		return r.slowOpt(L, slowIndex, v, k)
	}
	return r.slow(L, slowIndex, v, k)
}

// orNull reads an absent table entry as null: user scripts may leave null
// members out.
func (r *runtime) orNull(lv lua.LValue) lua.LValue {
	if lv == lua.LNil {
		return r.null
	}
	return lv
}

// J.slice(v, from, to) is .[from:to], with null for a missing bound.
func (r *runtime) luaSlice(L *lua.LState) int {
	L.Push(r.slice(L, L.Get(1), L.Get(2), L.Get(3), false))
	return 1
}

// J.slice_opt(v, from, to) is .[from:to]? on constant bounds.
func (r *runtime) luaSliceOpt(L *lua.LState) int {
	L.Push(r.slice(L, L.Get(1), L.Get(2), L.Get(3), true))
	return 1
}

func (r *runtime) slice(L *lua.LState, v, from, to lua.LValue, opt bool) lua.LValue {
	_, fromOK := from.(lua.LNumber)
	_, toOK := to.(lua.LNumber)
	if (fromOK || from == lua.LValue(r.null)) && (toOK || to == lua.LValue(r.null)) {
		switch x := v.(type) {
		case *lua.LUserData:
			if x == r.null {
				return r.null
			}
			if view, ok := x.Value.(*luaapi.View); ok && view.IsArray() {
				arr := view.Array()
				start, end := sliceBounds(len(arr), from, to)
				return r.vs.ToLuaView(L, arr[start:end:end])
			}
		case *lua.LTable:
			if r.vs.TableKind(x) == luaapi.KindArray {
				start, end := sliceBounds(x.Len(), from, to)
				out := r.vs.NewArray(L, end-start)
				for i := start; i < end; i++ {
					out.RawSetInt(i-start+1, r.orNull(x.RawGetInt(i+1)))
				}
				return out
			}
		}
	}
	if opt {
		return r.slowOpt(L, slowSlice, v, from, to)
	}
	return r.slow(L, slowSlice, v, from, to)
}

// sliceBounds is gojq's slice arithmetic for numeric or null bounds: the
// start rounds down, the end up, and both clamp into [0, n].
func sliceBounds(n int, from, to lua.LValue) (start, end int) {
	if f, ok := from.(lua.LNumber); ok {
		start = clampIndex(floatToInt(math.Floor(float64(f))), 0, n)
	}
	end = n
	if f, ok := to.(lua.LNumber); ok {
		end = clampIndex(toIntCeil(float64(f)), start, n)
	}
	return start, end
}

// toIntCeil is gojq's rounding of a slice end.
func toIntCeil(f float64) int {
	if -1 < f && f < 0 || math.IsNaN(f) {
		return math.MaxInt
	}
	return floatToInt(math.Ceil(f))
}

// floatToInt is gojq's float to int conversion: truncation, clamped to the
// int range (NaN becomes math.MinInt).
func floatToInt(x float64) int {
	if math.MinInt <= x && x < math.MaxInt {
		return int(x)
	}
	if x > 0 {
		return math.MaxInt
	}
	return math.MinInt
}

// clampIndex is gojq's index normalisation: negative counts from the end,
// then clamp into [minimum, maximum].
func clampIndex(i, minimum, maximum int) int {
	if i < 0 {
		i += maximum
	}
	if i < minimum {
		return minimum
	} else if i < maximum {
		return i
	}
	return maximum
}

// J.each(v) iterates .[] in a generic for: array elements in order, object
// values in key order. Anything else is gojq's "cannot iterate over" error.
func (r *runtime) luaEach(L *lua.LState) int { return r.each(L, false) }

// J.each_opt(v) is .[]?: no iterations where J.each would raise.
func (r *runtime) luaEachOpt(L *lua.LState) int { return r.each(L, true) }

func (r *runtime) each(L *lua.LState, opt bool) int {
	v := L.Get(1)
	switch x := v.(type) {
	case *lua.LUserData:
		if view, ok := x.Value.(*luaapi.View); ok {
			if view.IsArray() {
				return r.pushIter(L, r.iters.arrayView, x)
			}
			return r.pushIter(L, r.iters.keyed, r.keyedState(L, view.Object(), nil))
		}
	case *lua.LTable:
		if r.vs.TableKind(x) == luaapi.KindArray {
			return r.pushIter(L, r.iters.arrayTable, x)
		}
		return r.pushIter(L, r.iters.keyed, r.keyedState(L, nil, x))
	}
	if !opt {
		r.slow(L, slowIterate, v)
	}
	return r.pushIter(L, r.iters.empty, lua.LNil)
}

func (r *runtime) pushIter(L *lua.LState, fn *lua.LFunction, state lua.LValue) int {
	L.Push(fn)
	L.Push(state)
	L.Push(lua.LNumber(0))
	return 3
}

func (r *runtime) iterEmpty(L *lua.LState) int {
	L.Push(lua.LNil)
	return 1
}

func (r *runtime) iterArrayView(L *lua.LState) int {
	view, _ := luaapi.ViewOf(L.Get(1))
	i := int(L.CheckNumber(2))
	arr := view.Array()
	if i >= len(arr) {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(i + 1))
	L.Push(r.vs.ToLuaView(L, arr[i]))
	return 2
}

func (r *runtime) iterArrayTable(L *lua.LState) int {
	tb := L.CheckTable(1)
	i := int(L.CheckNumber(2))
	if i >= tb.Len() {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(i + 1))
	L.Push(r.orNull(tb.RawGetInt(i + 1)))
	return 2
}

// keyed is the state of an object iteration: the keys in order and the
// object they come from.
type keyed struct {
	keys []string
	obj  map[string]any
	tb   *lua.LTable
}

func (r *runtime) keyedState(L *lua.LState, obj map[string]any, tb *lua.LTable) *lua.LUserData {
	st := &keyed{obj: obj, tb: tb}
	if obj != nil {
		st.keys = sortedKeys(obj)
	} else {
		st.keys = r.tableKeys(L, tb)
	}
	ud := L.NewUserData()
	ud.Value = st
	return ud
}

func (r *runtime) iterKeyed(L *lua.LState) int {
	st := L.CheckUserData(1).Value.(*keyed)
	i := int(L.CheckNumber(2))
	if i >= len(st.keys) {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(i + 1))
	L.Push(r.member(L, st, st.keys[i]))
	return 2
}

func (r *runtime) member(L *lua.LState, st *keyed, k string) lua.LValue {
	if st.obj != nil {
		return r.vs.ToLuaView(L, st.obj[k])
	}
	return r.orNull(st.tb.RawGetString(k))
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// tableKeys returns the keys of an object table in order. A key that is not
// a string makes the table no JSON object: a Lua error.
func (r *runtime) tableKeys(L *lua.LState, tb *lua.LTable) []string {
	var keys []string
	bad := false
	tb.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok {
			keys = append(keys, string(s))
		} else {
			bad = true
		}
	})
	if bad {
		L.RaiseError("jq: object table with a non-string key")
	}
	slices.Sort(keys)
	return keys
}
