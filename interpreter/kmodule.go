package interpreter

import (
	"encoding/json"
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// The generated hooks a script reaches as karta.generated.<Hook> are Go
// functions over the Karta's compiled plans (InterpretStatus's in
// kstatus.go, the algorithms' in kalgo.go): the same code the Go API runs
// for a hook no script overrides, on the same evaluator, charged to the
// script's call. No generated Lua is loaded in process.
//
// They (and the karta module's functions below) are hand-written
// LGFunctions, not Go functions exposed through gopher-luar: they take
// JSON values (views, marked tables, JSON lazy tables), which they read
// through luaapi's conversions, charged to the call, where luar would
// convert a table by reflection into a map[any]any, uncharged; they return
// marked tables that scripts iterate, where luar would return Go proxies;
// and a call through luar's reflection takes 5.5–5.8× a hand-written one's
// time with 7 allocations against none (BenchmarkHelperBridge in luaapi,
// docs/performance.md). luar is also stricter about arguments (exact
// count, no number for a string), which would change what karta.object(x)
// and jq(expr) accept (luaapi's TestLuarFunctionSemantics).
func (sd *stateData) generatedHooks(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	fns := map[Hook]lua.LGFunction{
		HookInterpretStatus: sd.luaInterpretStatus,
		HookGetPodSpecs:     sd.luaGetPodSpecs,
		HookGetGangGroups:   sd.luaGetGangGroups,
		HookReviseSpec:      sd.luaReviseSpec,
		HookSuspend:         func(L *lua.LState) int { return sd.luaSuspend(L, false) },
		HookResume:          func(L *lua.LState) int { return sd.luaSuspend(L, true) },
	}
	for _, h := range generatedHooks(sd.p.model) {
		t.RawSetString(string(h), L.NewFunction(fns[h]))
	}
	return t
}

// kartaModule builds the `karta` Lua module: generated hooks, null, empty
// tables marked as object or array, and jq.
func (sd *stateData) kartaModule(L *lua.LState) lua.LValue {
	m := L.NewTable()
	sd.generated = sd.generatedHooks(L)
	m.RawSetString("generated", luaapi.NewReadOnly(L, "karta.generated", sd.generated))
	m.RawSetString("null", luaapi.Null(L))
	// A script calls these: the table is charged like a constructor's.
	m.RawSetString("object", L.NewFunction(func(L *lua.LState) int {
		luaapi.ChargeTable(L)
		L.Push(luaapi.NewObject(L))
		return 1
	}))
	m.RawSetString("array", L.NewFunction(func(L *lua.LState) int {
		luaapi.ChargeTable(L)
		L.Push(luaapi.NewArray(L))
		return 1
	}))
	m.RawSetString("jq", L.NewFunction(sd.luaJQ))
	return m
}

// jqFunction builds the global jq(expr, value).
func (sd *stateData) jqFunction(L *lua.LState) lua.LValue { return L.NewFunction(sd.luaJQ) }

// raise fails the Lua call with a Go error, kept as the error value so
// the hook's caller gets the typed error back.
// A script that catches it (pcall) reads its message with tostring.
func raise(L *lua.LState, err error) {
	ud := L.NewUserData()
	ud.Value = err
	mt := L.NewTable()
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(err.Error()))
		return 1
	}))
	ud.Metatable = mt
	L.Error(ud, 0)
}

// goArg converts argument n to a Go JSON value for a hook's Go algorithm:
// views and untouched JSON lazy tables (a script's object handed back) are
// the very Go value they stand for, which the algorithm reads as the Go
// API's does (nulls and number types are alike to it).
func goArg(L *lua.LState, n int, what string) any {
	v, err := luaapi.FromLuaWith(L, L.Get(n), algorithmInput)
	if err != nil {
		raise(L, fmt.Errorf("%s: %w", what, err))
	}
	return v
}

// algorithmInput converts arguments for the generated hooks: a lazy
// table's Go value as it is.
var algorithmInput = luaapi.ConvertOptions{Lazy: func(v any) (any, error) { return v, nil }}

// objectArg is argument n as an object.
func objectArg(L *lua.LState, n int, what string) map[string]any {
	m, ok := goArg(L, n, what).(map[string]any)
	if !ok {
		raise(L, fmt.Errorf("%s must be an object", what))
	}
	return m
}

// deliver returns a Go algorithm's result to Lua as tables with JSON
// semantics: a script called karta.generated.<Hook> (the Go API runs the
// algorithm directly and never comes here).
func (sd *stateData) deliver(L *lua.LState, h Hook, luaValue func() (any, error)) int {
	v, err := luaValue()
	if err == nil {
		var lv lua.LValue
		if lv, err = luaapi.ToLuaTable(L, v); err == nil {
			L.Push(lv)
			return 1
		}
	}
	raise(L, fmt.Errorf("%s: %w", h, err))
	return 0
}

// jsonValue turns a typed result into Go JSON values for Lua. It runs only
// when a script calls a generated hook, never on the Go API's path.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
