package interpreter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/luaapi"
)

// TestCheckLoad: a script whose top level cannot run is found when the
// Karta is compiled and checked, not first when a hook runs; a good one,
// an Argo CD health script and a Karta without scripts pass.
func TestCheckLoad(t *testing.T) {
	k := deploymentKarta(t)
	limits := Limits{Timeout: 2 * time.Second, MaxInstructions: 1_000_000}
	for _, tc := range []struct {
		name, script string
		limit        luaapi.LimitKind
		msg          string
	}{
		{name: "a loop at top level", script: "while true do end\nfunction InterpretStatus(obj) return {} end", limit: luaapi.KindInstructions},
		{name: "an error at top level", script: "error('no config')\nfunction InterpretStatus(obj) return {} end", msg: "no config"},
		{name: "a nil index at top level", script: "local x = nil\nlocal y = x.field\nfunction InterpretStatus(obj) return {} end", msg: "attempt to index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := progCompile(t, withScript(k, tc.script), Options{Limits: limits})
			err := p.CheckLoad(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), `karta "deployment": load: `)
			if tc.limit != "" {
				var le *luaapi.LimitError
				require.ErrorAs(t, err, &le)
				assert.Equal(t, tc.limit, le.Kind)
				assert.Equal(t, "load", le.Hook)
			} else {
				var le *luaapi.LimitError
				assert.False(t, errors.As(err, &le))
				assert.Contains(t, err.Error(), tc.msg)
			}
		})
	}
	for name, script := range map[string]string{
		"no script":  "",
		"good":       "local n = 0\nfor i = 1, 100 do n = n + i end\nfunction InterpretStatus(obj) return karta.generated.InterpretStatus(obj) end",
		"argo style": "if obj.status == nil then error('no status') end\nreturn {status = 'Healthy'}",
	} {
		t.Run(name, func(t *testing.T) {
			p := progCompile(t, withScript(k, script), Options{Limits: limits})
			require.NoError(t, p.CheckLoad(context.Background()))
		})
	}
}
