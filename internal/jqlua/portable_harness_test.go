package jqlua

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/karmada/kube"
	"github.com/kartalua/karta/luaapi"
)

// The portable runtime's side of the differential harness: a portable
// unit's accessor runs on PortableRuntime in a state with Karmada's sandbox
// (the base functions, string, table, math, os and kube; no setmetatable),
// through the same protected call Karmada's scripts get.

// portableState is such a state with a loaded chunk.
type portableState struct {
	L        *lua.LState
	J, JX, Q *lua.LTable
	run      lua.LValue // run(acc, v): outputs, and a jq error's message
}

// portableRunner calls an accessor and turns a raised jq error into its
// message; any other error propagates. With one, it calls the accessor
// without an output table, as exports call one whose expression has one
// output (Unit.One), and returns its result as the outputs.
const portableRunner = `
return J, JX, Q, function(acc, v, one)
  local out = {}
  local ok, e
  if one then
    ok, e = pcall(acc, v)
    if ok then return {e}, nil end
  else
    ok, e = pcall(acc, v, out)
    if ok then return out, nil end
  end
  local m = JX.message(e)
  if m == nil then error(e, 0) end
  return out, m
end
`

func newKarmadaLikeState() *lua.LState {
	return luaapi.NewState(luaapi.SandboxOptions{
		Modules: luaapi.Loaders(kube.Module),
	})
}

// portableRuntimeProto is PortableRuntime compiled once, as a chunk that
// returns J and JX: compiling its ~900 lines for every case would
// dominate the fuzzers. Units are compiled as chunks that take J and JX.
var portableRuntimeProto = sync.OnceValues(func() (*lua.FunctionProto, error) {
	return luaapi.Compile("jqlua-portable-runtime", PortableRuntime+"return J, JX\n")
})

// loadPortable loads the chunk of a portable unit in a fresh Karmada-like
// state. Close the state when done.
func loadPortable(ctx context.Context, u *Unit) (*portableState, error) {
	rt, err := portableRuntimeProto()
	if err != nil {
		return nil, fmt.Errorf("the portable runtime does not compile: %w", err)
	}
	return loadPortableOn(ctx, u, rt)
}

// shakenRoots are what the harness itself uses of the runtime: Go builds
// input values with J.array, J.object and J.null, and reads outputs with
// JX.kind.
const shakenRoots = "\nJ.array J.object J.null JX.kind\n"

// loadShaken is loadPortable on the runtime ShakePortable keeps for the
// unit, as an export's chunk carries it: for a compact unit, Karmada's,
// ShakePortableEager's.
func loadShaken(ctx context.Context, u *Unit) (*portableState, error) {
	shake := ShakePortable
	if u.compact {
		shake = ShakePortableEager
	}
	rt, err := luaapi.Compile("jqlua-portable-shaken", shake(PortableNames+u.Lua()+portableRunner+shakenRoots)+"return J, JX\n")
	if err != nil {
		return nil, fmt.Errorf("the shaken runtime does not compile: %w", err)
	}
	return loadPortableOn(ctx, u, rt)
}

// hangGuard bounds a harness call: it catches a hang, and is long enough
// that a loaded machine running the race detector does not reach it (a
// call that does counts as timed out, and its case as skipped).
const hangGuard = 10 * time.Second

func loadPortableOn(ctx context.Context, u *Unit, rt *lua.FunctionProto) (*portableState, error) {
	L := newKarmadaLikeState()
	proto, err := luaapi.Compile("jqlua-portable", "local J, JX = ...\n"+PortableNames+u.Lua()+portableRunner)
	if err != nil {
		L.Close()
		return nil, fmt.Errorf("portable chunk does not compile: %w", err)
	}
	env := kube.Env(L)
	jj, err := luaapi.CallProtected(ctx, L, hangGuard, luaapi.Instantiate(L, rt, env), 2)
	if err != nil {
		L.Close()
		return nil, fmt.Errorf("the portable runtime does not run: %w", err)
	}
	res, err := luaapi.CallProtected(ctx, L, hangGuard, luaapi.Instantiate(L, proto, env), 4, jj...)
	if err != nil {
		L.Close()
		return nil, fmt.Errorf("portable chunk does not run: %w", err)
	}
	return &portableState{L: L, J: res[0].(*lua.LTable), JX: res[1].(*lua.LTable), Q: res[2].(*lua.LTable), run: res[3]}, nil
}

// call calls a J or JX function from Go.
func (p *portableState) call(fn lua.LValue, args ...lua.LValue) lua.LValue {
	if err := p.L.CallByParam(lua.P{Fn: fn, NRet: 1, Protect: true}, args...); err != nil {
		panic(err)
	}
	v := p.L.Get(-1)
	p.L.Pop(1)
	return v
}

// value builds a decoded JSON value the way the runtime's own values are:
// J.null, and tables made by J.array and J.object.
func (p *portableState) value(v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return p.J.RawGetString("null")
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case []any:
		tb := p.call(p.J.RawGetString("array")).(*lua.LTable)
		for i, e := range x {
			tb.RawSetInt(i+1, p.value(e))
		}
		return tb
	case map[string]any:
		tb := p.call(p.J.RawGetString("object")).(*lua.LTable)
		for k, e := range x {
			tb.RawSetString(k, p.value(e))
		}
		return tb
	}
	f, ok := luaapi.GoNumber(v)
	if !ok {
		panic(fmt.Sprintf("not JSON: %T", v))
	}
	return lua.LNumber(f)
}

// goValue reads a runtime value back as gojq would hold it.
func (p *portableState) goValue(lv lua.LValue) (any, error) {
	switch x := lv.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		f := float64(x)
		if intLike(f) {
			return int(f), nil
		}
		return f, nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		switch kind := p.call(p.JX.RawGetString("kind"), x); kind {
		case lua.LString("null"):
			return nil, nil
		case lua.LString("array"):
			out := make([]any, x.Len())
			for i := range out {
				e, err := p.goValue(x.RawGetInt(i + 1))
				if err != nil {
					return nil, err
				}
				out[i] = e
			}
			return out, nil
		case lua.LString("object"):
			out := map[string]any{}
			var err error
			x.ForEach(func(k, e lua.LValue) {
				s, ok := k.(lua.LString)
				if !ok {
					err = fmt.Errorf("object key %v", k)
					return
				}
				var g any
				if g, err = p.goValue(e); err == nil {
					out[string(s)] = g
				}
			})
			return out, err
		default:
			return nil, fmt.Errorf("kind %v", kind)
		}
	}
	return nil, fmt.Errorf("not a JSON value: %s", lv.Type())
}

// outcome runs accessor acc on input under Karmada's call limits.
func (p *portableState) outcome(ctx context.Context, acc, input lua.LValue, one bool) outcome {
	res, err := luaapi.CallProtected(ctx, p.L, hangGuard, p.run, 2, acc, input, lua.LBool(one))
	var o outcome
	if err != nil {
		o.timedOut = ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)
		o.err = "LUA ERROR: " + err.Error()
		return o
	}
	out := res[0].(*lua.LTable)
	for i := 1; i <= out.Len(); i++ {
		v, err := p.goValue(out.RawGetInt(i))
		if err != nil {
			o.outputs = append(o.outputs, "<"+err.Error()+">")
			continue
		}
		o.outputs = append(o.outputs, canonicalGo(v))
	}
	if msg, ok := res[1].(lua.LString); ok {
		o.err = string(msg)
	}
	return o
}

// portableRuns counts the evaluations differPortable compared.
var portableRuns atomic.Int64

// faithful reports whether Karmada's decoding of v loses nothing: no null
// member or element, and no empty array or object (a plain table cannot
// tell [] from {}).
func faithful(v any) bool {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return false
		}
		for _, e := range x {
			if e == nil || !faithful(e) {
				return false
			}
		}
	case map[string]any:
		if len(x) == 0 {
			return false
		}
		for _, e := range x {
			if e == nil || !faithful(e) {
				return false
			}
		}
	}
	return true
}

// differPortable runs expr on the portable runtime, on the input built as
// the runtime's values and, when that decoding is faithful, as Karmada
// decodes it, and compares with the reference; inexact tells a
// disagreement that comes from Lua's float numbers (skipped).
func differPortable(ctx context.Context, expr string, raw any, inputJSON []byte, want outcome, inexact func(outcome) bool) (string, bool, error) {
	u := NewPortableUnit()
	if _, err := u.Add(expr); err != nil {
		var np *NotPortableError
		if errors.As(err, &np) {
			return "", false, nil
		}
		return "", false, err
	}
	if m := literalCondition.FindString(u.Lua()); m != "" {
		return fmt.Sprintf("%s: literal condition %q (gopher-lua issue #540)\n%s", expr, m, u.Lua()), false, nil
	}
	p, err := loadPortable(ctx, u)
	if ctx.Err() != nil { // out of time, as a timed-out run is: skipped
		return "", true, nil
	}
	if err != nil {
		return fmt.Sprintf("%s: %v\n%s", expr, err, u.Lua()), false, nil
	}
	defer p.L.Close()
	acc := p.Q.RawGetInt(1)
	inputs := []struct {
		name  string
		value lua.LValue
	}{{"runtime values", p.value(raw)}}
	if raw != nil && faithful(raw) { // Karmada never hands a script a null object
		kv, err := kube.Value(p.L, raw)
		if err != nil {
			return "", false, err
		}
		inputs = append(inputs, struct {
			name  string
			value lua.LValue
		}{"Karmada's decoding", kv})
	}
	modes := []bool{false}
	if u.One("Q[1]") {
		modes = append(modes, true)
	}
	for _, in := range inputs {
		for _, one := range modes {
			got := p.outcome(ctx, acc, in.value, one)
			if got.timedOut {
				return "", true, nil
			}
			portableRuns.Add(1)
			if !got.equal(want) {
				if inexact(got) {
					return "", true, nil
				}
				return fmt.Sprintf("%s on %s (portable, %s, one output: %v):\n  gojq:     %v\n  portable: %v\n%s",
					expr, inputJSON, in.name, one, want, got, u.Lua()), false, nil
			}
		}
	}
	// The same on the runtime an export carries, only what the unit uses,
	// with the field reads of both forms: inline (Argo CD's export) and as
	// calls (Karmada's, a compact unit), on Karmada's decoding too.
	compact := NewCompactPortableUnit()
	if _, err := compact.Add(expr); err != nil {
		return "", false, err
	}
	for _, su := range []*Unit{u, compact} {
		if msg, skipped, err := differShaken(ctx, su, expr, raw, inputJSON, want, inexact); msg != "" || skipped || err != nil {
			return msg, skipped, err
		}
	}
	return "", false, nil
}

// exportOutcome is gojq's outcome as a script on the shaken runtime has
// it (ExportMessage): its error, and its outputs that are strings, such as
// an error message try ... catch . outputs.
func exportOutcome(o outcome) outcome {
	o.outputs = slices.Clone(o.outputs)
	for i, out := range o.outputs {
		var s string
		if strings.HasPrefix(out, `"`) && json.Unmarshal([]byte(out), &s) == nil {
			o.outputs[i] = canonicalGo(ExportMessage(s))
		}
	}
	o.err = ExportMessage(o.err)
	return o
}

// differShaken is differPortable's run of the unit u (of expr alone) on
// the shaken runtime, which words a refused value by its kind alone
// (ExportMessage).
func differShaken(ctx context.Context, u *Unit, expr string, raw any, inputJSON []byte, want outcome, inexact func(outcome) bool) (string, bool, error) {
	want = exportOutcome(want)
	sp, err := loadShaken(ctx, u)
	if ctx.Err() != nil {
		return "", true, nil
	}
	if err != nil {
		return fmt.Sprintf("%s: %v\n%s", expr, err, u.Lua()), false, nil
	}
	defer sp.L.Close()
	inputs := []lua.LValue{sp.value(raw)}
	if raw != nil && faithful(raw) {
		kv, err := kube.Value(sp.L, raw)
		if err != nil {
			return "", false, err
		}
		inputs = append(inputs, kv)
	}
	for _, in := range inputs {
		got := sp.outcome(ctx, sp.Q.RawGetInt(1), in, u.One("Q[1]"))
		if !got.timedOut && !got.equal(want) && !inexact(got) {
			return fmt.Sprintf("%s on %s (portable, shaken runtime, compact %v):\n  gojq:     %v\n  portable: %v\n%s",
				expr, inputJSON, u.compact, want, got, u.Lua()), false, nil
		}
	}
	return "", false, nil
}
