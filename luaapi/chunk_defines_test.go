package luaapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInspectChunkDefinesOnly(t *testing.T) {
	for src, want := range map[string]bool{
		"":                                  true,
		"-- only a comment\n":               true,
		"function InterpretStatus(obj) end": true,
		"local function f() end\nlocal n, s = 1, 'x'\nfunction GetReplicas(o) return f() end": true,
		"local t = {}":                false, // a table costs memory
		"local x = helper()":          false,
		"function a.b() end":          false, // indexes a
		"while true do end":           false,
		"error('boom')":               false,
		"X = 1":                       false,
		"return {status = 'Healthy'}": false,
	} {
		info, err := InspectChunk("t", src)
		require.NoError(t, err, src)
		assert.Equal(t, want, info.DefinesOnly, "%q", src)
	}
}
