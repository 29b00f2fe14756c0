package testobj

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzJSON is the value a fuzz input stands for in the value bridges'
// fuzz tests: data decoded as JSON with its numbers as json.Number (so
// that 1e400 and 2^63 reach the converters as written), and, when it is an
// object, the raw bytes as one more member ("raw bytes"), so that invalid
// UTF-8 is covered too. ok is false when data is not JSON.
func FuzzJSON(data []byte) (v any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if m, isObject := v.(map[string]any); isObject {
		m["raw bytes"] = string(data)
	}
	return v, true
}

// Depth is the number of nested arrays and objects on the deepest path of
// a decoded JSON value.
func Depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, Depth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, Depth(e))
		}
		return d + 1
	}
	return 0
}

// JSONRoundTrip is v marshalled and unmarshalled by encoding/json: numbers
// of any Go type become float64 and invalid UTF-8 becomes U+FFFD, so that
// values from different converters compare equal when their JSON does.
func JSONRoundTrip(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

// Floats is v with every number a float64, as Lua holds numbers: gojq run
// on it computes as Lua does, which tells the differential tests of the
// exports' Lua a rounding beyond ±2^53 (exact in gojq on ints) from a
// disagreement. Numbers are json.Number, as a decoder with UseNumber
// leaves them; maps and slices are copied.
func Floats(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = Floats(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = Floats(e)
		}
		return a
	}
	return v
}
