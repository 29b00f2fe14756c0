package interpreter

import (
	"errors"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/luaapi"
)

// jqCache holds the jq programs scripts ran through jq(expr, value),
// compiled once per text for the Program's lifetime. Scripts pass a few
// fixed expressions, so it stays small; a script generating expressions
// only costs itself compile time.
type jqCache struct{ m sync.Map } // expr → *jqProgram or error

// get compiles expr with vars, the Karta's references ("$name"), bound
// as the Karta's own expressions have them: the program reads the values
// the call's context carries (jqvars), the very binding the hook entered
// with.
func (c *jqCache) get(expr string, vars []string) (*jqProgram, error) {
	if v, ok := c.m.Load(expr); ok {
		if p, ok := v.(*jqProgram); ok {
			return p, nil
		}
		return nil, v.(error)
	}
	p, err := compileChecked(expr, vars...)
	if err != nil {
		c.m.Store(expr, err)
		return nil, err
	}
	c.m.Store(expr, p)
	return p, nil
}

// compileChecked compiles an expression that must pass the safety walk
// (jqexpr.Check), as every jq expression of a Karta does, with vars bound.
func compileChecked(expr string, vars ...string) (*jqProgram, error) {
	a, errs := jqexpr.Check(expr, vars...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return compileAnalysis(a, a.Vars...)
}

// luaJQ is jq(expr, value) and karta.jq: every output of expr on value, as
// a Lua array of tables with JSON semantics; a jq error is a Lua error.
// expr may read the Karta's references ($name), bound as in its own
// expressions for the hook's call (absent outside one).
func (sd *stateData) luaJQ(L *lua.LState) int {
	expr := L.CheckString(1)
	prog, err := sd.p.jq.get(expr, sd.p.karta.Spec.Variables())
	if err != nil {
		L.RaiseError("jq: %s", err.Error())
	}
	// nil is null: a null member of an object is absent from a script's
	// tables, so jq(expr, obj.spec.optional) must see null.
	var in any
	if lv := L.Get(2); lv != lua.LNil {
		var err error
		if in, err = luaapi.FromLua(L, lv); err != nil {
			L.RaiseError("jq: input: %s", err.Error())
		}
	}
	outs, err := prog.all(L.Context(), jqvalue.Input(in))
	if err != nil {
		var je *JQError
		if errors.As(err, &je) {
			err = je.Err
		}
		L.RaiseError("jq: %s", err.Error())
	}
	arr := luaapi.NewArray(L)
	for i, o := range outs {
		lv, err := luaapi.ToLuaTableCharged(L, o)
		if err != nil {
			L.RaiseError("jq: output: %s", err.Error())
		}
		arr.RawSetInt(i+1, lv)
	}
	L.Push(arr)
	return 1
}
