package interpreter

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/luaapi"
)

// The K helpers of the generated InterpretStatus.

// K.phase(outputs): the first output, a string or null; zero outputs is
// null; any other type is an error.
func (sd *stateData) luaPhase(L *lua.LState) int {
	t := L.CheckTable(1)
	if t.Len() == 0 {
		return 0
	}
	switch v := t.RawGetInt(1).(type) {
	case lua.LString:
		L.Push(v)
		return 1
	default:
		if luaapi.IsNull(L, v) {
			return 0
		}
		g, _ := luaapi.FromLua(L, v)
		raise(L, fmt.Errorf("phaseDefinition.path must yield a string or null, got %s", describe(g)))
	}
	return 0
}

// K.conditions(outputs, typeField, statusField, reasonField, messageField):
// the flattened conditions as an array of {type, status, reason, message}
// objects (absent keys are null).
func (sd *stateData) luaConditions(L *lua.LState) int {
	outs := outputs(L, 1)
	def := conditionFields(L)
	conds, err := conditions(def, outs)
	if err != nil {
		raise(L, err)
	}
	arr := luaapi.NewArray(L)
	for i, c := range conds {
		o := luaapi.NewObject(L)
		o.RawSetString("type", lua.LString(c.Type))
		setOptional(o, "status", c.Status)
		setOptional(o, "reason", c.Reason)
		setOptional(o, "message", c.Message)
		arr.RawSetInt(i+1, o)
	}
	L.Push(arr)
	return 1
}

func setOptional(t *lua.LTable, key string, v *string) {
	if v != nil {
		t.RawSetString(key, lua.LString(*v))
	}
}

// K.condition(conditions, type, status, reason): the byConditions rule on
// the last condition of the type.
func (sd *stateData) luaCondition(L *lua.LState) int {
	arr := L.CheckTable(1)
	typ, status, reason := L.CheckString(2), L.CheckString(3), L.CheckString(4)
	for i := arr.Len(); i >= 1; i-- {
		c, ok := arr.RawGetInt(i).(*lua.LTable)
		if !ok || c.RawGetString("type") != lua.LString(typ) {
			continue
		}
		ok = (status == "" || c.RawGetString("status") == lua.LString(status)) &&
			(reason == "" || c.RawGetString("reason") == lua.LString(reason))
		L.Push(lua.LBool(ok))
		return 1
	}
	L.Push(lua.LFalse)
	return 1
}

// K.expression(outputs, expected): the first output through jq tostring
// equals expected; zero outputs never match.
func (sd *stateData) luaExpression(L *lua.LState) int {
	t := L.CheckTable(1)
	expected := L.CheckString(2)
	if t.Len() == 0 {
		L.Push(lua.LFalse)
		return 1
	}
	first, err := luaapi.FromLua(L, t.RawGetInt(1))
	if err != nil {
		raise(L, err)
	}
	s, err := jqvalue.ToString(first)
	if err != nil {
		raise(L, err)
	}
	L.Push(lua.LBool(s == expected))
	return 1
}

// K.status(matched, phase, conditions): the InterpretStatus result.
func (sd *stateData) luaStatus(L *lua.LState) int {
	matched := L.CheckTable(1)
	res := luaapi.NewObject(L)
	status := lua.LValue(lua.LString("Undefined"))
	if matched.Len() > 0 {
		status = matched.RawGetInt(1)
	}
	res.RawSetString("status", status)
	res.RawSetString("matched", matched)
	if ph, ok := L.Get(2).(lua.LString); ok {
		res.RawSetString("phase", ph)
	}
	res.RawSetString("conditions", L.CheckTable(3))
	L.Push(res)
	return 1
}
