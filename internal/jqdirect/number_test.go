package jqdirect

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kartalua/karta/luaapi"
)

// TestGoNumberAgreesWithParseFloat: goNumber reads a short integer
// json.Number without strconv, and must give exactly what
// luaapi.GoNumber (ParseFloat) gives for every json.Number, the sign of
// zero included; anything else is GoNumber's.
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
		want, wantOK := luaapi.GoNumber(json.Number(tc.in))
		got, gotOK := goNumber(json.Number(tc.in))
		assert.Equal(t, wantOK, gotOK, "%q", tc.in)
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
			want, _ := luaapi.GoNumber(json.Number(s))
			got, ok := goNumber(json.Number(s))
			assert.True(t, ok, s)
			assert.Equal(t, want, got, s)
		}
	}
	// Other Go numbers are GoNumber's.
	for _, v := range []any{int64(3), 2.5, int(4), uint8(5), float32(1.5)} {
		want, wantOK := luaapi.GoNumber(v)
		got, gotOK := goNumber(v)
		assert.Equal(t, wantOK, gotOK, "%T", v)
		assert.Equal(t, want, got, "%T", v)
	}
}
