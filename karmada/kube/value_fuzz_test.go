package kube

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/luaapi"
)

// FuzzValue sends arbitrary JSON to a script by Karmada's rules and prints
// it back as Karmada does: Value, then encodeKubeJSON (gopher-json's
// rules: nulls dropped, an empty container is []), gives the value as
// Karmada would see it. A value the value bridge refuses (a number beyond
// float64, nesting deeper than luaapi.MaxDepth) is a *luaapi.ConvertError
// here too, never a crash. The raw bytes also travel as a string, so
// invalid UTF-8 is covered.
func FuzzValue(f *testing.F) {
	for _, seed := range []string{
		// What gopher-json changes: nulls, empty containers, numbers.
		`{"status":{"conditions":[],"replicas":null},"spec":{"template":{}},"items":[null,{},[]]}`,
		`{"n":[9007199254740993,-0,1e21,5e-324,1e400]}`,
		`{"":"", "\u0000":"\ud800", "<&>":"\u2028"}`,
		`[[[{}]]]`, `null`, `"s"`, `false`,
		strings.Repeat(`{"x":`, luaapi.MaxDepth+1) + `1` + strings.Repeat(`}`, luaapi.MaxDepth+1),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := testobj.FuzzJSON(data)
		if !ok {
			return
		}
		L := lua.NewState()
		defer L.Close()
		_, bridgeErr := luaapi.ToLuaTable(L, v)

		kv, err := Value(L, v)
		if err == nil {
			var text []byte
			if text, err = encodeKubeJSON(L, kv); err == nil {
				require.NoError(t, bridgeErr, "a value the bridge refuses is refused")
				var got any
				require.NoError(t, json.Unmarshal(text, &got), "encodeKubeJSON is JSON: %s", text)
				require.Equal(t, testobj.JSONRoundTrip(t, kubeExpect(v)), got, "Value then encodeKubeJSON")
				return
			}
		}
		var ce *luaapi.ConvertError
		require.True(t, errors.As(err, &ce), "a *luaapi.ConvertError, got %v", err)
		require.Error(t, bridgeErr, "refused only what the bridge refuses: %v", err)
	})
}

// kubeExpect is what Karmada's scripts see of v and gopher-json prints:
// null members and elements dropped (later elements move down), and an
// empty object or array printed as [].
func kubeExpect(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e != nil {
				out[k] = kubeExpect(e)
			}
		}
		if len(out) == 0 {
			return []any{}
		}
		return out
	case []any:
		out := []any{}
		for _, e := range x {
			if e != nil {
				out = append(out, kubeExpect(e))
			}
		}
		return out
	}
	return v
}
