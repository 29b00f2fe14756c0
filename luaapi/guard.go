package luaapi

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Approximate sizes charged to the memory guard, in bytes, from gopher-lua's
// data structures on 64-bit Go: a table is a struct of slices and maps
// (about 100 bytes empty, more once its hash part exists), a slot of its
// array part an interface value (16 bytes) plus the value's own box (8 for
// a number) and its share of the array's growth (appending doubles the
// slice, and the old one is live while it is copied: 48 bytes a slot at
// the peak), a slot
// of its hash part a map entry plus its key in the key list, and a closure
// a struct with its upvalue slice. They err on the high side.
const (
	tableCost     = 160
	arraySlotCost = 56
	hashSlotCost  = 80
	closureCost   = 160
)

// installGuards puts the guard functions of the rewrite (guard_rewrite.go)
// in the sandbox.
func installGuards(L *lua.LState, sandbox *lua.LTable, maxString int) {
	limit := formatSize(maxString)
	sandbox.RawSetString(guardConcatName, L.NewFunction(func(L *lua.LState) int {
		return guardConcat(L, maxString, limit)
	}))
	sandbox.RawSetString(guardSetName, L.NewFunction(guardSet))
	sandbox.RawSetString(guardTableName, L.NewFunction(guardTable))
	sandbox.RawSetString(guardKeyName, L.NewFunction(guardKey))
	sandbox.RawSetString(guardFnName, L.NewFunction(guardFn))
}

// guardConcat is a .. b .. c: the operands are joined left to right, as the
// VM joins them, after the result is checked against the string size limit
// and charged to the memory guard. Operands that are not strings or numbers
// go through their __concat metamethod, pairwise from the right, as the VM
// does.
func guardConcat(L *lua.LState, maxLen int, limit string) int {
	n := L.GetTop()
	rhs := L.Get(n)
	for i := n - 1; i >= 1; {
		// The longest run of strings and numbers ending at rhs is
		// joined at once.
		j := i
		for j >= 1 && lua.LVCanConvToString(L.Get(j)) {
			j--
		}
		if lua.LVCanConvToString(rhs) && j < i {
			parts := make([]string, 0, i-j+1)
			size := 0
			for k := j + 1; k <= i; k++ {
				s := lua.LVAsString(L.Get(k))
				size += len(s)
				parts = append(parts, s)
			}
			last := lua.LVAsString(rhs)
			size += len(last)
			if size > maxLen {
				raiseLimit(L, KindStringSize, limit)
			}
			chargeMemory(L, size)
			rhs = lua.LString(strings.Join(append(parts, last), ""))
			i = j
			continue
		}
		lhs := L.Get(i)
		op := L.GetMetaField(lhs, "__concat")
		if op.Type() != lua.LTFunction {
			op = L.GetMetaField(rhs, "__concat")
		}
		if op.Type() != lua.LTFunction {
			L.RaiseError("cannot perform concat operation between %v and %v", lhs.Type().String(), rhs.Type().String())
		}
		L.Push(op)
		L.Push(lhs)
		L.Push(rhs)
		L.Call(2, 1)
		rhs = L.Get(-1)
		L.Pop(1)
		i--
	}
	if n == 1 && !lua.LVCanConvToString(rhs) {
		L.RaiseError("cannot perform concat operation on a %v value", rhs.Type().String())
	}
	L.Push(rhs)
	return 1
}

// guardSet is t[k] = v. A store that adds to a plain table is charged
// before it happens: an integer key beyond the table's length grows its
// array part to that key (t[60000000] = true would grow it by 60 million
// slots inside one instruction), any other new key adds a hash slot. The
// store itself is the VM's, metamethods included.
func guardSet(L *lua.LState) int {
	obj, key, val := L.Get(1), L.Get(2), L.Get(3)
	if t, ok := obj.(*lua.LTable); ok {
		FillLazy(L, t) // charged as the eager table would be
	}
	if t, ok := obj.(*lua.LTable); ok && val != lua.LNil && t.RawGet(key) == lua.LNil {
		if k, ok := key.(lua.LNumber); ok && k >= 1 && float64(k) == float64(int64(k)) && float64(k) < float64(lua.MaxArrayIndex) {
			if grow := int64(k) - int64(t.Len()); grow > 0 {
				chargeMemory(L, int(min(grow, 1<<40))*arraySlotCost)
			}
		} else {
			chargeMemory(L, hashSlotCost)
		}
	}
	L.SetTable(obj, key, val)
	return 0
}

// guardTable charges a table made by a constructor ({...}) for itself, its
// array part and its keyed fields (the second argument, counted at
// compile time).
func guardTable(L *lua.LState) int {
	t := L.CheckTable(1)
	keyed := L.OptInt(2, 0)
	chargeMemory(L, tableCost+t.Len()*arraySlotCost+keyed*hashSlotCost)
	L.SetTop(1)
	return 1
}

// guardKey is a constructor's computed or large key, [k] = v: the VM
// stores it into the new table inside the constructor, and an integer key
// grows the array part up to it ({[50000000] = 1} would allocate 50
// million slots before the constructor's guardTable runs). The table is
// new, so the growth is at most k slots: that is charged before the key
// reaches the VM. The key is returned unchanged.
func guardKey(L *lua.LState) int {
	if k, ok := L.Get(1).(lua.LNumber); ok && k > smallIntKey && float64(k) < float64(lua.MaxArrayIndex) && float64(k) == float64(int64(k)) {
		chargeMemory(L, int(k)*arraySlotCost)
	}
	L.SetTop(1)
	return 1
}

// ChargeTable charges one empty table that a Go function makes for a
// script (karta.object(), karta.array()) to the running call's memory
// guard, as guardTable charges a constructor's {}, and raises a memory
// LimitError first if that passes the limit. Outside a call it does
// nothing.
func ChargeTable(L *lua.LState) { chargeMemory(L, tableCost) }

// guardFn charges a closure made as a value.
func guardFn(L *lua.LState) int {
	L.CheckFunction(1)
	chargeMemory(L, closureCost)
	L.SetTop(1)
	return 1
}
