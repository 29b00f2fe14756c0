package interpreter

import (
	"context"
	"errors"
	"fmt"

	"github.com/kartalua/karta/internal/jqlua"

	"github.com/kartalua/karta/internal/jqdirect"
	"github.com/kartalua/karta/internal/jqvars"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// maxJQOutputs is the most outputs one jq evaluation may produce; one more
// is an error. It is jqlua's limit: every path has the same.
const maxJQOutputs = jqlua.OutputLimit

// jqProgram is one jq expression of the engine: its gojq program, compiled
// once, and its direct form when it has one (the hooks' evaluator picks,
// eval_direct.go).
type jqProgram struct {
	expr string
	// code is the gojq program: for a checked expression, compiled by the
	// first evaluation that needs it (jqexpr.Analysis.Code).
	code func() *gojq.Code
	// direct is the expression compiled for direct evaluation (direct.go),
	// nil when it is outside that subset.
	direct *jqdirect.Program
}

// all returns every output of the program on v, or the first error. It
// honours ctx and the output limit. A program compiled with variables
// runs with vars, or, when none are given, the values the call's context
// carries (jqvars: the Karta's resolved references).
func (p *jqProgram) all(ctx context.Context, v any, vars ...any) ([]any, error) {
	code := p.code()
	if code == nil { // jqexpr.Check vouched for it; a karta bug
		return nil, &JQError{Expr: p.expr, Err: errors.New("the expression did not compile")}
	}
	if len(vars) == 0 {
		vars = jqvars.Fit(ctx, code.NumVariables())
	} else {
		vars = jqvars.Pad(vars, code.NumVariables()) // the call's values, to the program's
	}
	iter := code.RunWithContext(ctx, v, vars...)
	var out []any
	for {
		x, ok := iter.Next()
		if !ok {
			return out, nil
		}
		if err, isErr := x.(error); isErr {
			if _, halt := err.(*gojq.HaltError); halt {
				return out, nil
			}
			return nil, &JQError{Expr: p.expr, Err: err}
		}
		if len(out) == maxJQOutputs {
			return nil, &JQError{Expr: p.expr, Err: errors.New(jqlua.TooManyOutputs)}
		}
		out = append(out, x)
	}
}

// JQError is a jq evaluation error, with the expression.
type JQError struct {
	Expr string
	Err  error
}

func (e *JQError) Error() string { return fmt.Sprintf("jq %s: %v", e.Expr, e.Err) }
func (e *JQError) Unwrap() error { return e.Err }
