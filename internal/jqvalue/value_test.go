package jqvalue

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInput(t *testing.T) {
	shared := map[string]any{"s": "x", "n": 1.5}
	for _, tc := range []struct {
		name     string
		in, want any
	}{
		{"a plain object", shared, shared},
		{"int64", int64(3), 3},
		{"int64 beyond int", int64(math.MinInt64), int(math.MinInt64)},
		{"uint64 beyond int", uint64(math.MaxUint64), float64(math.MaxUint64)},
		{"int32", int32(-2), -2},
		{"uint32", uint32(2), 2},
		{"float32", float32(0.5), 0.5},
		{"json.Number is gojq's own", json.Number("12"), json.Number("12")},
		{"nested", map[string]any{"a": []any{int64(1), "x"}, "b": true}, map[string]any{"a": []any{1, "x"}, "b": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Input(tc.in))
		})
	}
	// Converting copies the containers: the object is never written.
	obj := map[string]any{"a": []any{int64(1)}}
	_ = Input(obj)
	assert.Equal(t, int64(1), obj["a"].([]any)[0])
}

func TestOutput(t *testing.T) {
	huge := new(big.Int).Lsh(big.NewInt(1), 70)
	shared := map[string]any{"s": "x", "n": 1.5, "i": int64(2)}
	for _, tc := range []struct {
		name     string
		in, want any
	}{
		{"client-go's own", shared, shared},
		{"int", 3, int64(3)},
		{"a big integer that fits", new(big.Int).SetInt64(-7), int64(-7)},
		{"a big integer that does not", huge, float64(1 << 70)},
		{"nested", map[string]any{"a": []any{1, "x"}, "b": true}, map[string]any{"a": []any{int64(1), "x"}, "b": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Output(tc.in))
		})
	}
	// Output undoes Input for what client-go decodes.
	obj := map[string]any{"a": []any{int64(1), 2.5, "s", nil, map[string]any{"b": int64(-4)}}}
	assert.Equal(t, obj, Output(Input(obj)))
	// Converting copies the containers: the value is never written.
	v := map[string]any{"a": []any{1}}
	_ = Output(v)
	assert.Equal(t, 1, v["a"].([]any)[0])
}

func TestToString(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{"text", "text"},
		{int64(8), "8"},
		{1.5, "1.5"},
		{1e21, "1e+21"},
		{nil, "null"},
		{map[string]any{"b": int64(1), "a": []any{true}}, `{"a":[true],"b":1}`},
	} {
		got, err := ToString(tc.in)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%v", tc.in)
	}
}
