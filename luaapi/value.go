package luaapi

import (
	lua "github.com/yuin/gopher-lua"
)

// A JSON (jq) value inside Lua, a "JV", is one of:
//
//   - null: the per-state sentinel Null(L), a userdata whose tostring is
//     "null". Lua nil is never a value: it means "no value".
//   - a boolean (LBool), a number (LNumber, a float64: exact to ±2^53) or a
//     string (LString);
//   - a view: a userdata wrapping a Go map[string]any or []any (see View),
//     read lazily;
//   - a table with JSON semantics: arrays are 1-based without holes (a null
//     element is Null(L)), objects have string keys (an absent key reads as
//     null). The shared metatables ArrayMT and ObjectMT mark a table's kind;
//     an unmarked table is an array when it is non-empty and has key 1, and
//     an object otherwise.

// Kind is the JSON kind of a Lua value.
type Kind uint8

// The kinds. KindInvalid is the zero value so that a forgotten
// classification is never mistaken for null.
const (
	KindInvalid Kind = iota // not a JSON value: nil, a function, foreign userdata …
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

var kindNames = [...]string{"invalid", "null", "boolean", "number", "string", "array", "object"}

// String returns jq's name of the kind ("null", "boolean", …, "object"), or
// "invalid".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Values holds one state's null sentinel and metatables. Fetch it once with
// ValuesOf and keep it where a hot path needs it: every other accessor in
// this file costs a registry lookup.
type Values struct {
	// Null is the state's null sentinel.
	Null *lua.LUserData
	// ArrayMT and ObjectMT are the markers of array and object tables. They
	// carry no metamethods.
	ArrayMT  *lua.LTable
	ObjectMT *lua.LTable

	viewMT *lua.LTable
	// lazy is the state's lazy tables (nil for a state NewState did not
	// make): a lazy table is filled before its kind is read.
	lazy *lazyTables
}

// registryKey names the Values of a state in its registry. The registry is
// shared by all threads (coroutines) of a state, so they agree on the
// sentinel.
const registryKey = "karta.luaapi.values"

// ValuesOf returns the Values of L, creating them on first use.
func ValuesOf(L *lua.LState) *Values {
	if ud, ok := L.G.Registry.RawGetString(registryKey).(*lua.LUserData); ok {
		if vs, ok := ud.Value.(*Values); ok {
			return vs
		}
	}
	vs := &Values{ArrayMT: L.NewTable(), ObjectMT: L.NewTable()}
	nullMT := L.NewTable()
	nullMT.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString("null"))
		return 1
	}))
	nullMT.RawSetString("__metatable", lua.LString("null"))
	vs.Null = L.NewUserData()
	vs.Null.Value = nullMarker{}
	vs.Null.Metatable = nullMT
	vs.viewMT = newViewMetatable(L, vs)
	holder := L.NewUserData()
	holder.Value = vs
	L.G.Registry.RawSetString(registryKey, holder)
	return vs
}

// nullMarker is the Go value inside the null sentinel.
type nullMarker struct{}

// Null returns the null sentinel of L: the same userdata on every call.
func Null(L *lua.LState) *lua.LUserData { return ValuesOf(L).Null }

// ArrayMT returns the metatable that marks array tables in L.
func ArrayMT(L *lua.LState) *lua.LTable { return ValuesOf(L).ArrayMT }

// ObjectMT returns the metatable that marks object tables in L.
func ObjectMT(L *lua.LState) *lua.LTable { return ValuesOf(L).ObjectMT }

// NewArray returns an empty table marked as an array.
func NewArray(L *lua.LState) *lua.LTable { return ValuesOf(L).NewArray(L, 0) }

// NewObject returns an empty table marked as an object.
func NewObject(L *lua.LState) *lua.LTable { return ValuesOf(L).NewObject(L, 0) }

// NewArray returns an empty array table with room for n elements.
func (vs *Values) NewArray(L *lua.LState, n int) *lua.LTable {
	tb := L.CreateTable(n, 0)
	tb.Metatable = vs.ArrayMT
	return tb
}

// NewObject returns an empty object table with room for n keys.
func (vs *Values) NewObject(L *lua.LState, n int) *lua.LTable {
	tb := L.CreateTable(0, n)
	tb.Metatable = vs.ObjectMT
	return tb
}

// Kind returns the JSON kind of lv.
func (vs *Values) Kind(lv lua.LValue) Kind {
	switch x := lv.(type) {
	case lua.LBool:
		return KindBool
	case lua.LNumber:
		return KindNumber
	case lua.LString:
		return KindString
	case *lua.LTable:
		return vs.TableKind(x)
	case *lua.LUserData:
		if x == vs.Null {
			return KindNull
		}
		if v, ok := x.Value.(*View); ok {
			if v.isArr {
				return KindArray
			}
			return KindObject
		}
	}
	return KindInvalid
}

// TableKind returns KindArray or KindObject for tb: its marker if it has
// one, else array exactly when tb is non-empty with key 1.
func (vs *Values) TableKind(tb *lua.LTable) Kind {
	if lz := vs.lazy; lz != nil && tb.Metatable == lua.LValue(lz.meta) {
		lz.fill(lz.L, tb)
	}
	switch tb.Metatable {
	case lua.LValue(vs.ArrayMT):
		return KindArray
	case lua.LValue(vs.ObjectMT):
		return KindObject
	}
	if tb.RawGetInt(1) != lua.LNil {
		return KindArray
	}
	return KindObject
}
