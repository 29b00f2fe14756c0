// Package jqvalue is the boundary between Kubernetes objects as Go holds
// them and the values gojq accepts: Input converts the number types a
// decoder produces (int64 from client-go, uint64, float32, …) that gojq
// does not take, and ToString is jq's tostring over such values. Every
// path into gojq and every back end that prints a value goes through
// here, so all of them see one value model.
package jqvalue

import (
	"math"
	"math/big"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Input returns v in the value types gojq accepts. Objects may hold
// int64 (and a few other Go number types) where gojq expects int, float64
// or json.Number, and gojq panics on the others; they are converted in a
// copy of the containers on the way to them. v itself is returned when
// there are none, which is the common case and costs one walk and no
// allocation.
func Input(v any) any {
	out, _ := normalize(v)
	return out
}

// Output returns v, a value gojq produced, in the types an Unstructured
// holds (what client-go's decoder gives): gojq's int as int64, and an
// integer too large for int64 (*big.Int) as float64, as the decoder reads
// such a number. Containers are copied only on the way to a converted
// value; v itself is returned when there is none.
func Output(v any) any {
	out, _ := convert(v, toClientGo)
	return out
}

func toClientGo(v any) (any, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), true
		}
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	}
	return v, false
}

func normalize(v any) (any, bool) { return convert(v, toGojq) }

// convert applies scalar to every scalar of v, copying the containers on
// the way to a changed one.
func convert(v any, scalar func(any) (any, bool)) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if n, changed := convert(e, scalar); changed {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = n
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			if n, changed := convert(e, scalar); changed {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = n
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	}
	return scalar(v)
}

func toGojq(v any) (any, bool) {
	switch x := v.(type) {
	case int64:
		if x >= math.MinInt && x <= math.MaxInt {
			return int(x), true
		}
		return float64(x), true
	case int32:
		return int(x), true
	case uint64:
		if x <= math.MaxInt {
			return int(x), true
		}
		return float64(x), true
	case uint32:
		return int(x), true
	case float32:
		return float64(x), true
	}
	return v, false
}

// ToString is jq's tostring: strings pass through, anything else is
// compact JSON with sorted keys, numbers spelt as gojq spells them.
func ToString(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := gojq.Marshal(Input(v))
	if err != nil {
		return "", err
	}
	return string(b), nil
}
