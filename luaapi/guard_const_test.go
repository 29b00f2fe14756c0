package luaapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// A store into a constant (("").x = 1) is a Lua error, as in Lua. gopher-
// lua's compiler stored it through a register holding another value — in
// a hook, the object argument, which the store silently changed — so the
// call succeeded (issue 28).
func TestStoreIntoConstantIsAnError(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"string", `("").x = 1`, "attempt to index a non-table object(string) with key 'x'"},
		{"number", `(1).x = 1`, "attempt to index a non-table object(number) with key 'x'"},
		{"nil", `(nil)[k] = 1`, "attempt to index a non-table object(nil)"},
		{"boolean", `(true).x = 1`, "attempt to index a non-table object(boolean) with key 'x'"},
		{"multiple assignment", `obj.y, ("").x = 1, 2`, "attempt to index a non-table object(string) with key 'x'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "function F(obj, k)\n  " + tc.body + "\n  return 'stored'\nend\n" +
				"local obj = {}\nlocal ok, err = pcall(F, obj, 'x')\nreturn ok, err, obj.x"
			proto, err := Compile("c", src)
			require.NoError(t, err)
			L := NewState(SandboxOptions{})
			defer L.Close()
			L.Push(Instantiate(L, proto, NewEnv(L)))
			require.NoError(t, L.PCall(0, 3, nil))
			assert.Equal(t, lua.LFalse, L.Get(-3), "the store fails")
			assert.Contains(t, L.Get(-2).String(), tc.want)
			assert.Equal(t, lua.LNil, L.Get(-1), "the object is unchanged")
		})
	}
}
