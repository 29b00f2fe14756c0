package luaapi

import (
	lua "github.com/yuin/gopher-lua"
)

// readOnlyKey marks a read-only proxy's metatable with the proxy's name.
// Scripts cannot see metatables (getmetatable is absent), so they cannot
// read or forge the mark.
const readOnlyKey = "__karta_readonly"

// NewReadOnly returns a read-only view of target named name: an empty proxy
// table whose metatable reads through to target (__index) and refuses
// writes (__newindex raises `attempt to modify read-only table "name"`).
// The sandbox's table.insert, table.remove and table.sort, which write
// without metamethods, refuse proxies too.
//
// The protection is shallow: a table stored in target is handed out as it
// is, so modules build nested namespaces (karta.generated) as read-only
// proxies themselves. Go code that later changes target is seen through the
// proxy.
//
// pairs(proxy) lists target's entries through a __pairs metamethod, without
// handing out target; next(proxy) and #proxy see the empty proxy, as raw
// operations on any proxy do.
func NewReadOnly(L *lua.LState, name string, target *lua.LTable) *lua.LTable {
	next := L.NewFunction(func(L *lua.LState) int {
		k, v := target.Next(L.Get(2))
		if k == lua.LNil {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(k)
		L.Push(v)
		return 2
	})
	mt := L.NewTable()
	mt.RawSetString("__index", target)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("attempt to modify read-only table %q", name)
		return 0
	}))
	mt.RawSetString("__pairs", L.NewFunction(func(L *lua.LState) int {
		L.Push(next)
		L.Push(L.Get(1))
		L.Push(lua.LNil)
		return 3
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	mt.RawSetString(readOnlyKey, lua.LString(name))
	proxy := L.NewTable()
	proxy.Metatable = mt
	return proxy
}

// readOnlyName returns the name of a NewReadOnly proxy, and whether t is
// one. Go functions that write into tables they are given with RawSet
// should refuse proxies.
func readOnlyName(t *lua.LTable) (string, bool) {
	mt, ok := t.Metatable.(*lua.LTable)
	if !ok {
		return "", false
	}
	name, ok := mt.RawGetString(readOnlyKey).(lua.LString)
	return string(name), ok
}

// guardTableWrites wraps the table library functions that write their
// first argument raw, so that table.insert(string, x) cannot grow the
// shared string proxy.
func guardTableWrites(L *lua.LState, tbl *lua.LTable) {
	for _, name := range []string{"insert", "remove", "sort"} {
		orig := tbl.RawGetString(name).(*lua.LFunction).GFunction
		tbl.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok {
				if n, ro := readOnlyName(t); ro {
					L.RaiseError("attempt to modify read-only table %q", n)
				}
			}
			return orig(L)
		}))
	}
}
