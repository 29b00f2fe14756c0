package jqdirect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// TestSplitIndexAgreesWithGeneral: split(SEP) | .[K] fused (split_index.go)
// gives exactly the general pipe's outputs, declines, steps and bytes on
// every input, in its single and its general form.
func TestSplitIndexAgreesWithGeneral(t *testing.T) {
	compile := func(expr string, unfused, general bool) *Program {
		unfusedSplit, generalOnly = unfused, general
		defer func() { unfusedSplit, generalOnly = false, false }()
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		p := Compile(q)
		require.NotNil(t, p, expr)
		return p
	}
	exprs := []string{
		`split("l") | .[0]`, `split("l") | .[1]`, `split("l") | .[-1]`, `split("l") | .[-3]`, `split("l") | .[3]`,
		`split("ll") | .[1]`, `split("x") | .[0]`, `split("x") | .[-1]`, `split("x") | .[1]`, `split("") | .[1]`,
		`split("") | .[-1]`, `split("\"") | .[0]`, `split(".") | .[4]?`, `[.[]? | split("-") | .[0]]`,
	}
	inputs := []any{"hello", "héllo wörld", "", "l", "lll", `{"name":"train","x":"y"}`, "a.b.c.d.e",
		"x-y-z", 7, nil, []any{"a-b", "c", "-"}, []any{"a", 1}}
	fused := 0
	for _, expr := range exprs {
		for _, general := range []bool{false, true} {
			got, want := compile(expr, false, general), compile(expr, true, general)
			if _, ok := got.root.(*splitIndexNode); ok {
				fused++
			}
			for _, in := range inputs {
				run := func(p *Program) ([]any, bool, int, int) {
					var s Scratch
					outs, ok := p.Run(in, &s)
					steps, bytes := s.Spent()
					s.Release()
					return outs, ok, steps, bytes
				}
				wantOuts, wantOK, wantSteps, wantBytes := run(want)
				gotOuts, gotOK, gotSteps, gotBytes := run(got)
				require.Equal(t, wantOK, gotOK, "%s on %#v", expr, in)
				assert.Equal(t, wantOuts, gotOuts, "%s on %#v", expr, in)
				assert.Equal(t, wantSteps, gotSteps, "%s on %#v: steps", expr, in)
				assert.Equal(t, wantBytes, gotBytes, "%s on %#v: bytes", expr, in)
			}
		}
	}
	assert.GreaterOrEqual(t, fused, 2*(len(exprs)-1), "every expression but the iteration's is fused at its root")
}

// TestSplitIndexAllocatesOnePiece: the fused form boxes the one piece it
// returns, and nothing when the separator is absent (the piece is the
// input).
func TestSplitIndexAllocatesOnePiece(t *testing.T) {
	for _, tc := range []struct {
		expr, in string
		allocs   float64
	}{
		{`split("\"") | .[0]`, `train","container":{"image":"x","args":["a","b","c"]}}`, 1},
		{`split("[") | .[0]`, "template", 0},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err)
		p := Compile(q)
		var s Scratch
		s.Size = 64
		p.Run(tc.in, &s) // the context from the pool
		s.Release()
		in := any(tc.in)
		got := testing.AllocsPerRun(100, func() {
			s := Scratch{}
			if _, _, ok := p.root.(oner).eval1(s.ctx(), in); !ok {
				t.Fatal("declined")
			}
			s.Release()
		})
		assert.Equal(t, tc.allocs, got, tc.expr)
	}
}
