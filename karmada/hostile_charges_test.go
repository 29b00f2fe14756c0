package karmada

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/heapwatch"
	"github.com/kartalua/karta/luaapi"
)

// Karmada's runner runs customizations under the same guard and library
// charges as a Karta's scripts (issue 28: before them, InterpretHealth
// answered healthy after 3.7 GB): each hostile health script ends on a
// limit with the default limits, promptly, and is never reported healthy.
func TestHostileHealthScripts(t *testing.T) {
	for _, body := range []string{
		`local t = {} table.insert(t, 60000000, true) return true`,
		`local t = {[50000000] = true} return true`,
		`local n = 50000000 local t = {1, [n] = true} return true`,
		`local s = os.date(string.rep("%c", 500000)) return true`,
		`local s = string.rep("x", 2^20 - 8) local T = {} for i = 1, 2000 do T[i] = s end table.sort(T) return true`,
		`local cs = {} for i = 1, 20000 do cs[i] = {name = "c" .. i, image = "i", resources = {requests = {cpu = "1", memory = "1Gi"}, limits = {cpu = "2"}}} end
		 for i = 1, 1e9 do kube.accuratePodRequirements({spec = {containers = cs}}) end return true`,
		`local cs = {} for i = 1, 20000 do cs[i] = {name = "c" .. i, image = "i", env = {{name = "A", valueFrom = {secretKeyRef = {name = "s" .. i, key = "k"}}}}} end
		 for i = 1, 1e9 do kube.getPodDependencies({spec = {containers = cs}}, "ns") end return true`,
		`for i = 1, 1e9 do kube.accuratePodRequirements({spec = {containers = {{name = "c", resources = {requests = {cpu = "1"}}}}}}) end return true`,
		`for i = 1, 1e9 do kube.resourceAdd("1", "1m") end return true`,
		`kube.resourceAdd("1e999999999", "1m") return true`,
		`for i = 1, 1e9 do kube.resourceAdd("9e1000", "1m") end return true`,
		`kube.accuratePodRequirements({spec = {containers = {{name = "c", resources = {requests = {cpu = "1e999999999"}}}}}}) return true`,
		`for i = 1, 1e9 do kube.getResourceQuantity("1e999999999") end return true`,
	} {
		t.Run(body, func(t *testing.T) {
			in := newInterp(t, Options{}, cust("w", map[Operation]string{
				OpInterpretHealth: "local kube = require('kube')\nfunction InterpretHealth(obj)\n" + body + "\nend",
			}))
			var healthy bool
			var err error
			cost := heapwatch.Measure(func() { healthy, err = in.InterpretHealth(context.Background(), widget(nil)) })
			heapwatch.AssertPrompt(t, cost, luaapi.DefaultTimeout)
			assert.Less(t, cost.Growth, uint64(256<<20), "heap growth during the call")
			var le *luaapi.LimitError
			require.ErrorAs(t, err, &le)
			assert.False(t, healthy)
			t.Logf("%v after %v (CPU %v)", err, cost.Wall, cost.CPU)
		})
	}
}
