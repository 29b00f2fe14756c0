package jqexpr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

func TestConstant(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{`null`, true},
		{`[]`, true},
		{`{}`, true},
		{`{"spec": {"replicas": 1, "names": ["a", "b"]}, ok: true}`, true},
		{`-1`, true},
		{`1 + 2`, true},
		{`"text"`, true},
		{`.`, false},
		{`.spec`, false},
		{`{a}`, false},          // {a: .a}
		{`{(.k): 1}`, false},    // a computed key
		{`"\(.x)"`, false},      // interpolation
		{`[1][0]`, false},       // an index
		{`empty`, false},        // a function
		{`1 as $x | $x`, false}, // a binding
		{`def f: 1; f`, false},
		{`@base64`, false},
		{`$x`, false},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			q, err := gojq.Parse(tc.expr)
			require.NoError(t, err)
			got, why := Constant(q)
			assert.Equal(t, tc.want, got, why)
			assert.Equal(t, tc.want, why == "")
		})
	}
}

func TestSubstituteVariables(t *testing.T) {
	fb, err := gojq.Parse(`{"spec": {"n": 2}}`)
	require.NoError(t, err)
	for _, tc := range []struct{ expr, want string }{
		{`$rt.spec.n`, `({ "spec": { "n": 2 } }).spec.n`},
		{`[$rt, $other, .x]`, `[({ "spec": { "n": 2 } }), $other, .x]`},
		{`if $rt == null then 1 else ($rt.spec.n // 3) end`, `if ({ "spec": { "n": 2 } }) == null then 1 else (({ "spec": { "n": 2 } }).spec.n // 3) end`},
		{`.a | rt`, `.a | rt`}, // a function named like the variable is not it
		// {$rt} and {$rt: f}
		{`{$rt, $rt: 1}`, `{ rt: ({ "spec": { "n": 2 } }), ({ "spec": { "n": 2 } }): 1 }`},
		// a binding of the name shadows the reference in its scope only
		{`$rt.spec as $rt | $rt.n`, `({ "spec": { "n": 2 } }).spec as $rt | $rt.n`},
		{`(.a as $rt | $rt), $rt`, `(.a as $rt | $rt), ({ "spec": { "n": 2 } })`},
		{`.a as [$rt, {b: $c}] | [$rt, $c]`, `.a as [$rt, {b: $c}] | [$rt, $c]`},
		{`. as {$rt} | $rt`, `. as {$rt} | $rt`},
		{`reduce $rt[] as $rt ($rt; . + $rt)`, `reduce ({ "spec": { "n": 2 } })[] as $rt (({ "spec": { "n": 2 } }); . + $rt)`},
		{`foreach .[] as $rt (0; $rt; $rt) | $rt`, `foreach .[] as $rt (0; $rt; $rt) | ({ "spec": { "n": 2 } })`},
		{`def f($rt): $rt; f(1), $rt`, `def f($rt): $rt; f(1), ({ "spec": { "n": 2 } })`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			q, err := gojq.Parse(tc.expr)
			require.NoError(t, err)
			assert.Equal(t, tc.want, SubstituteVariables(q, map[string]*gojq.Query{"$rt": fb}).String())
		})
	}
}

func TestReadsInput(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{`null`, false},
		{`(null // null).spec.jobs[]?.name`, false},
		{`[1, 2][] | . + 1`, true}, // . is the iteration's, but ReadsInput cannot tell
		{`$x.a`, false},
		{`.a`, true},
		{`.`, true},
		{`..`, true},
		{`length`, true},
		{`{a}`, true},
		{`{a: 1}`, false},
		{`@json`, true},
		{`"\(.a)"`, true},
		{`if $x == null then "a" else empty end`, true}, // empty is a function
	} {
		t.Run(tc.expr, func(t *testing.T) {
			q, err := gojq.Parse(tc.expr)
			require.NoError(t, err)
			assert.Equal(t, tc.want, ReadsInput(q))
		})
	}
}
