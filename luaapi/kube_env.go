package luaapi

import (
	lua "github.com/yuin/gopher-lua"
)

// KubeEnv returns a fresh per-call environment for a Karmada script: like
// NewEnv, a table that reads through to the read-only sandbox and whose _G
// is itself, with one difference that Karmada's scripts can observe.
//
// Karmada runs a script in the state's one global table, so a global the
// script assigns replaces the library value of that name for good:
// FlinkDeployment's AggregateStatus sets error to the empty string and later
// to currentStatus.error, which may be nil, and then reads error
// expecting nil. In a NewEnv table the nil assignment removes the key and
// the read falls through to the sandbox's error function. Here every name
// the script assigns (rawset aside, which the sandbox lacks) is
// remembered, and such a name never falls through again: it reads as the
// script left it, nil included.
func KubeEnv(L *lua.LState) *lua.LTable {
	sandbox := sandboxTable(L)
	assigned := map[lua.LValue]bool{}
	env := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		key := L.Get(2)
		if assigned[key] {
			L.Push(lua.LNil)
		} else {
			L.Push(sandbox.RawGet(key))
		}
		return 1
	}))
	// __newindex runs only for names absent from env: the first
	// assignment of each, or one after the name was set to nil.
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		key := L.Get(2)
		assigned[key] = true
		L.CheckTable(1).RawSet(key, L.Get(3))
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	env.Metatable = mt
	env.RawSetString("_G", env)
	return env
}
