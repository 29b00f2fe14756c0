package interpreter

import (
	"context"
	"github.com/kartalua/karta/internal/jqvalue"
)

// evaluator runs a compiled jq program on a value. The engine's Go-side
// algorithms (instances, pod placement, gangs) call their jq paths through
// it, so that the same algorithm runs on the call's evaluator inside a
// hook (each expression on its chosen back end) and on gojq or the
// exports' portable Lua in tests — they must agree: which one runs is not
// observable.
type evaluator interface {
	all(ctx context.Context, p *jqProgram, input any) ([]any, error)
}

// gojqEvaluator evaluates with the gojq program itself.
type gojqEvaluator struct{}

func (gojqEvaluator) all(ctx context.Context, p *jqProgram, input any) ([]any, error) {
	return p.all(ctx, jqvalue.Input(input))
}

// jqValueEvaluator evaluates with gojq on input that is already a jq value
// (the caller applied jqInput once): jqInput on every evaluation walked
// the whole object again each time.
type jqValueEvaluator struct{}

func (jqValueEvaluator) all(ctx context.Context, p *jqProgram, input any) ([]any, error) {
	return p.all(ctx, input)
}
