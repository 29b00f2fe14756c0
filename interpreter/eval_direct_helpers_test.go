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

// inScriptCall runs f on the evaluator a script's karta.generated call
// runs the Go algorithms on: inside a pooled state's protected call,
// metered by it, its references those the call bound (absent for an
// adapter's own entry).
func (p *Program) inScriptCall(ctx context.Context, h Hook, f func(ctx context.Context, ev evaluator) (any, error)) (any, error) {
	var res any
	err := p.withState(ctx, h, func(ctx context.Context, sd *stateData) error {
		var err error
		res, err = runAlgorithm(sd.L, sd, func(ev evaluator) (any, error) { return f(ctx, ev) })
		return err
	})
	return res, err
}
