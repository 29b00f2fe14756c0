package argo

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStatusesIsACopy(t *testing.T) {
	s := Statuses()
	s[0] = "Broken"
	assert.Equal(t, StatusHealthy, Statuses()[0])
}

// TestResults runs scripts returning each shape a result can take, read
// as Argo CD's ExecuteHealthLua reads it.
func TestResults(t *testing.T) {
	invalid := Health{Status: StatusUnknown, Message: InvalidHealthStatus}
	cases := []struct {
		name, body string
		want       Health
		err        string
	}{
		{"Healthy", `return {status = "Healthy", message = "m"}`, Health{Status: StatusHealthy, Message: "m"}, ""},
		{"Progressing", `return {status = "Progressing", message = "m"}`, Health{Status: StatusProgressing, Message: "m"}, ""},
		{"Degraded", `return {status = "Degraded", message = "m"}`, Health{Status: StatusDegraded, Message: "m"}, ""},
		{"Suspended", `return {status = "Suspended", message = "m"}`, Health{Status: StatusSuspended, Message: "m"}, ""},
		{"Missing", `return {status = "Missing", message = "m"}`, Health{Status: StatusMissing, Message: "m"}, ""},
		{"Unknown", `return {status = "Unknown", message = "m"}`, Health{Status: StatusUnknown, Message: "m"}, ""},
		{"the usual global hs", "hs = {}\nhs.status = \"Healthy\"\nreturn hs", Health{Status: StatusHealthy}, ""},
		{"no message", `return {status = "Degraded"}`, Health{Status: StatusDegraded}, ""},
		{"extra keys are ignored", `return {status = "Healthy", message = "m", reason = "r"}`, Health{Status: StatusHealthy, Message: "m"}, ""},
		{"keys match as encoding/json matches them", `return {Status = "Healthy", MESSAGE = "m"}`, Health{Status: StatusHealthy, Message: "m"}, ""},
		{"a chunk ending in if … else … end", "if obj.kind == \"Thing\" then\n  return {status = \"Healthy\"}\nelse\n  return {status = \"Degraded\"}\nend\n", Health{Status: StatusHealthy}, ""},
		{"the last of several values counts", `return "first", {status = "Healthy"}`, Health{Status: StatusHealthy}, ""},

		// No assessment, as Argo CD's empty HealthStatus.
		{"nil", `return nil`, Health{}, ""},
		{"a bare return", `return`, Health{}, ""},
		{"no return at all", `local x = 1`, Health{}, ""},
		{"an empty table", `return {}`, Health{}, ""},
		{"an array", `return {"Healthy", "m"}`, Health{}, ""},
		{"a message that is not a string", `return {status = "Healthy", message = 3}`, Health{}, ""},
		{"a number status", `return {status = 1}`, Health{}, ""},
		{"a table status", `return {status = {}}`, Health{}, ""},

		// Argo CD's invalid health status.
		{"an unknown word", `return {status = "Fine", message = "m"}`, invalid, ""},
		{"a word in the wrong case", `return {status = "healthy"}`, invalid, ""},
		{"an empty status", `return {status = "", message = "m"}`, invalid, ""},
		{"no status", `return {message = "m"}`, invalid, ""},

		{"a string", `return "Healthy"`, Health{}, "script:t.lua: expect table output from Lua script, not string"},
		{"a boolean", `return true`, Health{}, "not boolean"},
		{"a function", `return function() end`, Health{}, "not function"},
		{"the last value is not a table", `return {status = "Healthy"}, "more"`, Health{}, "not string"},
		{"a function inside", `return {status = "Healthy", f = print or tostring}`, Health{}, "script:t.lua: cannot encode function to JSON"},
		{"a cycle", `local t = {status = "Healthy"} t.self = t return t`, Health{}, "cannot encode recursively nested tables to JSON"},
		{"a table met twice", `local m = {} return {status = "Healthy", a = m, b = m}`, Health{}, "cannot encode recursively nested tables to JSON"},
		{"a sparse array", `return {status = "Healthy", list = {[1] = 1, [3] = 3}}`, Health{}, "cannot encode sparse array"},
		{"mixed keys", `return {status = "Healthy", [1] = 1}`, Health{}, "cannot encode mixed or invalid key types"},
		{"NaN", `return {status = "Healthy", n = 0/0}`, Health{}, "json: unsupported value: NaN"},
		{"a Lua error", "local x = obj.nope.deeper\nreturn {}", Health{}, "script:t.lua:1: attempt to index"},
		{"error()", `error("no verdict") return {}`, Health{}, "script:t.lua:1: no verdict"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile("t.lua", tc.body)
			require.NoError(t, err)
			got, err := s.Run(context.Background(), map[string]any{"kind": "Thing"})
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Equal(t, Health{}, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
