package kube

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// testChunk names the test chunks in their errors, as a Karta's script
// would be named.
const testChunk = "karta:test/luaScript"

// testTimeout bounds a test chunk's call: generous, the machine is shared.
const testTimeout = 2 * time.Minute

// runIn runs src in L as the karmada package runs a customization:
// compiled as untrusted, in a per-call environment of Karmada's (Env),
// under the call's limits.
func runIn(t *testing.T, L *lua.LState, src string) ([]lua.LValue, error) {
	t.Helper()
	proto, err := luaapi.Compile(testChunk, src)
	require.NoError(t, err)
	fn := luaapi.Instantiate(L, proto, Env(L))
	return luaapi.CallProtected(context.Background(), L, testTimeout, fn, lua.MultRet)
}

// mustRun is runIn for code that must succeed.
func mustRun(t *testing.T, L *lua.LState, src string) []lua.LValue {
	t.Helper()
	res, err := runIn(t, L, src)
	require.NoError(t, err, src)
	return res
}

// luaStrings prints each of a call's results as Lua's tostring would.
func luaStrings(vs []lua.LValue) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}
