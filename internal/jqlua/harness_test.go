package jqlua

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"regexp"
	"strings"

	"github.com/itchyny/gojq"

	"github.com/kartalua/karta/internal/testobj"
)

// The differential harness: an expression runs on gojq (the reference) and
// on its Lua accessor, and the two outcomes must be identical.

// outcome is what an evaluation shows: its outputs as canonical JSON, in
// order, then its error message if it failed.
type outcome struct {
	outputs []string
	err     string
	// inexact marks an evaluation whose integer arithmetic left ±2^53,
	// where gojq is exact and Lua is not: not comparable.
	inexact bool
	// timedOut marks an evaluation stopped by its deadline.
	timedOut bool
}

func (o outcome) String() string {
	s := "[" + strings.Join(o.outputs, ", ") + "]"
	if o.err != "" {
		s += " error: " + o.err
	}
	return s
}

func (o outcome) equal(p outcome) bool {
	if o.err != p.err || len(o.outputs) != len(p.outputs) {
		return false
	}
	for i := range o.outputs {
		if o.outputs[i] != p.outputs[i] {
			return false
		}
	}
	return true
}

// decodeInput decodes JSON text the way a JSON or YAML decoder hands an
// object to karta: numbers as json.Number. It fails on anything but one
// JSON value.
func decodeInput(text []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// referenceInput is the input the reference gojq run sees: the decoded
// value with numbers as gojq reads them when karta calls it, ints for
// integral values within ±2^53 and float64 otherwise. Written here
// independently of normalize, which is under test.
func referenceInput(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil && !math.IsInf(f, 0) {
			panic(err)
		}
		if f == math.Trunc(f) && math.Abs(f) <= 1<<53 && !(f == 0 && math.Signbit(f)) {
			return int(f)
		}
		return f
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = referenceInput(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = referenceInput(e)
		}
		return a
	}
	return v
}

// gojqOutcome runs code on the reference input with the output limit
// (OutputLimit) applied, as karta applies it.
func gojqOutcome(ctx context.Context, code *gojq.Code, input any) outcome {
	var o outcome
	iter := code.RunWithContext(ctx, input)
	for {
		v, ok := iter.Next()
		if !ok {
			return o
		}
		if err, ok := v.(error); ok {
			o.err = err.Error()
			o.timedOut = ctx.Err() != nil
			return o
		}
		if len(o.outputs) == OutputLimit {
			o.err = TooManyOutputs
			return o
		}
		o.inexact = o.inexact || hasBigInt(v)
		o.outputs = append(o.outputs, canonicalGo(v))
	}
}

// hasBigInt reports an integer beyond ±2^53 in a gojq output: a Lua
// number cannot hold it, on either path.
func hasBigInt(v any) bool {
	switch x := v.(type) {
	case int:
		return x > 1<<53 || x < -(1<<53)
	case *big.Int:
		return true
	case []any:
		for _, e := range x {
			if hasBigInt(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasBigInt(e) {
				return true
			}
		}
	}
	return false
}

func canonicalGo(v any) string {
	b, err := gojq.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// literalCondition finds an if on a literal, which gopher-lua miscompiles.
var literalCondition = regexp.MustCompile(`(?m)^\s*(if|elseif|while) (not )?(true|false|nil|-?[0-9][0-9.e+]*|"[^"]*") then`)

// differ runs expr on the input JSON on the portable runtime (the Lua the
// exports ship; differPortable) and reports the first disagreement with
// the reference, gojq, or "" when they agree. skipped is true when the
// reference is not comparable: integers beyond ±2^53, exact in gojq and
// rounded in Lua (an output beyond them, or a disagreement that gojq
// shows too when it computes in floats, as Lua does), or a timeout.
func differ(ctx context.Context, expr string, inputJSON []byte) (diff string, skipped bool, err error) {
	raw, err := decodeInput(inputJSON)
	if err != nil {
		return "", false, err
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		return "", false, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return "", false, err
	}
	want := gojqOutcome(ctx, code, referenceInput(raw))
	if want.timedOut || want.inexact {
		return "", true, nil
	}
	inexact := func(got outcome) bool {
		alt := gojqOutcome(ctx, code, testobj.Floats(raw))
		return !alt.timedOut && got.equal(alt)
	}
	return differPortable(ctx, expr, raw, inputJSON, want, inexact)
}
