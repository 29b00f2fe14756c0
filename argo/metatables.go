package argo

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// Argo CD opens Lua's base library for every script it runs (util/lua
// lua.go opens package, base, table and its safe os), so its scripts may
// call getmetatable and setmetatable: CronJob's create-job and
// CronWorkflow's create-workflow deep-copy objects with
// setmetatable(copy, getmetatable(orig)). karta's sandbox leaves both out
// for Kartas (docs/security.md); an Argo CD script gets them back, each
// state with its own pair, within the sandbox's limits:
//
//   - getmetatable returns what the script itself installed with
//     setmetatable (or a __metatable field, as Lua does). The sandbox's
//     own metatables — the per-call environment's, the read-only
//     libraries', a lazy table's — are nil to the script, as they do not
//     exist in Argo CD's runtime (its tables of obj are plain tables), and
//     handing them out would let one run change the next one's sandbox. A
//     value that is not a table gets nil: the string metatable is the
//     pooled state's, shared by every run.
//   - setmetatable fills a lazy table first (it becomes the plain table
//     Argo CD would have) and refuses to replace a metatable the script
//     did not install ("cannot change a protected metatable", Lua's
//     message for a __metatable field).
type metatables struct {
	// own holds the metatables scripts installed during the current run;
	// reset clears it when the run ends.
	own map[*lua.LTable]struct{}
	get *lua.LFunction
	set *lua.LFunction
}

func newMetatables(L *lua.LState) *metatables {
	m := &metatables{own: map[*lua.LTable]struct{}{}}
	m.get = L.NewFunction(m.getmetatable)
	m.set = L.NewFunction(m.setmetatable)
	return m
}

// addTo puts the pair in a run's environment.
func (m *metatables) addTo(env *lua.LTable) {
	env.RawSetString("getmetatable", m.get)
	env.RawSetString("setmetatable", m.set)
}

// reset forgets the run's metatables, so that no table of one run stays
// reachable from the pooled state or is taken for the script's in the next.
func (m *metatables) reset() {
	clear(m.own)
}

func (m *metatables) getmetatable(L *lua.LState) int {
	t, ok := L.CheckAny(1).(*lua.LTable)
	if !ok {
		L.Push(lua.LNil)
		return 1
	}
	luaapi.FillLazy(L, t)
	mt, ok := t.Metatable.(*lua.LTable)
	switch {
	case !ok:
		L.Push(lua.LNil)
	case mt.RawGetString("__metatable") != lua.LNil:
		L.Push(mt.RawGetString("__metatable"))
	case m.installed(mt):
		L.Push(mt)
	default:
		L.Push(lua.LNil)
	}
	return 1
}

func (m *metatables) setmetatable(L *lua.LState) int {
	t := L.CheckTable(1)
	mt := L.Get(2)
	if mt.Type() != lua.LTNil && mt.Type() != lua.LTTable {
		L.ArgError(2, "nil or table expected")
	}
	luaapi.FillLazy(L, t)
	if cur, ok := t.Metatable.(*lua.LTable); ok {
		if cur.RawGetString("__metatable") != lua.LNil || !m.installed(cur) {
			L.RaiseError("cannot change a protected metatable")
		}
	}
	t.Metatable = mt
	if nt, ok := mt.(*lua.LTable); ok {
		m.own[nt] = struct{}{}
	}
	L.Push(t)
	return 1
}

func (m *metatables) installed(mt *lua.LTable) bool {
	_, ok := m.own[mt]
	return ok
}
