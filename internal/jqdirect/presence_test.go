package jqdirect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// presenceExprs put constructions where Presence leaves them unbuilt: an
// if's branches (RayJob's submitter template), the sides of // and of a
// comma, a pipe's right, values nested in values, and a value that is
// not JSON or has no output.
var presenceExprs = []string{
	`if .n > 1 then {spec: {c: [{i: .s, r: {l: "1"}}]}} elif .a then .a else null end`,
	`.a // {x: .n}`, `{a: .f, b: [.arr[]?]}`, `(.n, .s) | {v: .}`, `{a: .n}, [.s]`, `{a: .zz[]?}`,
	`{a: (.n | select(. > 100)), b: .s}`, `{a: .s, b: (.n | select(. > 100))}`, `[.arr[]? | {x: .}]`,
	`{a: .m[]?}`, `{a: .s, b: error("x")}`, `{a: error("x"), b: empty}`, `if .x then {a: .x.y} else [] end`,
	`select(.n) | {a: .big, b: .f}`, `{a: .n} | .a`, `[.arr[.n]]`, `.arr // [.n, .s]`,
}

// TestPresenceAgreesWithRun: a program for presence gives, on every input,
// as many outputs as the program, null where it gives null and non-null
// elsewhere, with its declines and its steps.
func TestPresenceAgreesWithRun(t *testing.T) {
	variants := 0
	for _, expr := range append(append(append([]string{}, directExprs...), varExprs...), presenceExprs...) {
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		p := Compile(q, "$rs", "$rt", "$pad")
		if p == nil {
			continue
		}
		pp := p.Presence()
		if pp == nil {
			continue
		}
		variants++
		for _, text := range directInputs {
			for form, in := range decodeThreeWays(t, text) {
				for _, vars := range [][]any{nil, {[]any{in}, in}} {
					want, wantOK, wantSteps, wantBytes := runSpending(p, in, vars)
					got, gotOK, gotSteps, gotBytes := runSpending(pp, in, vars)
					require.Equal(t, wantOK, gotOK, "%s on %s (%s)", expr, text, form)
					if !wantOK {
						continue
					}
					require.Len(t, got, len(want), "%s on %s (%s)", expr, text, form)
					for i := range want {
						assert.Equal(t, want[i] == nil, got[i] == nil, "%s on %s (%s): output %d", expr, text, form, i)
					}
					assert.Equal(t, wantSteps, gotSteps, "%s on %s (%s): steps", expr, text, form)
					assert.Equal(t, wantBytes, gotBytes, "%s on %s (%s): bytes", expr, text, form)
				}
			}
		}
	}
	assert.Greater(t, variants, 30, "many expressions output a construction")
}

// TestPresenceBuildsNothing: RayJob's default submitter template is
// evaluated for presence without an allocation.
func TestPresenceBuildsNothing(t *testing.T) {
	q, err := gojq.Parse(`if .mode != null then null else {spec: {restartPolicy: "Never", containers: [{name: "s", image: .image, resources: {limits: {cpu: "1"}}}]}} end`)
	require.NoError(t, err)
	p := Compile(q)
	pp := p.Presence()
	require.NotNil(t, pp)
	plain, err := gojq.Parse(`.spec.template`)
	require.NoError(t, err)
	assert.Nil(t, Compile(plain).Presence(), "a path builds nothing")
	in := map[string]any{"image": "ray:2"}
	s := Scratch{Size: 8}
	defer s.Release()
	outs, ok := pp.Run(in, &s)
	require.True(t, ok)
	require.Len(t, outs, 1)
	assert.NotNil(t, outs[0])
	allocs := testing.AllocsPerRun(100, func() {
		s.arena = s.arena[:0]
		pp.Run(in, &s)
	})
	assert.Zero(t, allocs)
}
