package interpreter

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// karta.generated.InterpretStatus(obj): the Karta's status plan
// (direct_hooks.go), the one InterpretStatus in process, run for a script
// on the call's evaluator as the Go API runs it for a hook no script
// overrides — each expression on its chosen back end, the exact one
// metered by the script's own call — so that a script that amends the
// generated status gets the Go API's answer and errors.
func (sd *stateData) luaInterpretStatus(L *lua.LState) int {
	obj := objectArg(L, 1, "InterpretStatus: obj")
	res, err := runAlgorithm(L, sd, func(ev evaluator) (*StatusResult, error) {
		return sd.p.status.run(L.Context(), ev.(*directEvaluator), obj)
	})
	if err != nil {
		raise(L, err)
	}
	L.Push(statusToLua(L, res))
	return 1
}

// statusToLua is a status result as a script reads it: an object with
// status, matched (an array of status words), phase only when it is a
// string, and conditions (an array of {type, status, reason, message}
// objects, absent fields left out).
func statusToLua(L *lua.LState, res *StatusResult) *lua.LTable {
	matched := luaapi.NewArray(L)
	for i, s := range res.Matched {
		matched.RawSetInt(i+1, lua.LString(s))
	}
	conds := luaapi.NewArray(L)
	for i, c := range res.Conditions {
		o := luaapi.NewObject(L)
		o.RawSetString("type", lua.LString(c.Type))
		setOptional(o, "status", c.Status)
		setOptional(o, "reason", c.Reason)
		setOptional(o, "message", c.Message)
		conds.RawSetInt(i+1, o)
	}
	t := luaapi.NewObject(L)
	t.RawSetString("status", lua.LString(res.Status))
	t.RawSetString("matched", matched)
	setOptional(t, "phase", res.Phase)
	t.RawSetString("conditions", conds)
	return t
}

func setOptional(t *lua.LTable, key string, v *string) {
	if v != nil {
		t.RawSetString(key, lua.LString(*v))
	}
}
