package interpreter

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kartalua/karta/karta"
)

// A global that is not a hook is never called: a misspelt hook (within two
// edits) is named in the warning, anything else lists the hooks.
func TestCheckScriptSuggestsHooks(t *testing.T) {
	cases := []struct {
		name, script string
		want         karta.Problems
	}{
		{"misspelt hook", "function InterpretStatu(obj) return {status = 'Running'} end", karta.Problems{{
			Severity: karta.SeverityWarning,
			Message:  `global "InterpretStatu" is not a hook name and is never called; did you mean InterpretStatus?`,
		}}},
		{"wrong case", "function getPodSpecs(obj) return {} end", karta.Problems{{
			Severity: karta.SeverityWarning,
			Message:  `global "getPodSpecs" is not a hook name and is never called; did you mean GetPodSpecs?`,
		}}},
		{"a helper", "function helper() end", karta.Problems{{
			Severity: karta.SeverityWarning,
			Message:  `global "helper" is not a hook name and is never called (hooks: ` + hookList() + `)`,
		}}},
		{"a hook", "function InterpretStatus(obj) return karta.generated.InterpretStatus(obj) end", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, CheckScript(tc.script))
		})
	}
}
