package jqdirect

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// TestConstantConstructions: a construction of constants under constant
// keys compiles to its value (converted as the construction converts:
// integral numbers int64), which every run gives without building it; one
// with anything computed, a computed key, or nothing in it ({} and [],
// fresh per run) is built per run.
func TestConstantConstructions(t *testing.T) {
	for _, tc := range []struct {
		expr     string
		constant bool
		want     any
	}{
		{`{a: 1, b: "x"}`, true, map[string]any{"a": int64(1), "b": "x"}},
		{`{limits: {cpu: "1", memory: "1Gi"}, n: null, f: 1.5}`, true,
			map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}, "n": nil, "f": 1.5}},
		{`[{name: "m", mountPath: "/mnt"}, 2, [true]]`, true,
			[]any{map[string]any{"name": "m", "mountPath": "/mnt"}, int64(2), []any{true}}},
		{`{a: 1, a: 2}`, true, map[string]any{"a": int64(2)}},
		{`{a: .x}`, false, nil},
		{`{(.k): 1}`, false, nil},
		{`{a: {}}`, false, nil},
		{`[[]]`, false, nil},
		{`{a: (1, 2)}`, false, nil},
		{`[1, .x]`, false, nil},
		{`{a: -1}`, true, map[string]any{"a": int64(-1)}},
		{`{a: -.x}`, false, nil},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err, tc.expr)
		p := Compile(q)
		require.NotNil(t, p, tc.expr)
		lit, ok := p.root.(*literalNode)
		require.Equal(t, tc.constant, ok, tc.expr)
		if !tc.constant {
			continue
		}
		assert.Equal(t, tc.want, lit.v, tc.expr)
		s := Scratch{Size: 1000}
		var outs []any
		in := map[string]any{}
		allocs := testing.AllocsPerRun(100, func() { outs, ok = p.Run(in, &s) })
		s.Release()
		require.True(t, ok, tc.expr)
		require.Len(t, outs, 1, tc.expr)
		assert.Zero(t, allocs, "%s: built per run", tc.expr)
	}
}

// TestObjectOfSingles: an object of constant keys and single values is
// built by one loop (objectNode.one) allocating the map alone, and no
// object when a value has no output.
func TestObjectOfSingles(t *testing.T) {
	in := map[string]any{"x": "v", "n": int64(3), "m": map[string]any{"k": "w"}}
	for _, tc := range []struct {
		expr string
		want []any
	}{
		{`{a: .x, b: .m.k, c: {d: "e"}}`, []any{map[string]any{"a": "v", "b": "w", "c": map[string]any{"d": "e"}}}},
		{`{a: .x, b: (.m | select(.k == "z")), c: .n}`, nil},
		{`{a: .n, a: .x}`, []any{map[string]any{"a": "v"}}},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err, tc.expr)
		p := Compile(q)
		require.NotNil(t, p, tc.expr)
		require.True(t, p.one, tc.expr)
		var s Scratch
		outs, ok := p.Run(in, &s)
		require.True(t, ok, tc.expr)
		assert.Equal(t, tc.want, outs, tc.expr)
		s.Release()
		if tc.want == nil {
			continue
		}
		s = Scratch{Size: 1000}
		allocs := testing.AllocsPerRun(20, func() { p.Run(in, &s) })
		s.Release()
		// A small map is two allocations: its header and its group.
		assert.LessOrEqual(t, allocs, 2.0, "%s: the map alone", tc.expr)
	}
}

// TestRecordOfSinglesAllocatesOnce: a record of at most four keys built
// by objectNode.one is one allocation (newRecord), its values inline.
func TestRecordOfSinglesAllocatesOnce(t *testing.T) {
	in := map[string]any{"x": "v", "n": int64(300), "m": map[string]any{"k": "w"}}
	q, err := gojq.Parse(`{a: .x, b: .m.k, c: .n} | .c`)
	require.NoError(t, err)
	p := Compile(q)
	require.NotNil(t, p)
	require.True(t, p.one)
	obj := p.root.(*pipeNode).l.(*objectNode)
	require.True(t, obj.asRecord)
	c := &dctx{}
	v, has, ok := obj.one(c, in)
	require.True(t, ok && has)
	assert.Equal(t, []any{"v", "w", int64(300)}, v.(*record).vals)
	assert.Equal(t, 1.0, testing.AllocsPerRun(20, func() { obj.one(c, in) }))
}

// TestNegativeLiterals: a negated number literal compiles to its value
// (no negation per evaluation, no boxing), -0 keeping its sign as the
// negation gives it; a negated path still negates.
func TestNegativeLiterals(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want float64
	}{{`-1`, -1}, {`-(2.5)`, -2.5}, {`-0`, math.Copysign(0, -1)}, {`- 1e3`, -1000}} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err)
		p := Compile(q)
		require.NotNil(t, p, tc.expr)
		lit, ok := p.root.(*literalNode)
		require.True(t, ok, "%s: %T", tc.expr, p.root)
		assert.Equal(t, math.Float64bits(tc.want), math.Float64bits(lit.v.(float64)), tc.expr)
	}
	q, err := gojq.Parse(`.n == -1`)
	require.NoError(t, err)
	p := Compile(q)
	in := map[string]any{"n": int64(-1)}
	var s Scratch
	outs, ok := p.Run(in, &s)
	require.True(t, ok)
	assert.Equal(t, []any{true}, outs)
	s = Scratch{Size: 1000}
	assert.Zero(t, testing.AllocsPerRun(20, func() { p.Run(in, &s) }))
	q, err = gojq.Parse(`-.n`)
	require.NoError(t, err)
	_, ok = Compile(q).root.(*negNode)
	assert.True(t, ok, "a path is negated per evaluation")
}

// directLikeGojq compiles expr directly and requires its outputs on in to
// be gojq's; it returns the program and its outputs.
func directLikeGojq(t *testing.T, expr string, in any) (*Program, []any) {
	t.Helper()
	q, err := gojq.Parse(expr)
	require.NoError(t, err, expr)
	p := Compile(q)
	require.NotNil(t, p, expr)
	ref, err := gojq.Compile(q)
	require.NoError(t, err)
	want, err := gojqOutputs(ref, in)
	require.NoError(t, err, expr)
	var s Scratch
	outs, ok := p.Run(in, &s)
	s.Release()
	require.True(t, ok, expr)
	assert.Equal(t, normalJSON(t, want), normalJSON(t, outs), expr)
	return p, outs
}

// TestStringsUnchangedAllocateNothing: a string builtin whose result is
// its input (ascii_downcase of a lower-case string, a trim that trims
// nothing, the whole string sliced, one string joined) hands the input
// back, boxed already, and one of one ASCII character comes boxed from
// asciiStrings; the values are gojq's.
func TestStringsUnchangedAllocateNothing(t *testing.T) {
	in := map[string]any{"s": "2048m", "u": "Gi", "i": "0]", "m": "8g", "e": "", "h": "héllo"}
	allocs := func(expr string) float64 {
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		p := Compile(q)
		require.NotNil(t, p, expr)
		s := Scratch{Size: 1000}
		defer s.Release()
		return testing.AllocsPerRun(20, func() { p.Run(in, &s) })
	}
	for _, tc := range []struct {
		expr string
		want any
		// base is what the expression builds before the builtin, whose
		// allocations are all it may make ("": none).
		base string
	}{
		{`.s | ascii_downcase`, "2048m", ""},
		{`.s | ltrimstr("x")`, "2048m", ""},
		{`.s | rtrimstr("x")`, "2048m", ""},
		{`.i | rtrimstr("]")`, "0", ""},
		{`.s | ltrimstr("2048")`, "m", ""},
		{`.s | ltrimstr("2048m")`, "", ""},
		{`.m | .[:-1]`, "8", ""},
		{`.s | .[0:]`, "2048m", ""},
		{`.h | .[:9]`, "héllo", ""},
		{`.s | split(" ") | join("")`, "2048m", `.s | split(" ")`},
		{`.e | split(" ") | join("")`, "", `.e | split(" ")`},
		{`[.s] | join("-")`, "2048m", `[.s]`},
		// Changed: a new string, gojq's.
		{`.u | ascii_downcase`, nil, ""},
		{`.h | .[1:2]`, nil, ""},
		{`.s | ascii_upcase | ascii_upcase`, nil, ""},
		{`[.s, .m] | join("-")`, nil, ""},
	} {
		_, outs := directLikeGojq(t, tc.expr, in)
		if tc.want == nil {
			continue
		}
		assert.Equal(t, []any{tc.want}, outs, tc.expr)
		want := 0.0
		if tc.base != "" {
			want = allocs(tc.base)
		}
		assert.Equal(t, want, allocs(tc.expr), tc.expr)
	}
}

// TestArithmeticChains: a chain of arithmetic operators boxes only its
// result (Spark's memory in Mi), with gojq's value: fewer allocations
// than the same chain with every operator boxing its own, as many as one
// operator's; a non-number in the chain goes through binary as before.
func TestArithmeticChains(t *testing.T) {
	in := map[string]any{"m": int64(8589934592), "n": int64(5), "s": "x"}
	// chains are the binNodes under n flagged chain.
	var chains func(n dnode) []*binNode
	chains = func(n dnode) []*binNode {
		switch x := n.(type) {
		case *binNode:
			out := append(chains(x.l), chains(x.r)...)
			if x.chain {
				out = append(out, x)
			}
			return out
		case *interpNode:
			var out []*binNode
			for _, p := range x.parts {
				out = append(out, chains(p)...)
			}
			return out
		case *pipeNode:
			return append(chains(x.l), chains(x.r)...)
		}
		return nil
	}
	run := func(p *Program) float64 {
		s := Scratch{Size: 1000}
		defer s.Release()
		return testing.AllocsPerRun(20, func() { p.Run(in, &s) })
	}
	q, err := gojq.Parse(`.m / 2`)
	require.NoError(t, err)
	one := run(Compile(q))
	for _, tc := range []struct {
		expr   string
		chain  bool
		allocs float64 // more than one operator's
	}{
		{`"\((.m % 4503599627370496 - .m % 1048576) / 1048576)Mi"`, true, 4}, // the number, its text, the string
		{`(.m % 4503599627370496 - .m % 1048576) / 1048576`, true, 0},
		{`.m * 3 * 5 * 7`, true, 0},
		{`.n * 300 * 5 * 7`, true, 0},
		{`(.s + "y") + "z"`, true, 2}, // strings concatenate through binary
		{`.m / 2 | . + 1`, false, 1},  // a pipe between: two results
	} {
		p, _ := directLikeGojq(t, tc.expr, in)
		cs := chains(p.root)
		require.Equal(t, tc.chain, len(cs) > 0, tc.expr)
		got := run(p)
		assert.Equal(t, one+tc.allocs, got, tc.expr)
		if !tc.chain || strings.Contains(tc.expr, `"y"`) {
			continue
		}
		for _, b := range cs {
			b.chain = false
		}
		assert.Greater(t, run(p), got, "%s: each operator boxing its own", tc.expr)
	}
}

// TestSplitEmptyIsStringsSplit: split("") gives strings.Split(s, "")'s
// pieces (what gojq gives), invalid bytes and multi-byte characters
// included, and hands out boxed ASCII characters without allocating them.
func TestSplitEmptyIsStringsSplit(t *testing.T) {
	for _, s := range []string{"512m", "héllo", "a\xffb\xe2\x82", "日本", "x"} {
		c := &dctx{}
		got, ok := fnSplit(c, s, "")
		require.True(t, ok, s)
		var want []any
		for _, p := range strings.Split(s, "") {
			want = append(want, p)
		}
		assert.Equal(t, want, got, "%q", s)
	}
	allocs := testing.AllocsPerRun(50, func() { fnSplit(&dctx{}, "1024", "") })
	assert.LessOrEqual(t, allocs, 2.0, "the array and the context alone")
}

// TestSortedKeysAllocatesOnce: an object's keys in jq's order, in one
// allocation (iterating KServe's predictor, keys, comparing objects).
func TestSortedKeysAllocatesOnce(t *testing.T) {
	m := map[string]any{"model": 1, "minReplicas": 2, "maxReplicas": 3, "labels": 4, "annotations": 5,
		"tolerations": 6, "scaleMetric": 7, "scaleTarget": 8}
	assert.Equal(t, []string{"annotations", "labels", "maxReplicas", "minReplicas", "model", "scaleMetric",
		"scaleTarget", "tolerations"}, sortedKeys(m))
	assert.Equal(t, 1.0, testing.AllocsPerRun(50, func() { sortedKeys(m) }))
}

// TestTypeAllocatesNothing: `type` hands out its names boxed once.
func TestTypeAllocatesNothing(t *testing.T) {
	for _, v := range []any{nil, true, int64(1), 1.5, "s", []any{}, map[string]any{}} {
		name, ok := fnType(nil, v)
		require.True(t, ok)
		assert.Zero(t, testing.AllocsPerRun(20, func() { fnType(nil, v) }), name)
	}
}
