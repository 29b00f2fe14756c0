package interpreter

import "context"

// directOnly runs f on a call's evaluator and reports whether the call
// succeeded with every evaluation on the direct back end (none went to
// its exact back end): what the tests that hold the built-ins on the fast
// path ask.
func directOnly[T any](ctx context.Context, p *Program, f func(ev evaluator) (T, error)) (T, bool) {
	ev := p.newEvaluator(ctx, nil)
	res, err := f(ev)
	declined := ev.declined
	err = ev.finish(err)
	return res, err == nil && !declined
}

// statusOnDirect is InterpretStatus's plan run by directOnly.
func statusOnDirect(ctx context.Context, p *Program, obj map[string]any) (*StatusResult, bool) {
	return directOnly(ctx, p, func(ev evaluator) (*StatusResult, error) {
		return p.status.interpretStatus(ctx, ev.(*directEvaluator), obj)
	})
}
