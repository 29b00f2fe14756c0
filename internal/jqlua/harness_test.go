package jqlua

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/itchyny/gojq"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
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

// canonicalLua renders a Lua output as canonical JSON, numbers in their
// gojq form (so 2.0 and 2 agree, and -0 stays -0).
func canonicalLua(L *lua.LState, lv lua.LValue) string {
	v, err := luaapi.FromLuaWith(L, lv, gojqConvert)
	if err != nil {
		return "<not JSON: " + err.Error() + ">"
	}
	return canonicalGo(v)
}

// luaOutcome runs an accessor; outputs emitted before an error count too.
func luaOutcome(ctx context.Context, L *lua.LState, acc, input lua.LValue) outcome {
	r := runtimeOf(L)
	r.inexact = false
	out := L.NewTable()
	if ctx != context.Background() {
		L.SetContext(ctx)
		defer L.RemoveContext()
	}
	err := L.CallByParam(lua.P{Fn: acc, NRet: 0, Protect: true}, input, out)
	o := outcome{inexact: r.inexact, timedOut: ctx.Err() != nil}
	for i := 1; i <= out.Len(); i++ {
		o.outputs = append(o.outputs, canonicalLua(L, out.RawGetInt(i)))
	}
	if err != nil {
		if je, ok := AsError(err); ok {
			o.err = je.Msg
		} else {
			o.err = "LUA ERROR: " + err.Error()
		}
	}
	return o
}

// loadUnit loads a Unit's chunk in L and returns its accessor table.
func loadUnit(L *lua.LState, u *Unit) (*lua.LTable, error) {
	fn, err := L.Load(strings.NewReader(Prelude+u.Lua()+"return Q\n"), "jqlua-test")
	if err != nil {
		return nil, fmt.Errorf("generated chunk does not load: %w", err)
	}
	L.Push(fn)
	L.Push(Runtime(L))
	L.Push(FallbackValue(L, u.Fallbacks()))
	if err := L.PCall(2, 1, nil); err != nil {
		return nil, err
	}
	q := L.Get(-1).(*lua.LTable)
	L.Pop(1)
	return q, nil
}

// newTestState is a bare state: generated code needs no standard library.
func newTestState(t testing.TB) *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	t.Cleanup(L.Close)
	return L
}

// unstructured re-types a decoded value as Kubernetes' unstructured
// decoder does: int64 for integers, float64 for the rest. The value is
// kept: -0 stays a float64, as int64 has no negative zero.
func unstructured(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil && (i != 0 || !strings.HasPrefix(string(x), "-")) {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = unstructured(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = unstructured(e)
		}
		return a
	}
	return v
}

// tableInput converts a decoded value to marked tables that keep null
// members as the null sentinel (the convention of tables built by
// generated code), so that tables and views see the same JSON.
func tableInput(L *lua.LState, v any) lua.LValue {
	vs := luaapi.ValuesOf(L)
	switch x := v.(type) {
	case map[string]any:
		tb := vs.NewObject(L, len(x))
		for k, e := range x {
			tb.RawSetString(k, tableInput(L, e))
		}
		return tb
	case []any:
		tb := vs.NewArray(L, len(x))
		for i, e := range x {
			tb.RawSetInt(i+1, tableInput(L, e))
		}
		return tb
	}
	return vs.ToLuaView(L, v)
}

// literalCondition finds an if on a literal, which gopher-lua miscompiles.
var literalCondition = regexp.MustCompile(`(?m)^\s*(if|elseif|while) (not )?(true|false|nil|-?[0-9][0-9.e+]*|"[^"]*") then`)

// differ runs expr on the input JSON in every way karta can (translated
// or on gojq, reading a view or tables) and reports the first disagreement
// with the reference, or "" when all agree. skipped is true when the
// reference is not comparable (inexact integers).
func differ(ctx context.Context, L *lua.LState, expr string, inputJSON []byte) (diff string, skipped bool, err error) {
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
	for _, gojqOnly := range []bool{false, true} {
		u := NewUnit()
		u.gojqOnly = gojqOnly
		ref, err := u.Add(expr)
		if err != nil {
			return "", false, err
		}
		if m := literalCondition.FindString(u.Lua()); m != "" {
			return fmt.Sprintf("%s: literal condition %q (gopher-lua issue #540)\n%s", expr, m, u.Lua()), false, nil
		}
		accs, err := loadUnit(L, u)
		if err != nil {
			return fmt.Sprintf("%s\n%s", err, u.Lua()), false, nil
		}
		acc := accs.RawGetInt(1)
		for _, in := range []struct {
			name  string
			value lua.LValue
		}{
			{"view", luaapi.ToLuaView(L, raw)},
			{"view-int64", luaapi.ToLuaView(L, unstructured(raw))},
			{"tables", tableInput(L, raw)},
		} {
			got := luaOutcome(ctx, L, acc, in.value)
			if got.inexact || got.timedOut {
				return "", true, nil
			}
			if !got.equal(want) {
				return fmt.Sprintf("%s on %s (%s, %s, gojqOnly=%v):\n  gojq: %v\n  lua:  %v\n%s",
					expr, inputJSON, ref, in.name, gojqOnly, want, got, u.Lua()), false, nil
			}
		}
	}
	diff, err = differPortable(ctx, expr, raw, inputJSON, want)
	return diff, false, err
}
