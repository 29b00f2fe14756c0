package jqlua

import (
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// Arithmetic. Numbers are computed here under gojq's int rules when both
// operands are int-like and IEEE rules otherwise (see intLike); strings,
// null and every other combination (array concatenation, object merges,
// string repetition and splitting, all errors) go to gojq.

// exactResult records when an integer result leaves ±2^53, where gojq's
// ints stay exact and a float64 does not.
func (r *runtime) exactResult(x, y, res float64) {
	if math.Abs(res) > luaapi.MaxExactInt && intLike(x) && intLike(y) {
		r.inexact = true
	}
}

func numbers(L *lua.LState) (x, y float64, ok bool) {
	a, okA := L.Get(1).(lua.LNumber)
	b, okB := L.Get(2).(lua.LNumber)
	return float64(a), float64(b), okA && okB
}

// J.plus(a, b) is a + b.
func (r *runtime) luaPlus(L *lua.LState) int {
	if x, y, ok := numbers(L); ok {
		res := x + y
		r.exactResult(x, y, res)
		L.Push(lua.LNumber(res))
		return 1
	}
	a, b := L.Get(1), L.Get(2)
	if s, ok := a.(lua.LString); ok {
		if t, ok := b.(lua.LString); ok {
			luaapi.ChargeMemory(L, len(s)+len(t))
			L.Push(s + t)
			return 1
		}
	}
	switch {
	case a == lua.LValue(r.null):
		L.Push(b)
	case b == lua.LValue(r.null):
		L.Push(a)
	default:
		L.Push(r.slow(L, slowPlus, a, b))
	}
	return 1
}

// J.minus(a, b) is a - b.
func (r *runtime) luaMinus(L *lua.LState) int {
	if x, y, ok := numbers(L); ok {
		res := x - y
		r.exactResult(x, y, res)
		L.Push(lua.LNumber(res))
		return 1
	}
	L.Push(r.slow(L, slowMinus, L.Get(1), L.Get(2)))
	return 1
}

// J.times(a, b) is a * b.
func (r *runtime) luaTimes(L *lua.LState) int {
	if x, y, ok := numbers(L); ok {
		res := x * y
		if intLike(x) && intLike(y) {
			if res == 0 {
				res = 0 // an int product has no sign of zero
			}
			r.exactResult(x, y, res)
		}
		L.Push(lua.LNumber(res))
		return 1
	}
	L.Push(r.slow(L, slowTimes, L.Get(1), L.Get(2)))
	return 1
}

// J.divide(a, b) is a / b.
func (r *runtime) luaDivide(L *lua.LState) int {
	if x, y, ok := numbers(L); ok && y != 0 {
		res := x / y
		if intLike(x) && intLike(y) && math.Mod(x, y) == 0 && res == 0 {
			res = 0 // an exact int quotient has no sign of zero
		}
		L.Push(lua.LNumber(res))
		return 1
	}
	L.Push(r.slow(L, slowDivide, L.Get(1), L.Get(2)))
	return 1
}

// J.modulo(a, b) is a % b: both operands truncated to integers, the sign
// of the dividend, NaN if either is NaN.
func (r *runtime) luaModulo(L *lua.LState) int {
	if x, y, ok := numbers(L); ok {
		if math.IsNaN(x) || math.IsNaN(y) {
			L.Push(lua.LNumber(math.NaN()))
			return 1
		}
		if d := floatToInt(y); d != 0 {
			res := float64(floatToInt(x) % d)
			if math.Abs(res) > luaapi.MaxExactInt {
				r.inexact = true
			}
			L.Push(lua.LNumber(res))
			return 1
		}
	}
	L.Push(r.slow(L, slowModulo, L.Get(1), L.Get(2)))
	return 1
}

// J.negate(a) is -a.
func (r *runtime) luaNegate(L *lua.LState) int {
	if n, ok := L.Get(1).(lua.LNumber); ok {
		x := float64(n)
		if intLike(x) && x == 0 {
			L.Push(lua.LNumber(0))
		} else {
			L.Push(lua.LNumber(-x))
		}
		return 1
	}
	L.Push(r.slow(L, slowNegate, L.Get(1)))
	return 1
}

// J.unary_plus(a) is +a: a number, or an error.
func (r *runtime) luaUnaryPlus(L *lua.LState) int {
	if n, ok := L.Get(1).(lua.LNumber); ok {
		L.Push(n)
		return 1
	}
	L.Push(r.slow(L, slowUnaryPlus, L.Get(1)))
	return 1
}

// J.length(v).
func (r *runtime) luaLength(L *lua.LState) int {
	v := L.Get(1)
	switch x := v.(type) {
	case lua.LNumber:
		L.Push(lua.LNumber(math.Abs(float64(x))))
		return 1
	case lua.LString:
		L.Push(lua.LNumber(utf8.RuneCountInString(string(x))))
		return 1
	case *lua.LUserData:
		if x == r.null {
			L.Push(lua.LNumber(0))
			return 1
		}
		if view, ok := x.Value.(*luaapi.View); ok {
			L.Push(lua.LNumber(view.Len()))
			return 1
		}
	case *lua.LTable:
		if r.vs.TableKind(x) == luaapi.KindArray {
			L.Push(lua.LNumber(x.Len()))
		} else {
			L.Push(lua.LNumber(len(r.tableKeys(L, x))))
		}
		return 1
	}
	L.Push(r.slow(L, slowLength, v))
	return 1
}

// J.keys(v): an array's indexes or an object's sorted keys.
func (r *runtime) luaKeys(L *lua.LState) int {
	v := L.Get(1)
	switch r.vs.Kind(v) {
	case luaapi.KindArray:
		L.Push(r.indexes(L, r.arrayLen(v)))
	case luaapi.KindObject:
		keys := r.objectKeys(L, v)
		out := r.vs.NewArray(L, len(keys))
		for i, k := range keys {
			out.RawSetInt(i+1, lua.LString(k))
		}
		L.Push(out)
	default:
		L.Push(r.slow(L, slowKeys, v))
	}
	return 1
}

// objectKeys returns the sorted keys of an object view or table.
func (r *runtime) objectKeys(L *lua.LState, v lua.LValue) []string {
	if view, ok := luaapi.ViewOf(v); ok {
		return sortedKeys(view.Object())
	}
	return r.tableKeys(L, v.(*lua.LTable))
}

func (r *runtime) indexes(L *lua.LState, n int) *lua.LTable {
	out := r.vs.NewArray(L, n)
	for i := range n {
		out.RawSetInt(i+1, lua.LNumber(i))
	}
	return out
}

// J.has(v, k).
func (r *runtime) luaHas(L *lua.LState) int {
	v, k := L.Get(1), L.Get(2)
	if v == lua.LValue(r.null) {
		L.Push(lua.LFalse)
		return 1
	}
	switch r.vs.Kind(v) {
	case luaapi.KindObject:
		if s, ok := k.(lua.LString); ok {
			if view, ok := luaapi.ViewOf(v); ok {
				_, present := view.Object()[string(s)]
				L.Push(lua.LBool(present))
			} else {
				L.Push(lua.LBool(v.(*lua.LTable).RawGetString(string(s)) != lua.LNil))
			}
			return 1
		}
	case luaapi.KindArray:
		if n, ok := k.(lua.LNumber); ok {
			i := floatToInt(float64(n))
			L.Push(lua.LBool(0 <= i && i < r.arrayLen(v)))
			return 1
		}
	}
	L.Push(r.slow(L, slowHas, v, k))
	return 1
}

func (r *runtime) arrayLen(v lua.LValue) int {
	if view, ok := luaapi.ViewOf(v); ok {
		return view.Len()
	}
	return v.(*lua.LTable).Len()
}

// J.to_entries(v): [{key, value}] in key order (indexes for an array).
func (r *runtime) luaToEntries(L *lua.LState) int {
	v := L.Get(1)
	vals, keys, ok := r.members(L, v)
	if !ok {
		L.Push(r.slow(L, slowToEntries, v))
		return 1
	}
	out := r.vs.NewArray(L, len(vals))
	for i, val := range vals {
		e := r.vs.NewObject(L, 2)
		if keys != nil {
			e.RawSetString("key", lua.LString(keys[i]))
		} else {
			e.RawSetString("key", lua.LNumber(i))
		}
		e.RawSetString("value", val)
		out.RawSetInt(i+1, e)
	}
	L.Push(out)
	return 1
}

// members returns the values of an array, or the values and sorted keys of
// an object; ok is false for anything else.
func (r *runtime) members(L *lua.LState, v lua.LValue) (vals []lua.LValue, keys []string, ok bool) {
	switch x := v.(type) {
	case *lua.LUserData:
		view, isView := x.Value.(*luaapi.View)
		if !isView {
			return nil, nil, false
		}
		if view.IsArray() {
			arr := view.Array()
			vals = make([]lua.LValue, len(arr))
			for i, e := range arr {
				vals[i] = r.vs.ToLuaView(L, e)
			}
			return vals, nil, true
		}
		obj := view.Object()
		keys = sortedKeys(obj)
		vals = make([]lua.LValue, len(keys))
		for i, k := range keys {
			vals[i] = r.vs.ToLuaView(L, obj[k])
		}
		return vals, keys, true
	case *lua.LTable:
		if r.vs.TableKind(x) == luaapi.KindArray {
			n := x.Len()
			vals = make([]lua.LValue, n)
			for i := range n {
				vals[i] = r.orNull(x.RawGetInt(i + 1))
			}
			return vals, nil, true
		}
		keys = r.tableKeys(L, x)
		if keys == nil {
			keys = []string{}
		}
		vals = make([]lua.LValue, len(keys))
		for i, k := range keys {
			vals[i] = x.RawGetString(k)
		}
		return vals, keys, true
	}
	return nil, nil, false
}

// J.add(v) is jq's add: the values of an array or object combined with +,
// nulls skipped. Sums of numbers and concatenations of strings are done
// here, everything else in gojq.
func (r *runtime) luaAdd(L *lua.LState) int {
	v := L.Get(1)
	vals, _, ok := r.members(L, v)
	if !ok {
		L.Push(r.slow(L, slowAdd, v))
		return 1
	}
	var acc lua.LValue = r.null
	var sb strings.Builder
	strs := false
	for _, x := range vals {
		switch e := x.(type) {
		case lua.LNumber:
			if strs {
				L.Push(r.slow(L, slowAdd, v))
				return 1
			}
			if a, isNum := acc.(lua.LNumber); isNum {
				res := float64(a) + float64(e)
				r.exactResult(float64(a), float64(e), res)
				acc = lua.LNumber(res)
			} else {
				acc = e
			}
		case lua.LString:
			if acc != lua.LValue(r.null) && !strs {
				L.Push(r.slow(L, slowAdd, v))
				return 1
			}
			strs = true
			luaapi.ChargeMemory(L, 2*len(e)) // the builder grows by doubling
			sb.WriteString(string(e))
		default:
			if x != lua.LValue(r.null) {
				L.Push(r.slow(L, slowAdd, v))
				return 1
			}
		}
	}
	if strs {
		L.Push(lua.LString(sb.String()))
	} else {
		L.Push(acc)
	}
	return 1
}

// J.tostring(v): strings as they are, everything else as gojq's compact
// JSON with sorted keys.
func (r *runtime) luaToString(L *lua.LState) int {
	switch x := L.Get(1).(type) {
	case lua.LString:
		L.Push(x)
	case lua.LNumber:
		L.Push(lua.LString(formatNumber(float64(x))))
	case lua.LBool:
		if x {
			L.Push(lua.LString("true"))
		} else {
			L.Push(lua.LString("false"))
		}
	default:
		// gojq serialises, charged to the call: a value that shares
		// subtrees is as long as all its copies.
		L.Push(r.slow(L, slowToString, x))
	}
	return 1
}

// J.tonumber(v): numbers as they are; strings are parsed by gojq itself,
// which decides what a valid number is.
func (r *runtime) luaToNumber(L *lua.LState) int {
	v := L.Get(1)
	if n, ok := v.(lua.LNumber); ok {
		L.Push(n)
		return 1
	}
	res, err := r.slowGo(L, slowToNumber, v)
	if err != nil {
		r.raiseGo(L, err)
	}
	switch n := res.(type) {
	case *big.Int:
		r.inexact = true
	case int:
		if n > luaapi.MaxExactInt || n < -luaapi.MaxExactInt {
			r.inexact = true
		}
	}
	L.Push(r.vs.ToLuaView(L, res))
	return 1
}

// J.type(v): jq's type name.
func (r *runtime) luaType(L *lua.LState) int {
	v := L.Get(1)
	k := r.vs.Kind(v)
	if k == luaapi.KindInvalid {
		r.toGo(L, v) // raises the conversion error
	}
	L.Push(lua.LString(k.String()))
	return 1
}
