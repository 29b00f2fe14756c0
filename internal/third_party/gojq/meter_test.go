package gojq

import (
	"context"
	"fmt"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingMeter records what an evaluation is charged.
type countingMeter struct {
	context.Context
	steps, bytes int64
}

func (m *countingMeter) ChargeSteps(n int64) error  { m.steps = addSat(m.steps, n); return nil }
func (m *countingMeter) ChargeMemory(n int64) error { m.bytes = addSat(m.bytes, n); return nil }

// A regular expression is charged by its compiled program, not its text.
func TestRegexpProgram(t *testing.T) {
	for _, tc := range []struct {
		re       string
		min, max int64
		groups   int64
	}{
		{re: "a", min: 1, max: 4},
		{re: "(a)(b)", min: 8, max: 16, groups: 2},                                     // Go compiles 8
		{re: "[a-z]{1,1000}", min: 2001, max: 10000},                                   // Go compiles 2,001
		{re: "((a|b|c|d|e|f|g|h|i|j){1,30}){1,30}x", min: 3662, max: 10000, groups: 2}, // Go compiles 3,662
		{re: `\pL+`, min: 1, max: 32},
	} {
		insts, groups := regexpProgram(tc.re, "")
		assert.GreaterOrEqual(t, insts, tc.min, tc.re)
		assert.LessOrEqual(t, insts, tc.max, tc.re)
		assert.Equal(t, tc.groups, groups, tc.re)
	}
	// A pattern that does not parse costs nothing: gojq refuses it.
	insts, _ := regexpProgram("(", "")
	assert.Equal(t, int64(1), insts)
}

// The charges of the builtins whose work grows faster than their
// arguments: each is the product the docs/charges.md row states.
func TestChargesGrowWithTheWork(t *testing.T) {
	long := make([]any, 100000)
	for i := range long {
		long[i] = 97
	}
	big1 := new(big.Int).Lsh(big.NewInt(1), 64*1000) // 1,001 words
	for _, tc := range []struct {
		name     string
		fn       string
		v        any
		args     []any
		minSteps int64
	}{
		{"regex by program × subject", "_match", string(make([]byte, 10000)), []any{"((a|b|c|d|e|f|g|h|i|j){1,30}){1,30}x", "", false}, 3662 * 10000},
		{"big multiplication by words × words", "_multiply", nil, []any{big1, big1}, 1001 * 1001},
		{"big modulo by words × words", "_modulo", nil, []any{big1, big1}, 1001 * 1001},
		{"contains by nodes × nodes", "contains", long, []any{long}, 100000 * 100000 / 8},
		{"indices of strings by subject × key", "indices", string(make([]byte, 100000)), []any{string(make([]byte, 1000))}, 100000 * 1000 / 8},
		{"tonumber by digit runs", "tonumber", string(make([]byte, 0)) + fmt.Sprintf("%0190000d", 1), nil, 10000 * 10000 / 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &countingMeter{Context: context.Background()}
			require.NoError(t, chargeCall(m, tc.fn, tc.v, tc.args))
			assert.GreaterOrEqual(t, m.steps, tc.minSteps)
		})
	}
}

// A program keeps at most regexpCacheSize compiled patterns, however many
// its inputs bring, and still matches every one.
func TestRegexpCacheIsBounded(t *testing.T) {
	var cache regexpCache
	for i := range 2 * regexpCacheSize {
		re := fmt.Sprintf("x%d", i)
		m, err := compileRegexp(re, "", &cache)
		require.NoError(t, err)
		require.True(t, m.MatchString(re))
	}
	n := 0
	cache.m.Range(func(_, _ any) bool { n++; return true })
	assert.Equal(t, regexpCacheSize, n)
}
