package jqlua

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"strconv"

	"github.com/kartalua/karta/internal/third_party/gojq"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// Numbers. Lua has only float64; gojq has ints and floats, which print and
// compute alike except for the sign of zero and beyond ±2^53. karta treats
// a number as gojq treats an int exactly when it is "int-like": integral,
// within ±2^53, and not -0. Arithmetic on two int-like numbers follows
// gojq's int rules (so 0 * -1 is 0, not -0), everything else IEEE float
// rules, and the gojq path sees int-like numbers as Go ints (normalize), so
// that both paths agree.

// intLike reports whether f counts as a gojq int.
func intLike(f float64) bool {
	return f == math.Trunc(f) && math.Abs(f) <= luaapi.MaxExactInt && (f != 0 || !math.Signbit(f))
}

// gojqNumber is the gojq form of a Lua number.
func gojqNumber(f float64) any {
	if intLike(f) {
		return int(f)
	}
	return f
}

// normalize returns v with its numbers in the form gojq gets on the
// translated path's terms: int-like numbers as int, others as float64 (so
// json.Number, int64 and friends become int or float64). It copies only the
// maps and slices that contain a number to change, so a tree that is
// already normal is returned as is. A value of a type gojq does not know is
// an error (gojq itself would panic on it).
func normalize(v any) (any, error) {
	w, _, err := normalizeChanged(v)
	return w, err
}

func normalizeChanged(v any) (any, bool, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return v, false, nil
	case int:
		if x > luaapi.MaxExactInt || x < -luaapi.MaxExactInt {
			return float64(x), true, nil
		}
		return v, false, nil
	case float64:
		if intLike(x) {
			return int(x), true, nil
		}
		return v, false, nil
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			w, changed, err := normalizeChanged(e)
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = w
			}
		}
		if out == nil {
			return v, false, nil
		}
		return out, true, nil
	case []any:
		var out []any
		for i, e := range x {
			w, changed, err := normalizeChanged(e)
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = w
			}
		}
		if out == nil {
			return v, false, nil
		}
		return out, true, nil
	case json.Number, *big.Int:
		f, _ := luaapi.GoNumber(x)
		return gojqNumber(f), true, nil
	}
	if f, ok := luaapi.GoNumber(v); ok {
		return gojqNumber(f), true, nil
	}
	return nil, false, fmt.Errorf("Go value of type %T is not JSON", v)
}

// gojqConvert converts Lua values for gojq: views unwrap to their
// (normalized) Go value, tables convert, numbers take their gojq form, and
// NaN and ±Inf are kept (jq arithmetic can make them).
var gojqConvert = luaapi.ConvertOptions{
	Root:   "value",
	Number: func(f float64) (any, error) { return gojqNumber(f), nil },
	View:   normalize,
}

// toGo converts a Lua JV to the value gojq would hold. A value that is not
// JSON (a function, a foreign userdata, a cyclic table) is a Lua error, not
// a jq error: it is a bug of the caller, not of the expression.
func (r *runtime) toGo(L *lua.LState, lv lua.LValue) any {
	switch x := lv.(type) {
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return gojqNumber(float64(x))
	case lua.LBool:
		return bool(x)
	}
	if lv == lua.LValue(r.vs.Null) {
		return nil
	}
	v, err := luaapi.FromLuaWith(L, lv, gojqConvert)
	if err != nil {
		L.RaiseError("jq: %s", err.Error())
	}
	return v
}

// Slow paths. The runtime handles the common cases of each primitive in Go
// and hands everything else (composite operands, and every error) to a
// small gojq program, so that results and messages are gojq's by
// construction.
var (
	slowIndex     = mustCompile(`$a[$b]`, "$a", "$b")
	slowSlice     = mustCompile(`$a[$b:$c]`, "$a", "$b", "$c")
	slowIterate   = mustCompile(`$a[]`, "$a")
	slowPlus      = mustCompile(`$a + $b`, "$a", "$b")
	slowMinus     = mustCompile(`$a - $b`, "$a", "$b")
	slowTimes     = mustCompile(`$a * $b`, "$a", "$b")
	slowDivide    = mustCompile(`$a / $b`, "$a", "$b")
	slowModulo    = mustCompile(`$a % $b`, "$a", "$b")
	slowNegate    = mustCompile(`-$a`, "$a")
	slowUnaryPlus = mustCompile(`+$a`, "$a")
	slowLength    = mustCompile(`$a | length`, "$a")
	slowKeys      = mustCompile(`$a | keys`, "$a")
	slowHas       = mustCompile(`$a | has($b)`, "$a", "$b")
	slowToEntries = mustCompile(`$a | to_entries`, "$a")
	slowAdd       = mustCompile(`$a | add`, "$a")
	slowToNumber  = mustCompile(`$a | tonumber`, "$a")
	slowToString  = mustCompile(`$a | tostring`, "$a")
	slowError     = mustCompile(`$a | error`, "$a")
)

func mustCompile(src string, vars ...string) *gojq.Code {
	q, err := gojq.Parse(src)
	if err != nil {
		panic(err)
	}
	c, err := gojq.Compile(q, gojq.WithVariables(vars))
	if err != nil {
		panic(err)
	}
	return c
}

// runSlow runs a slow-path program on Go values: its one output or its
// error. Under a call's context, its work is charged to the call (gojq's
// Meter), so a composite operand cannot make it run unbounded.
func runSlow(ctx context.Context, code *gojq.Code, args ...any) (any, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	v, ok := code.RunWithContext(ctx, nil, args...).Next()
	if !ok {
		return nil, fmt.Errorf("jq: internal: slow path produced no output")
	}
	if err, ok := v.(error); ok {
		return nil, err
	}
	return v, nil
}

// slow evaluates a slow-path program on Lua values: the result as a Lua
// value, or a raised jq error.
func (r *runtime) slow(L *lua.LState, code *gojq.Code, args ...lua.LValue) lua.LValue {
	v, err := r.slowGo(L, code, args...)
	if err != nil {
		r.raiseGo(L, err)
	}
	return r.vs.ToLuaView(L, v)
}

// slowOpt is slow for `?`: a jq error means no output (Lua nil).
func (r *runtime) slowOpt(L *lua.LState, code *gojq.Code, args ...lua.LValue) lua.LValue {
	v, err := r.slowGo(L, code, args...)
	if err != nil {
		return lua.LNil
	}
	return r.vs.ToLuaView(L, v)
}

func (r *runtime) slowGo(L *lua.LState, code *gojq.Code, args ...lua.LValue) (any, error) {
	var buf [3]any
	goArgs := buf[:0]
	for _, a := range args {
		goArgs = append(goArgs, r.toGo(L, a))
	}
	v, err := runSlow(L.Context(), code, goArgs...)
	if err != nil {
		if ctx := L.Context(); ctx != nil && ctx.Err() != nil {
			// A limit of the call, not a jq error: no try may catch it.
			L.RaiseError("%s", ctx.Err().Error())
		}
	}
	return v, err
}

// formatNumber renders a number as gojq's tostring does.
func formatNumber(f float64) string {
	if intLike(f) {
		return strconv.FormatInt(int64(f), 10)
	}
	b, _ := gojq.Marshal(f)
	return string(b)
}
