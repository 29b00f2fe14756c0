package jqdirect

import (
	binenc "encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// FuzzAgreesWithGojq generates an expression over the constructs of the
// direct subset from the fuzzer's bytes and runs it on objects decoded
// three ways: where direct evaluation gives a result, gojq gives the same
// one without an error. Every generated expression is in the subset, so
// that it always compiles. The seed corpus is a fixed set of random byte
// strings (go test runs them; make fuzz explores further). Expressions
// read two variables, as a Karta's references: $v, bound to another of the
// inputs, and $l, a list of them (or the absent [] and null).
func FuzzAgreesWithGojq(f *testing.F) {
	r := rand.New(rand.NewPCG(19, 4))
	for range 400 {
		b := make([]byte, 8*(2+r.IntN(6)))
		for i := 0; i < len(b); i += 8 {
			binenc.LittleEndian.PutUint64(b[i:], r.Uint64())
		}
		f.Add(b)
	}
	var inputs []any
	for _, text := range fuzzInputs {
		for _, v := range decodeThreeWays(f, text) {
			inputs = append(inputs, v)
		}
	}
	// lists are $l's values, by input: all the inputs, none, or unbound.
	lists := []any{inputs, []any{}, nil}
	var ran, direct int
	f.Cleanup(func() {
		// The seed corpus must mostly run directly, or it proves little.
		if !f.Failed() && ran >= 1000 {
			assert.Greater(f, direct, ran/4, "direct evaluations of %d", ran)
		}
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &exprGen{data: data}
		expr := g.expr(4)
		q, err := gojq.Parse(expr)
		require.NoError(t, err, "generated %s", expr)
		d := Compile(q, fuzzVars...)
		require.NotNil(t, d, "generated %s is in the direct subset", expr)
		ref, err := gojq.Compile(q, gojq.WithVariables(fuzzVars))
		require.NoError(t, err, expr)
		// The check leaves such an expression's compilation to its first
		// use (jqexpr.Analysis.Code), which must then succeed.
		if a, errs := jqexpr.Check(expr, fuzzVars...); len(errs) == 0 {
			require.NotNil(t, a.Code(), "checked %s has no program", expr)
		}
		for i, in := range inputs {
			vars := []any{inputs[(i+1)%len(inputs)], lists[i%len(lists)]}
			s := Scratch{Vars: vars}
			got, ok := d.Run(in, &s)
			s.Release()
			ran++
			if !ok {
				continue
			}
			direct++
			want, wantErr := gojqOutputs(ref, in, vars...)
			require.NoError(t, wantErr, "jq %s on %#v ($v %#v, $l %#v): direct evaluation gave %v where gojq fails", expr, in, vars[0], vars[1], got)
			require.Equal(t, normalJSON(t, want), normalJSON(t, got), "jq %s on %#v ($v %#v, $l %#v)", expr, in, vars[0], vars[1])
			assertLuaNumbers(t, got, expr)
		}
	})
}

// fuzzInputs are small objects with every type in the fields the
// generator reads.
var fuzzInputs = []string{
	`{"a": [1, "x", null, 2.5], "s": "añb.c-D", "n": 3, "m": {"b": 1, "a": [2]}, "t": true}`,
	`{"a": [], "s": "", "n": -2.5, "m": {}, "t": null}`,
	`{"a": {"k": "v", "j": 1}, "s": "10", "n": 0, "m": [[1], {"x": 1}], "t": false}`,
	`[3, 1, "z", [0]]`,
}

// exprGen builds an expression from bytes: each choice reads one byte,
// and exhausted bytes choose atoms, so that the expression ends.
type exprGen struct {
	data []byte
	pos  int
}

func (g *exprGen) pick(n int) int {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b) % n
}

// fuzzVars are the variables generated expressions read.
var fuzzVars = []string{"$v", "$l"}

var genAtoms = []string{
	`.`, `.a`, `.s`, `.n`, `.m`, `.t`, `.a[]?`, `.m[]?`, `null`, `true`, `false`, `0`, `1`, `-2`, `2.5`, `"a"`, `"é.b"`,
	`""`, `"."`, `[]`, `{}`, `[1, 2]`, `{"a": 1}`, `.a[0]?`, `.[1]?`, `"3"`, `"1e2"`,
	`$v`, `$l`, `$v.a`, `$v.n?`, `$l[]?`, `$l[0]?.s`, `{$v}`, `{$l, k: $v.m}`,
}

var genFuncs0 = []string{
	`length`, `min`, `max`, `add`, `any`, `all`, `first`, `tonumber`, `tostring`, `ascii_downcase`, `ascii_upcase`,
	`keys`, `not`, `type`, `empty`, `to_entries`,
}

var genFuncs1 = []string{
	`select`, `map`, `any`, `all`, `startswith`, `endswith`, `ltrimstr`, `rtrimstr`, `split`, `join`, `error`, `has`, `first`,
}

var genOps = []string{`+`, `-`, `*`, `/`, `%`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `//`, `and`, `or`, `,`, `|`}

func (g *exprGen) expr(depth int) string {
	if depth == 0 {
		return genAtoms[g.pick(len(genAtoms))]
	}
	d := depth - 1
	switch g.pick(16) {
	case 0, 1:
		return genAtoms[g.pick(len(genAtoms))]
	case 2:
		return fmt.Sprintf("(%s %s %s)", g.expr(d), genOps[g.pick(len(genOps))], g.expr(d))
	case 3:
		return fmt.Sprintf("(%s | %s)", g.expr(d), genFuncs0[g.pick(len(genFuncs0))])
	case 4:
		return fmt.Sprintf("%s(%s)", genFuncs1[g.pick(len(genFuncs1))], g.expr(d))
	case 5:
		return fmt.Sprintf("[%s]", g.expr(d))
	case 6:
		// Object construction: constant, quoted, computed and shorthand keys.
		var pairs []string
		for i := range 1 + g.pick(3) {
			switch g.pick(4) {
			case 0:
				pairs = append(pairs, fmt.Sprintf("k%d: %s", i, g.expr(d)))
			case 1:
				pairs = append(pairs, fmt.Sprintf("%q: %s", fmt.Sprint("q", i), g.expr(d)))
			case 2:
				pairs = append(pairs, fmt.Sprintf("(%s): %s", g.expr(d), g.expr(d)))
			default:
				pairs = append(pairs, []string{"a", "s", `"n"`}[g.pick(3)])
			}
		}
		return "{" + strings.Join(pairs, ", ") + "}"
	case 7:
		return fmt.Sprintf(`"<\(%s)-\(%s)>"`, g.expr(d), g.expr(d))
	case 8:
		return fmt.Sprintf("(%s)[%s]", g.expr(d), g.expr(d))
	case 9:
		switch g.pick(3) {
		case 0:
			return fmt.Sprintf("(%s)[%s:]", g.expr(d), g.expr(d))
		case 1:
			return fmt.Sprintf("(%s)[:%s]", g.expr(d), g.expr(d))
		}
		return fmt.Sprintf("(%s)[%s:%s]", g.expr(d), g.expr(d), g.expr(d))
	case 10:
		return fmt.Sprintf("(if %s then %s else %s end)", g.expr(d), g.expr(d), g.expr(d))
	case 11:
		return fmt.Sprintf("(%s | %s)", g.expr(d), g.expr(d))
	case 12:
		if g.pick(2) == 0 {
			// A binding that shadows the caller's $v in its body.
			return fmt.Sprintf("(%s as $v | %s)", g.expr(d), g.expr(d))
		}
		return fmt.Sprintf("-(%s)", g.expr(d))
	case 13:
		if g.pick(2) == 0 {
			// reduce, its variable shadowing the caller's $v.
			return fmt.Sprintf("(reduce %s as $v (%s; %s))", g.expr(d), g.expr(d), g.expr(d))
		}
		// A definition: a filter parameter (a closure over the caller's
		// scope), a $parameter, and the caller's $v in its body.
		return fmt.Sprintf("(def f(g; $w): [g, $w, %s]; f(%s; %s))", g.expr(d), g.expr(d), g.expr(d))
	case 14:
		return fmt.Sprintf("%s(%s; %s)", []string{"any", "all"}[g.pick(2)], g.expr(d), g.expr(d))
	}
	return fmt.Sprintf("(%s)[]?", g.expr(d))
}
