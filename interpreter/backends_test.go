package interpreter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strings"
	"sync"
	"time"

	upstream "github.com/itchyny/gojq"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/jqdirect"
	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karmada/kube"
	"github.com/kartalua/karta/luaapi"
)

// The back ends of the jq core (docs/jq.md), each run on one (expression,
// input) pair and reduced to an outcome: outputs as canonical JSON, in
// order, then the error message. FuzzBackends compares them.

type backendOutcome struct {
	outputs []string
	err     string
	// skip marks an outcome that cannot be compared: a deadline, or
	// integers beyond ±2^53 (exact in gojq, rounded in Lua).
	skip bool
}

func (o backendOutcome) String() string {
	s := "[" + strings.Join(o.outputs, ", ") + "]"
	if o.err != "" {
		s += " error: " + o.err
	}
	return s
}

func (o backendOutcome) equal(p backendOutcome) bool {
	return o.err == p.err && strings.Join(o.outputs, "\x00") == strings.Join(p.outputs, "\x00") && len(o.outputs) == len(p.outputs)
}

// decodeJSON decodes one JSON value with numbers as json.Number, as a
// Kubernetes decoder hands objects to karta.
func decodeJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
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

// gojqForm is the input as gojq holds it when karta calls it: ints for
// int-like numbers, float64 for the rest.
func gojqForm(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		if f == math.Trunc(f) && math.Abs(f) <= 1<<53 && !(f == 0 && math.Signbit(f)) {
			return int(f)
		}
		return f
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = gojqForm(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = gojqForm(e)
		}
		return a
	}
	return v
}

// canonicalJSON renders an output with its numbers in gojq's form, so
// that 2, int64(2) and 2.0 agree and -0 stays -0.
func canonicalJSON(v any) string {
	b, err := upstream.Marshal(canonicalNumbers(v))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func canonicalNumbers(v any) any {
	switch x := v.(type) {
	case nil, bool, string, *big.Int:
		return v
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = canonicalNumbers(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = canonicalNumbers(e)
		}
		return a
	}
	f, ok := luaapi.GoNumber(v)
	if !ok {
		return fmt.Sprintf("<%T>", v)
	}
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 && !(f == 0 && math.Signbit(f)) {
		return int(f)
	}
	return f
}

func hasBigNumber(v any) bool {
	switch x := v.(type) {
	case *big.Int:
		return true
	case int:
		return x > 1<<53 || x < -(1<<53)
	case []any:
		for _, e := range x {
			if hasBigNumber(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasBigNumber(e) {
				return true
			}
		}
	}
	return false
}

// iterOutcome drains a gojq iterator under the output limit karta applies.
func iterOutcome(ctx context.Context, next func() (any, bool)) backendOutcome {
	var o backendOutcome
	for {
		v, ok := next()
		if !ok {
			return o
		}
		if err, ok := v.(error); ok {
			o.err = err.Error()
			o.skip = ctx.Err() != nil
			return o
		}
		if len(o.outputs) == jqlua.OutputLimit {
			o.err = "too many outputs (limit 10000)"
			return o
		}
		o.skip = o.skip || hasBigNumber(v)
		o.outputs = append(o.outputs, canonicalJSON(v))
	}
}

// runOracle runs upstream gojq, the reference.
func runOracle(ctx context.Context, expr string, in any) (backendOutcome, error) {
	q, err := upstream.Parse(expr)
	if err != nil {
		return backendOutcome{}, err
	}
	code, err := upstream.Compile(q)
	if err != nil {
		return backendOutcome{}, err
	}
	return iterOutcome(ctx, code.RunWithContext(ctx, gojqForm(in)).Next), nil
}

// runFork runs the metered fork karta embeds.
func runFork(ctx context.Context, expr string, in any) (backendOutcome, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return backendOutcome{}, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return backendOutcome{}, err
	}
	return iterOutcome(ctx, code.RunWithContext(ctx, gojqForm(in)).Next), nil
}

// runDirect runs the direct evaluator; ran is false outside its subset or
// when it declines (it never reports errors: gojq does).
func runDirect(expr string, in any) (o backendOutcome, ran bool) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return o, false
	}
	d := jqdirect.Compile(q)
	if d == nil {
		return o, false
	}
	var s jqdirect.Scratch
	defer s.Release()
	outs, ok := d.Run(in, &s)
	if !ok {
		return o, false
	}
	for _, v := range outs {
		o.outputs = append(o.outputs, canonicalJSON(v))
	}
	return o, true
}

// inexactInLua reports whether got, a Lua back end's outcome that differs
// from the oracle's, is what gojq gives on floats: integers beyond ±2^53,
// exact in gojq, rounded in Lua (docs/jq.md), not a disagreement.
func inexactInLua(ctx context.Context, expr string, in any, got backendOutcome) bool {
	alt, err := runOracle(ctx, expr, testobj.Floats(in))
	return err == nil && !alt.skip && got.equal(alt)
}

// portableRunner calls an accessor inside Karmada-like Lua and returns its
// outputs and a jq error's message; other errors propagate.
const portableRunner = `
return J, JX, Q, function(acc, v)
  local out = {}
  local ok, e = pcall(acc, v, out)
  if ok then return out, nil end
  local m = JX.message(e)
  if m == nil then error(e, 0) end
  return out, m
end
`

// portableRuntimeProto is jqlua.PortableRuntime compiled once, as a chunk
// returning J and JX (compiling it for every pair would dominate the
// fuzzer; the export tests run it inlined, as exported).
var portableRuntimeProto = sync.OnceValues(func() (*lua.FunctionProto, error) {
	return luaapi.Compile("backends-portable-runtime", jqlua.PortableRuntime+"return J, JX\n")
})

// runPortable runs the expression as the Karmada export does: a portable
// unit's accessor on jqlua.PortableRuntime, compiled and called as
// karmada.Interpreter runs a customization's script (luaapi.Compile, a
// kube.Env environment, CallProtected in a sandbox with only the kube
// module). The input is built from the runtime's own values, so nulls and
// empty arrays survive. ran is false when the expression does not export.
func runPortable(ctx context.Context, expr string, in any) (o backendOutcome, ran bool, err error) {
	u := jqlua.NewPortableUnit()
	if _, err := u.Add(expr); err != nil {
		var np *jqlua.NotPortableError
		if errors.As(err, &np) {
			return o, false, nil
		}
		return o, false, err
	}
	L := luaapi.NewState(luaapi.SandboxOptions{
		Modules: luaapi.Loaders(kube.Module),
	})
	defer L.Close()
	rt, err := portableRuntimeProto()
	if err != nil {
		return o, false, fmt.Errorf("the portable runtime does not compile: %w", err)
	}
	proto, err := luaapi.Compile("backends-portable", "local J, JX = ...\nlocal NULL = J.null\nlocal Q = {}\n"+u.Lua()+portableRunner)
	if err != nil {
		return o, false, fmt.Errorf("portable chunk does not compile: %w", err)
	}
	env := kube.Env(L)
	jj, err := luaapi.CallProtected(ctx, L, 2*time.Second, luaapi.Instantiate(L, rt, env), 2)
	if err != nil {
		return o, false, fmt.Errorf("the portable runtime does not run: %w", err)
	}
	res, err := luaapi.CallProtected(ctx, L, 2*time.Second, luaapi.Instantiate(L, proto, env), 4, jj...)
	if err != nil {
		return o, false, fmt.Errorf("portable chunk does not run: %w", err)
	}
	p := portable{L: L, J: res[0].(*lua.LTable), JX: res[1].(*lua.LTable)}
	acc := res[2].(*lua.LTable).RawGetInt(1)
	out, err := luaapi.CallProtected(ctx, L, 2*time.Second, res[3], 2, acc, p.value(in))
	if err != nil {
		o.skip = ctx.Err() != nil
		o.err = "LUA ERROR: " + err.Error()
		return o, true, nil
	}
	outs := out[0].(*lua.LTable)
	for i := 1; i <= outs.Len(); i++ {
		v, err := p.goValue(outs.RawGetInt(i))
		if err != nil {
			o.outputs = append(o.outputs, "<"+err.Error()+">")
			continue
		}
		o.outputs = append(o.outputs, canonicalJSON(v))
	}
	if msg, ok := out[1].(lua.LString); ok {
		o.err = string(msg)
	}
	return o, true, nil
}

// portable converts values to and from the portable runtime of one state.
type portable struct {
	L     *lua.LState
	J, JX *lua.LTable
}

func (p portable) call(fn lua.LValue, args ...lua.LValue) lua.LValue {
	if err := p.L.CallByParam(lua.P{Fn: fn, NRet: 1, Protect: true}, args...); err != nil {
		panic(err)
	}
	v := p.L.Get(-1)
	p.L.Pop(1)
	return v
}

// value builds v from J.null and tables made by J.array and J.object.
func (p portable) value(v any) lua.LValue {
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
	f, _ := luaapi.GoNumber(v)
	return lua.LNumber(f)
}

// goValue reads a runtime value back, its kind told by JX.kind.
func (p portable) goValue(lv lua.LValue) (any, error) {
	switch x := lv.(type) {
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		return float64(x), nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		switch p.call(p.JX.RawGetString("kind"), x) {
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
		default:
			out := map[string]any{}
			var err error
			x.ForEach(func(k, e lua.LValue) {
				if err == nil {
					out[k.String()], err = p.goValue(e)
				}
			})
			return out, err
		}
	}
	return nil, fmt.Errorf("not a JSON value: %s", lv.Type())
}

// compactJSON is text as one line, for messages.
func compactJSON(text string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(text)) != nil {
		return text
	}
	return b.String()
}
