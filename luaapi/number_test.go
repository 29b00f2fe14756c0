package luaapi

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGoNumberAgreesWithParseFloat: GoNumber reads a short integer
// json.Number without strconv (shortInteger), and must give exactly what
// strconv.ParseFloat gives for it, the sign of zero included; other texts
// are ParseFloat's (NaN for what it refuses).
func TestGoNumberAgreesWithParseFloat(t *testing.T) {
	for _, tc := range []struct {
		in    string
		short bool // read by shortInteger
	}{
		{"0", true},
		{"-0", true},
		{"7", true},
		{"-7", true},
		{"007", true},
		{"-007", true},
		{"1048576", true},
		{"999999999999999", true},
		{"-999999999999999", true},
		{"9999999999999999", false},
		{"9007199254740993", false},
		{"123456789012345678901234567890", false},
		{"", false},
		{"-", false},
		{"+1", false},
		{"--1", false},
		{"1.0", false},
		{"1.5", false},
		{"1e3", false},
		{"1E3", false},
		{"0x10", false},
		{" 1", false},
		{"1 ", false},
		{"NaN", false},
		{"Infinity", false},
		{"٣", false},
	} {
		_, short := shortInteger(tc.in)
		assert.Equal(t, tc.short, short, "%q read in place", tc.in)
		want := parseFloatNumber(tc.in)
		got, gotOK := GoNumber(json.Number(tc.in))
		assert.True(t, gotOK, "%q", tc.in)
		if math.IsNaN(want) {
			assert.True(t, math.IsNaN(got), "%q", tc.in)
			continue
		}
		assert.Equal(t, want, got, "%q", tc.in)
		assert.Equal(t, math.Signbit(want), math.Signbit(got), "%q: the sign of zero", tc.in)
	}
	for i := int64(-3000); i <= 3000; i += 7 {
		for _, n := range []int64{i, i * 1_000_003, i * 333_333_333_331} {
			s := strconv.FormatInt(n, 10)
			want := parseFloatNumber(s)
			got, ok := GoNumber(json.Number(s))
			assert.True(t, ok, s)
			assert.Equal(t, want, got, s)
		}
	}
}

// parseFloatNumber is GoNumber's reading of a json.Number by
// strconv.ParseFloat alone: its value, ±Inf out of range, NaN for a text
// it refuses.
func parseFloatNumber(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return math.NaN()
	}
	return f
}
