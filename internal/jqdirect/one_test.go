package jqdirect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// TestOneAgreesWithEval: the single-output form (one.go) gives exactly
// the general form's outputs, declines and steps, on every expression of
// the agreement tests and every input.
func TestOneAgreesWithEval(t *testing.T) {
	compile := func(expr string, general bool) *Program {
		generalOnly = general
		defer func() { generalOnly = false }()
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		return Compile(q, "$rs", "$rt", "$pad")
	}
	singles := 0
	for _, expr := range append(append([]string{}, directExprs...), varExprs...) {
		fast, general := compile(expr, false), compile(expr, true)
		if fast == nil {
			require.Nil(t, general, expr)
			continue
		}
		if fast.one {
			singles++
		}
		for _, text := range directInputs {
			for form, in := range decodeThreeWays(t, text) {
				for _, vars := range [][]any{nil, {[]any{in}, in}} {
					run := func(p *Program) ([]any, bool, int) {
						s := Scratch{Vars: vars}
						outs, ok := p.Run(in, &s)
						steps := 0
						if s.c != nil {
							steps = s.c.steps
						}
						s.Release()
						return outs, ok, steps
					}
					want, wantOK, wantSteps := run(general)
					got, gotOK, gotSteps := run(fast)
					require.Equal(t, wantOK, gotOK, "%s on %s (%s)", expr, text, form)
					if wantOK {
						assert.Equal(t, normalJSON(t, want), normalJSON(t, got), "%s on %s (%s)", expr, text, form)
						assert.Equal(t, wantSteps, gotSteps, "%s on %s (%s): steps", expr, text, form)
					}
				}
			}
		}
	}
	assert.Greater(t, singles, 150, "most expressions are single")
}
