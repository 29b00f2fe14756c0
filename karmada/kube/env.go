package kube

import (
	lua "github.com/yuin/gopher-lua"
)

// Env returns a fresh per-call environment for a Karmada script: like
// luaapi.NewEnv, a table that reads through to the read-only sandbox and whose _G
// is itself, with one difference that Karmada's scripts can observe.
//
// Karmada runs a script in the state's one global table, so a global the
// script assigns replaces the library value of that name for good:
// FlinkDeployment's AggregateStatus sets error to the empty string and later
// to currentStatus.error, which may be nil, and then reads error
// expecting nil. In a luaapi.NewEnv table the nil assignment removes the key and
// the read falls through to the sandbox's error function. Here every name
// the script assigns (rawset aside, which the sandbox lacks) is
// remembered, and such a name never falls through again: it reads as the
// script left it, nil included.
//
// The metatable, its two functions and the record of assigned names are
// made once per state, kept in its registry (which scripts cannot reach),
// and reused by every call's environment: an environment lives no longer
// than its call (nothing a script can reach outlives it: the sandbox is
// read-only), and a state runs one call at a time, so the record is
// cleared for each new one.
func Env(L *lua.LState) *lua.LTable {
	ud, ok := L.G.Registry.RawGetString(envMetaKey).(*lua.LUserData)
	if !ok {
		ud = L.NewUserData()
		ud.Value = newKubeEnvMeta(L)
		L.G.Registry.RawSetString(envMetaKey, ud)
	}
	m := ud.Value.(*kubeEnvMeta)
	clear(m.assigned)
	return m.env(L)
}

// envMetaKey is the registry key of a state's kubeEnvMeta.
const envMetaKey = "karta.kube.envmeta"

// envGlobals sizes an environment table as luaapi.NewEnv does: for a few
// globals, where gopher-lua's first string key otherwise makes room for 32.
const envGlobals = 8

// kubeEnvMeta is Env's metatables and the names the current call's
// script has assigned. An environment starts under fast, whose __index is
// the sandbox table itself: gopher-lua follows a table __index without a
// function call, and a global read (pairs, kube, table…) is the commonest
// operation of a script. Only a name that is also the sandbox's can fall
// through wrongly, so the first assignment of such a name moves the
// environment to slow, whose __index function consults assigned.
type kubeEnvMeta struct {
	fast, slow *lua.LTable
	assigned   map[lua.LValue]bool
}

func newKubeEnvMeta(L *lua.LState) *kubeEnvMeta {
	m := &kubeEnvMeta{assigned: map[lua.LValue]bool{}}
	sandbox := L.G.Global
	// __newindex runs only for names absent from env: the first
	// assignment of each, or one after the name was set to nil.
	newindex := L.NewFunction(func(L *lua.LState) int {
		env, key := L.CheckTable(1), L.Get(2)
		m.assigned[key] = true
		if env.Metatable == m.fast && sandbox.RawGet(key) != lua.LNil {
			env.Metatable = m.slow
		}
		env.RawSet(key, L.Get(3))
		return 0
	})
	m.fast = L.NewTable()
	m.fast.RawSetString("__index", sandbox)
	m.fast.RawSetString("__newindex", newindex)
	m.fast.RawSetString("__metatable", lua.LFalse)
	m.slow = L.NewTable()
	m.slow.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		key := L.Get(2)
		if m.assigned[key] {
			L.Push(lua.LNil)
		} else {
			L.Push(sandbox.RawGet(key))
		}
		return 1
	}))
	m.slow.RawSetString("__newindex", newindex)
	m.slow.RawSetString("__metatable", lua.LFalse)
	return m
}

// env is a fresh environment table under m.
func (m *kubeEnvMeta) env(L *lua.LState) *lua.LTable {
	env := L.CreateTable(0, envGlobals) // as luaapi.NewEnv sizes it
	env.Metatable = m.fast
	env.RawSetString("_G", env)
	return env
}
