package interpreter

import (
	"context"
	"fmt"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/luaapi"
)

// The generated Lua accessors as an evaluator of the Go algorithms, for
// the tests that compare them with the hooks' evaluator: the hooks no
// longer evaluate through them (eval_direct.go).

// runGo runs a Go algorithm on the Lua accessors of a pooled state.
func (p *Program) runGo(ctx context.Context, h Hook, f func(ctx context.Context, ev evaluator) (any, error)) (any, error) {
	var res any
	err := p.withState(ctx, h, func(ctx context.Context, sd *stateData) error {
		var err error
		res, err = f(ctx, luaEvaluator{sd})
		return err
	})
	return res, err
}

// luaEvaluator runs jq programs through the generated chunk's accessors
// on this state, so the Go-side algorithms evaluate exactly the Lua the
// Karta compiled to.
type luaEvaluator struct{ sd *stateData }

func (e luaEvaluator) all(_ context.Context, p *jqProgram, input any) ([]any, error) {
	slot, ok := e.sd.p.gen.slots[p.expr]
	if !ok {
		return nil, fmt.Errorf("no accessor for jq %q (a karta bug)", p.expr)
	}
	L := e.sd.L
	outs, err := jqlua.Eval(L, e.sd.q.RawGetInt(slot), luaapi.ToLuaView(L, input))
	if err != nil {
		return nil, &JQError{Expr: p.expr, Err: err}
	}
	vals := make([]any, len(outs))
	for i, o := range outs {
		if vals[i], err = luaapi.FromLua(L, o); err != nil {
			return nil, &JQError{Expr: p.expr, Err: err}
		}
	}
	return vals, nil
}
