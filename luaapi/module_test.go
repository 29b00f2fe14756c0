package luaapi

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// testModule is a module as one written outside the package would be: a
// function that charges its work before doing it, and one that walks a
// nested table with a Path.
var testModule = Module{Name: "walk", Funcs: map[string]lua.LGFunction{
	"spin": func(L *lua.LState) int {
		steps, bytes := L.CheckInt(1), L.OptInt(2, 0)
		Charge(L, steps)
		ChargeMemory(L, bytes)
		L.Push(lua.LNumber(steps))
		return 1
	},
	"deepest": func(L *lua.LState) int {
		var p Path
		var walk func(v lua.LValue) error
		walk = func(v lua.LValue) error {
			tb, ok := v.(*lua.LTable)
			if !ok {
				if v.Type() != lua.LTNumber {
					return p.Error("arg", 1, "not a number but a %s", v.Type())
				}
				return nil
			}
			if p.TooDeep() {
				return p.DepthError("arg", 1)
			}
			var err error
			tb.ForEach(func(k, v lua.LValue) {
				if err != nil {
					return
				}
				if s, isKey := k.(lua.LString); isKey {
					p.Key(string(s))
				} else {
					p.Index(int(k.(lua.LNumber)))
				}
				err = walk(v)
				p.Pop()
			})
			return err
		}
		if err := walk(L.Get(1)); err != nil {
			L.RaiseError("%v", err)
		}
		return 0
	},
}}

// TestModule: a module written on the module API is installed read-only,
// charges its calls to the call's limits, and names where a value is
// wrong as the value bridge does.
func TestModule(t *testing.T) {
	L := NewState(SandboxOptions{Modules: Loaders(testModule), MaxInstructions: 1_000_000, MaxMemory: 1 << 20})
	defer L.Close()

	res := mustRun(t, L, `return walk.spin(10), require("walk") == walk`)
	assert.Equal(t, []string{"10", "true"}, luaStrings(res))

	_, err := runIn(t, L, `walk.spin = nil`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `read-only table "walk"`)

	for _, tc := range []struct {
		src  string
		kind LimitKind
	}{
		{`return walk.spin(2000000)`, KindInstructions},
		{`return walk.spin(1, 900000) + walk.spin(1, 900000)`, KindMemory},
	} {
		_, err := runIn(t, L, tc.src)
		var le *LimitError
		require.ErrorAs(t, err, &le, tc.src)
		assert.Equal(t, tc.kind, le.Kind, tc.src)
		_, err = runIn(t, L, `return pcall(walk.spin, 2000000)`)
		require.ErrorAs(t, err, &le, "pcall cannot catch a limit")
	}

	_, err = runIn(t, L, `walk.deepest({a = {1, {b = "x"}}})`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `arg.a[2].b: not a number but a string`)
	mustRun(t, L, `walk.deepest({a = {1, {b = 2}}, ["not ident"] = {3}})`)

	_, err = runIn(t, L, `local t = {} local c = t for i = 1, 1200 do c.x = {} c = c.x end c.x = 1 walk.deepest(t)`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "arg.x.x.x.x.x.x.x.x…: nesting deeper than 1000 levels")
	assert.False(t, strings.Contains(err.Error(), strings.Repeat("x.", 20)), "the path names its first steps only")
}
