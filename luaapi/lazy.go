package luaapi

import (
	"sort"

	lua "github.com/yuin/gopher-lua"
)

// Lazy tables hand a decoded JSON value (map[string]any, []any) to a script
// as plain Lua tables that convert themselves on first use, one level at a
// time: a health script that reads obj.status.conditions converts obj, its
// status and its conditions, and leaves spec and metadata as Go values.
//
// A lazy table is an empty *lua.LTable whose metatable is its state's lazy
// metatable; the state keeps the Go value it stands for. The metatable's
// __index, __newindex and __len fill the table — its entries become what
// eager conversion would have put there, nested maps and slices being lazy
// tables in turn — and drop the metatable, so from then on it is a plain
// table. The table keeps its identity: a script that holds it, compares it
// or stores it elsewhere sees one table, filled or not.
//
// Everything that reads or writes a table without metamethods fills a lazy
// table first: the sandbox's next, pairs, ipairs, unpack, the table
// library, os.time and the memory guard's stores (guardSet), so that a
// script observes exactly the eager table. (The sandbox has no rawget,
// rawset, rawequal, getmetatable or setmetatable.) Go code that reads a
// script's result must call FillLazy on each table before reading it raw,
// or read an unfilled table's Go value with LazySource.
//
// A fill runs in a metamethod call, so the first access to a lazy table
// takes one call frame more than the same access to a plain table: a
// script recursing to within two frames of the call depth limit reaches
// it one level sooner. Nothing else a script can observe differs.
//
// Filling is not charged to the memory guard: the value was converted
// before the call, outside the guard, when it was converted eagerly, and
// it is bounded by the object. Lazy tables need a NewState state; EndLazy
// forgets the Go values when the call is over.

// LazyRules say how a lazy table converts its Go value. Objects become
// tables keyed by their member names, arrays tables of their elements with
// nil elements left out (later ones move down, as gopher-lua's Append and
// gopher-json's DecodeValue do), and a member whose value converts to nil
// is absent.
type LazyRules struct {
	// SortKeys inserts an object's members in sorted order, so that
	// pairs visits them in the same order on every call; otherwise in
	// Go's map order.
	SortKeys bool
	// json fills as ToLuaTable converts (lazy_json.go): marked tables, a
	// null element Null; the Go value is normalized (NormalizeJSON).
	json bool
}

// lazyTables is a state's lazy metatable and the Go values of its
// unfilled lazy tables.
type lazyTables struct {
	meta *lua.LTable
	src  map[*lua.LTable]lazySource
	// keys is a fill's scratch: an object's member names (fills do
	// not nest).
	keys []string
	// L is the state's main thread, which fills the tables that Go code
	// meets without a state at hand (Values.TableKind).
	L *lua.LState
}

type lazySource struct {
	v     any
	rules *LazyRules
}

func newLazyTables(L *lua.LState) *lazyTables {
	lz := &lazyTables{src: map[*lua.LTable]lazySource{}, L: L}
	ValuesOf(L).lazy = lz
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		lz.fill(L, t)
		L.Push(t.RawGet(L.Get(2)))
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		lz.fill(L, t)
		L.RawSet(t, L.Get(2), L.Get(3))
		return 0
	}))
	mt.RawSetString("__len", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		lz.fill(L, t)
		L.Push(lua.LNumber(t.Len()))
		return 1
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	lz.meta = mt
	return lz
}

// lazyOf is L's lazy tables; nil for a state NewState did not make.
func lazyOf(L *lua.LState) *lazyTables { return callConfigOf(L).lazy }

// NewLazy converts v for a script: a map[string]any or []any becomes a
// lazy table, anything else lazyScalar(v). L must come from NewState.
// rules must not change while the state may still fill tables made with
// them.
func NewLazy(L *lua.LState, v any, rules *LazyRules) lua.LValue {
	lz := lazyOf(L)
	if lz == nil {
		panic("luaapi: NewLazy needs a state made by NewState")
	}
	return lz.value(v, rules)
}

func (lz *lazyTables) value(v any, rules *LazyRules) lua.LValue {
	if w, ok := v.(*View); ok && rules.json {
		v = w.Value() // as ToLuaTable unwraps it
	}
	switch v.(type) {
	case map[string]any, []any:
		t := &lua.LTable{Metatable: lz.meta}
		lz.src[t] = lazySource{v: v, rules: rules}
		return t
	case nil:
		return lua.LNil
	}
	return lazyScalar(v)
}

// lazyScalar converts a value that is neither an object nor an array: a
// bool, a string or a Go number (nil is Lua's nil). It cannot fail: the
// caller checks the whole value before it hands it out (a conversion
// error must not depend on what a script reads); anything else is nil.
func lazyScalar(v any) lua.LValue {
	switch x := v.(type) {
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	}
	if f, ok := GoNumber(v); ok {
		return lua.LNumber(f)
	}
	return lua.LNil
}

// fill converts t's own level if t is an unfilled lazy table of lz.
func (lz *lazyTables) fill(L *lua.LState, t *lua.LTable) {
	if t.Metatable != lz.meta {
		return
	}
	src, ok := lz.src[t]
	delete(lz.src, t)
	if !ok {
		// The call that made it is over (EndLazy): an empty table.
		t.Metatable = lua.LNil
		return
	}
	switch x := src.v.(type) {
	case map[string]any:
		// A table sized for the members, as eager conversion makes it,
		// takes t's place (gopher-lua cannot grow a table's parts in
		// advance, and t must stay the same table). The members are
		// counted first, so that their tables come from one slab.
		keys := lz.keys[:0]
		var count slabCounter
		for k, e := range x {
			keys = append(keys, k)
			count.add(e)
		}
		if src.rules.SortKeys {
			sort.Strings(keys)
		}
		slabs := count.slabs()
		*t = *L.CreateTable(0, len(x))
		if src.rules.json {
			t.Metatable = ValuesOf(L).ObjectMT
		}
		for _, k := range keys {
			if lv := lz.member(x[k], src.rules, &slabs); lv != lua.LNil {
				t.RawSetString(k, lv)
			}
		}
		// The scratch keeps no string alive past the fill.
		clear(keys)
		lz.keys = keys[:0]
	case []any:
		var count slabCounter
		for _, e := range x {
			count.add(e)
		}
		slabs := count.slabs()
		*t = *L.CreateTable(len(x), 0)
		if src.rules.json {
			vs := ValuesOf(L)
			t.Metatable = vs.ArrayMT
			for i, e := range x {
				lv := lz.member(e, src.rules, &slabs)
				if lv == lua.LNil {
					lv = vs.Null
				}
				t.RawSetInt(i+1, lv)
			}
			return
		}
		for _, e := range x {
			t.Append(lz.member(e, src.rules, &slabs)) // nil is left out
		}
	}
}

// FillLazy fills t if it is an unfilled lazy table, so that raw reads and
// writes (Next, Len, RawGet, ForEach) see its entries. Go functions given
// tables by scripts call it before touching them raw.
func FillLazy(L *lua.LState, t *lua.LTable) {
	if t.Metatable == lua.LNil {
		return
	}
	if lz := lazyOf(L); lz != nil {
		lz.fill(L, t)
	}
}

// fillArg fills the n-th argument of a Go function if it is a lazy table.
func fillArg(L *lua.LState, n int) {
	if t, ok := L.Get(n).(*lua.LTable); ok {
		FillLazy(L, t)
	}
}

// LazySource reports the Go value an unfilled lazy table of L stands for.
// A result read straight from it, by the rules it was made with, is what
// filling the table and reading the tables would give.
func LazySource(L *lua.LState, t *lua.LTable) (any, bool) {
	if t.Metatable == lua.LNil {
		return nil, false
	}
	lz := lazyOf(L)
	if lz == nil || t.Metatable != lz.meta {
		return nil, false
	}
	src, ok := lz.src[t]
	return src.v, ok
}

// DropLazy forgets the Go value of t if it is an unfilled lazy table of L,
// which becomes an empty plain table: for Go code that made a lazy table
// (a Go function's result it called itself), read it, and hands it to no
// script, so that its value is not kept until the state's next EndLazy.
func DropLazy(L *lua.LState, t *lua.LTable) {
	lz := lazyOf(L)
	if lz == nil || t.Metatable != lz.meta {
		return
	}
	delete(lz.src, t)
	t.Metatable = lua.LNil
}

// EndLazy forgets the Go values of L's unfilled lazy tables, at the end of
// the call that made them, so that a pooled state keeps no object alive.
// A table of the call still reachable afterwards would fill as empty.
func EndLazy(L *lua.LState) {
	if lz := lazyOf(L); lz != nil {
		clear(lz.src)
	}
}
