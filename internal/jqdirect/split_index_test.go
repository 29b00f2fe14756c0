package jqdirect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// TestFusionsAgreeWithGeneral: what split_index.go and array_fusions.go
// fuse — split(SEP) | .[K], [q][K] and [q] | .[K], l - [x] and its length
// — gives exactly the general form's outputs, declines, steps and bytes
// on every input, in its single and its general form.
func TestFusionsAgreeWithGeneral(t *testing.T) {
	compile := func(expr string, plain, general bool) *Program {
		unfused, generalOnly = plain, general
		defer func() { unfused, generalOnly = false, false }()
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		p := Compile(q)
		require.NotNil(t, p, expr)
		return p
	}
	strs := []string{
		`split("l") | .[0]`, `split("l") | .[1]`, `split("l") | .[-1]`, `split("l") | .[-3]`, `split("l") | .[3]`,
		`split("ll") | .[1]`, `split("x") | .[0]`, `split("x") | .[-1]`, `split("x") | .[1]`, `split("") | .[1]`,
		`split("") | .[-1]`, `split("\"") | .[0]`, `split(".") | .[4]?`, `[.[]? | split("-") | .[0]]`,
	}
	arrays := []string{
		`[.a[]?][0]`, `[.a[]?][-1]`, `[.a[]?][5]`, `[.a[]?] | .[1]`, `[.a[]?][0].x`, `[.a[]? | select(. != 1)][0] // 9`,
		`[.m[]?][0]`, `.g.cliqueNames - [.n]`, `.g.cliqueNames - [.n] | length`, `(.g.cliqueNames - [.n] | length) < (.g.cliqueNames | length)`,
		`.a - [.a[0]?]`, `.a - [empty]`, `.n - [1]`, `.m - [.n]`, `[{n: .n, g: .g} | select((.g.cliqueNames - [.n] | length) < (.g.cliqueNames | length)) | .g.r // 1][0] // 1`,
	}
	strInputs := []any{"hello", "héllo wörld", "", "l", "lll", `{"name":"train","x":"y"}`, "a.b.c.d.e",
		"x-y-z", 7, nil, []any{"a-b", "c", "-"}, []any{"a", 1}}
	objInputs := []any{
		map[string]any{"a": []any{1.0, "x", nil, map[string]any{"x": 2.0}}, "n": "b", "g": map[string]any{"cliqueNames": []any{"a", "b"}, "r": 3.0}, "m": map[string]any{"k": 1.0}},
		map[string]any{"a": []any{}, "n": "z", "g": map[string]any{"cliqueNames": []any{"a", "b", "b"}}},
		map[string]any{"a": []any{[]any{1.0}, []any{1.0}}, "n": 1.0, "g": map[string]any{"cliqueNames": []any{1.0, int64(1), "1"}}},
		map[string]any{"a": "str", "n": nil, "g": map[string]any{"cliqueNames": nil}},
		map[string]any{"g": map[string]any{"cliqueNames": map[string]any{"a": "b"}}, "n": "b"},
		map[string]any{}, nil, 3.0,
	}
	fused := 0
	for _, set := range []struct {
		exprs  []string
		inputs []any
	}{{strs, strInputs}, {arrays, objInputs}} {
		for _, expr := range set.exprs {
			for _, general := range []bool{false, true} {
				got, want := compile(expr, false, general), compile(expr, true, general)
				switch got.root.(type) {
				case *splitIndexNode, *arrayIndexNode, *subOneNode:
					fused++
				}
				for _, in := range set.inputs {
					wantOuts, wantOK, wantSteps, wantBytes := runSpending(want, in, nil)
					gotOuts, gotOK, gotSteps, gotBytes := runSpending(got, in, nil)
					require.Equal(t, wantOK, gotOK, "%s on %#v", expr, in)
					if wantOK {
						assert.Equal(t, wantOuts, gotOuts, "%s on %#v", expr, in)
						assert.Equal(t, wantSteps, gotSteps, "%s on %#v: steps", expr, in)
						assert.Equal(t, wantBytes, gotBytes, "%s on %#v: bytes", expr, in)
					}
				}
			}
		}
	}
	assert.Greater(t, fused, 40, "most expressions are fused at their root")
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
