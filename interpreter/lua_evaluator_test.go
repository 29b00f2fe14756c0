package interpreter

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/karmada/kube"
	"github.com/kartalua/karta/luaapi"
)

// The tests' Lua leg: a Karta's expressions translated onto the portable
// runtime (jqlua.PortableRuntime, the Lua the exports ship), run in a
// sandbox configured as Karmada's, as an evaluator of the Go algorithms.
// The hooks never evaluate through it (eval_direct.go); the tests that
// compare the back ends do.

// luaEvaluator evaluates each expression it was built with on its
// portable accessor; an expression outside the translated subset, which
// no export can carry, is evaluated on gojq, as a generated accessor's
// gojq fallback was.
type luaEvaluator struct {
	p     portable
	q     *lua.LTable
	run   lua.LValue
	slots map[string]int
}

// newLuaEvaluator translates exprs into one portable chunk and loads it
// with the runtime in a fresh sandboxed state, closed with the test.
func newLuaEvaluator(t testing.TB, exprs []string) *luaEvaluator {
	t.Helper()
	u := jqlua.NewPortableUnit()
	slots := map[string]int{}
	for _, e := range exprs {
		ref, err := u.Add(e)
		var np *jqlua.NotPortableError
		if errors.As(err, &np) {
			continue
		}
		require.NoError(t, err, e)
		slots[e] = jqlua.Slot(ref)
	}
	L := luaapi.NewState(luaapi.SandboxOptions{Modules: luaapi.Loaders(kube.Module)})
	t.Cleanup(L.Close)
	rt, err := portableRuntimeProto()
	require.NoError(t, err, "the portable runtime compiles")
	proto, err := luaapi.Compile("lua-leg", "local J, JX = ...\nlocal NULL = J.null\nlocal type = type\nlocal Q = {}\n"+u.Lua()+portableRunner)
	require.NoError(t, err, "the portable chunk compiles")
	env := kube.Env(L)
	ctx := context.Background()
	jj, err := luaapi.CallProtected(ctx, L, time.Minute, luaapi.Instantiate(L, rt, env), 2)
	require.NoError(t, err)
	res, err := luaapi.CallProtected(ctx, L, time.Minute, luaapi.Instantiate(L, proto, env), 4, jj...)
	require.NoError(t, err)
	return &luaEvaluator{
		p:     portable{L: L, J: res[0].(*lua.LTable), JX: res[1].(*lua.LTable)},
		q:     res[2].(*lua.LTable),
		run:   res[3],
		slots: slots,
	}
}

// translated reports whether expr runs as Lua here.
func (e *luaEvaluator) translated(expr string) bool { _, ok := e.slots[expr]; return ok }

func (e *luaEvaluator) all(ctx context.Context, p *jqProgram, input any) ([]any, error) {
	slot, ok := e.slots[p.expr]
	if !ok {
		return gojqEvaluator{}.all(ctx, p, input)
	}
	out, err := luaapi.CallProtected(ctx, e.p.L, time.Minute, e.run, 2, e.q.RawGetInt(slot), e.p.value(input))
	if err != nil {
		return nil, fmt.Errorf("jq %s: the portable accessor failed: %w", p.expr, err)
	}
	outs := out[0].(*lua.LTable)
	vals := make([]any, outs.Len())
	for i := range vals {
		if vals[i], err = e.p.goValue(outs.RawGetInt(i + 1)); err != nil {
			return nil, &JQError{Expr: p.expr, Err: err}
		}
	}
	if msg, ok := out[1].(lua.LString); ok {
		return nil, &JQError{Expr: p.expr, Err: errors.New(string(msg))}
	}
	return vals, nil
}
