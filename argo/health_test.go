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

// TestResults runs scripts returning each shape a result can take.
func TestResults(t *testing.T) {
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

		// No assessment, as Argo CD's empty HealthStatus.
		{"nil", `return nil`, Health{}, ""},
		{"a bare return", `return`, Health{}, ""},
		{"an empty table", `return {}`, Health{}, ""},
		{"an empty status", `return {status = "", message = "m"}`, Health{Message: "m"}, ""},
		{"no status", `return {message = "m"}`, Health{Message: "m"}, ""},
		{"an array", `return {"Healthy", "m"}`, Health{}, ""},
		{"a message that is not a string", `return {status = "Healthy", message = 3}`, Health{Status: StatusHealthy}, ""},
		{"only the first value counts", `return {status = "Healthy"}, "more"`, Health{Status: StatusHealthy}, ""},

		{"an unknown word", `return {status = "Fine"}`, Health{}, `script:t.lua: Argo CD health status "Fine" is not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown`},
		{"a word in the wrong case", `return {status = "healthy"}`, Health{}, `"healthy" is not one of`},
		{"a number status", `return {status = 1}`, Health{}, "script:t.lua: an Argo CD health script's status must be a string, got number"},
		{"a table status", `return {status = {}}`, Health{}, "status must be a string, got table"},
		{"a string", `return "Healthy"`, Health{}, "script:t.lua: an Argo CD health script must return {status=..., message=...}, got string"},
		{"a boolean", `return true`, Health{}, "got boolean"},
		{"a function", `return function() end`, Health{}, "got function"},
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
