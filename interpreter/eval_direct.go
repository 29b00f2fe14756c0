package interpreter

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/kartalua/karta/internal/jqdirect"
	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/luaapi"
)

// The evaluator of the Go algorithms (pods, gangs, revisions, replicas):
// each expression runs on the back end chosen for it at compile time —
// its direct form (jqdirect, on the object in place) when it has one,
// else its gojq program — and a direct evaluation that declines at run
// time (a type error, a value that could grow, its step budget) is
// evaluated again, alone, on the gojq program: the same expression on the
// same input. The call goes on with that answer; nothing else is rerun.
//
// gojq is the exact back end because it is the oracle: its outputs and
// errors are what every other back end is tested to give
// (FuzzBackends), so an expression's answer does not depend on which back
// end gave it. It runs under the call's limits: a hook called from Go
// meters it through a luaapi.GoCall (the call's instruction budget,
// memory guard and deadline, started on first need), one called by a
// script through karta.generated meters it through the script's own call
// context, as the script's own jq() is metered.

// directEvaluator evaluates each expression on its chosen back end; see
// above.
type directEvaluator struct {
	p *Program
	// ctx is the hook's context. meter is the context exact evaluations
	// are charged to: inside a Lua call its call context, else the
	// GoCall's, started on first need (call).
	ctx   context.Context
	meter context.Context
	call  *luaapi.GoCall
	// limit is the limit that ended the call: every evaluation after it
	// fails with it, and the call does (finish), whatever the algorithm
	// made of the error (a pod's jq error only unmatches the pod).
	limit error
	// declined records that some evaluation left the direct back end (for
	// the tests that hold the built-ins on it). exactOnly evaluates every
	// expression on its gojq program (Program.noDirect: the tests that
	// compare the back ends).
	declined, exactOnly bool
	s                   jqdirect.Scratch
	// The call's deadline on the direct back end, the Program's timeout:
	// the clock is read every clockEvery evaluations, from the first such
	// reading, so that a short call never reads it.
	timeout time.Duration
	evals   int
	start   time.Time
	// charged is work charged before the GoCall started (chargeRevisions).
	chargedSteps, chargedBytes int64
	// jq holds the jq values (jqvalue.Input) of the last inputs an exact
	// evaluation read: the object and a pod alternate in GetGangGroups.
	jq [2]struct{ of, v any }
}

const clockEvery = 32

// directEvaluators recycles evaluators (the arena is dropped first: results
// alias it; the Scratch's shared-prefix table is kept, see Scratch.Reuse).
var directEvaluators = sync.Pool{New: func() any { return &directEvaluator{} }}

// newEvaluator returns an evaluator for one call of p's Go algorithms.
// inLua is the context of the Lua call that runs them (a script calling
// karta.generated), nil for a hook called from Go. Its evaluations read
// the references' values the call bound.
func (p *Program) newEvaluator(ctx context.Context, inLua context.Context) *directEvaluator {
	e := directEvaluators.Get().(*directEvaluator)
	s := e.s // Reuse'd by finish: no arena, the shared-prefix table's room
	// A hook's evaluations give a few outputs each: 8 slots to begin.
	s.Size, s.Vars, s.Share = 8, p.callVars(ctx), true
	*e = directEvaluator{p: p, ctx: ctx, meter: inLua, timeout: p.limits.Timeout, exactOnly: p.noDirect, s: s}
	return e
}

func (e *directEvaluator) all(ctx context.Context, p *jqProgram, input any) ([]any, error) {
	if e.limit != nil {
		return nil, e.limit
	}
	if !e.live(ctx) {
		return nil, e.limit
	}
	if p.direct != nil && !e.exactOnly {
		steps0, bytes0 := e.s.Spent()
		if outs, ok := p.direct.Run(input, &e.s); ok {
			return outs, nil
		}
		e.declined = true
		// The declined run's work is the call's: charged before the
		// exact run (a hostile expression that spent the direct budgets
		// must not then have the whole memory guard).
		steps, bytes := e.s.Spent()
		if err := e.charge(int64(steps-steps0), int64(bytes-bytes0)); err != nil {
			return nil, err
		}
	}
	e.declined = true
	return e.exact(p, input)
}

// exact evaluates p on its gojq program, metered (see above). Outputs
// are converted to client-go's number types, as the object's own values
// are.
func (e *directEvaluator) exact(p *jqProgram, input any) ([]any, error) {
	outs, err := e.gojq(p, input)
	for i, o := range outs {
		if err := e.chargeValue(o); err != nil {
			return nil, err
		}
		outs[i] = jqvalue.Output(o)
	}
	return outs, err
}

// gojq evaluates p on its gojq program, metered; its outputs are gojq's
// (path() locations hold ints).
func (e *directEvaluator) gojq(p *jqProgram, input any) ([]any, error) {
	meter := e.meterContext()
	if e.limit != nil {
		return nil, e.limit
	}
	in := e.jqInput(input)
	if e.limit != nil {
		return nil, e.limit
	}
	outs, err := p.all(meter, in, e.s.Vars...)
	if lerr := e.stopped(); lerr != nil {
		return nil, lerr
	}
	return outs, err
}

// tostring is jq's tostring of v, under the call's limits (a composite
// may share subtrees and print as many copies).
func (e *directEvaluator) tostring(v any) (string, error) {
	outs, err := e.exact(tostringProgram(), v)
	if je, ok := err.(*JQError); ok {
		err = je.Err
	}
	if err != nil {
		return "", err
	}
	s, _ := outs[0].(string)
	return s, nil
}

// tostringProgram is jq's `tostring`.
var tostringProgram = sync.OnceValue(func() *jqProgram {
	q, err := gojq.Parse("tostring")
	if err != nil {
		panic(err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		panic(err)
	}
	return &jqProgram{expr: "tostring", code: func() *gojq.Code { return code }}
})

// meterContext is the context exact evaluations are charged to, the
// GoCall's started here on first need.
func (e *directEvaluator) meterContext() context.Context {
	if e.meter != nil {
		return e.meter
	}
	start := e.start
	if start.IsZero() {
		start = time.Now()
	}
	e.call = e.p.limits.StartGo(e.ctx, start)
	e.meter = e.call.Context()
	if e.chargedSteps > 0 || e.chargedBytes > 0 {
		if err := e.call.Charge(e.chargedSteps, e.chargedBytes); err != nil {
			e.limit = err
		}
	}
	return e.meter
}

// stopped reports the limit that ended the call, if one did, and keeps it.
func (e *directEvaluator) stopped() error {
	if e.limit != nil {
		return e.limit
	}
	switch {
	case e.call != nil:
		e.limit = e.call.Err()
	case e.meter != nil:
		// A Lua call's context: its error is raised as it is, and the
		// protected call reports the limit it stands for.
		e.limit = e.meter.Err()
	}
	return e.limit
}

// charge charges work done in Go (revisions, a declined direct run) to the call:
// to its meter when it has one, else kept for the GoCall, unless it
// passes a budget on its own.
func (e *directEvaluator) charge(steps, bytes int64) error {
	if e.limit != nil {
		return e.limit
	}
	l := e.p.limits
	over := (l.MaxInstructions > 0 && e.chargedSteps+steps > l.MaxInstructions) ||
		(l.MaxMemory > 0 && e.chargedBytes+bytes > l.MaxMemory)
	if e.meter == nil && !over {
		e.chargedSteps += steps
		e.chargedBytes += bytes
		return nil
	}
	e.meterContext()
	if e.limit != nil {
		return e.limit
	}
	if e.call != nil {
		e.limit = e.call.Charge(steps, bytes)
		return e.limit
	}
	m, ok := e.meter.(gojq.Meter)
	if !ok {
		return nil
	}
	if err := m.ChargeSteps(steps); err != nil {
		e.limit = err
		return err
	}
	if err := m.ChargeMemory(bytes); err != nil {
		e.limit = err
	}
	return e.limit
}

// jqInput is input as gojq reads it, converted once per input.
func (e *directEvaluator) jqInput(input any) any {
	switch input.(type) {
	case map[string]any, []any:
	default:
		return jqvalue.Input(input)
	}
	for i := range e.jq {
		if sameContainer(e.jq[i].of, input) {
			return e.jq[i].v
		}
	}
	if e.chargeValue(input) != nil {
		return nil // stopped: the evaluation fails with the limit
	}
	v := jqvalue.Input(input)
	e.jq[1] = e.jq[0]
	e.jq[0].of, e.jq[0].v = input, v
	return v
}

// Charged for converting a value between the object's and gojq's forms
// (jqvalue), which walks it as jq sees it — a value that shares subtrees
// once per copy — and copies the containers on the way: a step a node and
// a container's estimated size, as gojq's meter counts them, so that a
// hostile value's conversion ends on the call's limits as a Lua call's
// conversions do.
const (
	valueNodeBytes = 16 // an interface value in a slice, a map entry's value
	containerBytes = 48 // a map or slice header
	chargeEvery    = 256
)

// chargeValue charges the conversion of v to the call (see above) and
// reports the limit that ends it, if one does.
func (e *directEvaluator) chargeValue(v any) error {
	m, ok := e.meterContext().(gojq.Meter)
	if !ok || e.limit != nil {
		return e.limit
	}
	var steps, bytes int64
	flush := func() bool {
		_ = m.ChargeSteps(steps)
		_ = m.ChargeMemory(bytes)
		steps, bytes = 0, 0
		return e.stopped() == nil
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		if steps++; steps >= chargeEvery && !flush() {
			return false
		}
		switch x := v.(type) {
		case map[string]any:
			bytes += containerBytes + int64(len(x))*(valueNodeBytes+containerBytes)
			for _, c := range x {
				if !walk(c) {
					return false
				}
			}
		case []any:
			bytes += containerBytes + int64(len(x))*valueNodeBytes
			for _, c := range x {
				if !walk(c) {
					return false
				}
			}
		}
		return true
	}
	if walk(v) {
		flush()
	}
	return e.limit
}

// live counts one unit of the call's work (an evaluation, or a pod that
// GetGangGroups places without one) and reports whether the call may go
// on: ctx is live and, on every clockEvery-th unit, the call is within the
// Program's timeout. When it may not, e.limit is the deadline's
// *luaapi.LimitError.
func (e *directEvaluator) live(ctx context.Context) bool {
	if e.limit != nil {
		return false
	}
	if ctx.Err() != nil {
		e.expire()
		return false
	}
	if e.evals++; e.evals%clockEvery == 0 {
		now := time.Now()
		if e.start.IsZero() {
			e.start = now
		} else if e.timeout > 0 && now.Sub(e.start) > e.timeout {
			e.expire()
			return false
		}
	}
	return true
}

// expire ends the call at its deadline (or its context's end), with the
// error a Lua call past it gets.
func (e *directEvaluator) expire() {
	e.declined = true
	e.meterContext()
	if e.stopped() == nil {
		// The clock the GoCall reads is the one live read: it has passed.
		e.limit = &luaapi.LimitError{Kind: luaapi.KindDeadline, Limit: e.timeout.String(), Cause: context.DeadlineExceeded}
	}
}

// metered is the context an algorithm that runs gojq itself (suspend
// and resume actions, ReviseReplica) runs it with: the call's meter on
// its evaluator, else ctx (a Lua call's context, metered itself).
func metered(ctx context.Context, ev evaluator) context.Context {
	if e, ok := ev.(*directEvaluator); ok {
		return e.meterContext()
	}
	return ctx
}

// finish ends the call: its error is the limit that ended it, if one did,
// else the algorithm's. The evaluator is recycled.
func (e *directEvaluator) finish(err error) error {
	if err != nil {
		e.stopped() // a limit the algorithm's own gojq runs met (metered)
	}
	if e.limit != nil {
		err = e.limit
	}
	e.s.Release()
	*e = directEvaluator{s: e.s.Reuse()}
	directEvaluators.Put(e)
	return err
}

// runHook runs hook h's Go algorithm f on an evaluator (see above) and
// reports a failure as the Lua path reports it: a *luaapi.LimitError
// naming the Karta and the hook, or a *HookError; a panic in f is
// recovered and reported as a *luaapi.PanicError.
func runHook[T any](ctx context.Context, p *Program, h Hook, f func(ctx context.Context, ev evaluator) (T, error)) (T, error) {
	var zero T
	if ctx.Err() != nil {
		// As CallProtected refuses a call whose context is done.
		err := p.hookError(h, p.limits.StartGo(ctx, time.Now()).Err())
		return zero, err
	}
	ev := p.newEvaluator(ctx, nil)
	res, err := callRecovered(ctx, ev, f)
	start := ev.start
	if err = ev.finish(err); err != nil {
		err = p.hookError(h, err)
		if start.IsZero() {
			start = time.Now()
		}
		p.limitRec.note(ctx, start, p.limits.Timeout, err)
		return zero, err
	}
	return res, nil
}

// callRecovered is f(ctx, ev), a panic recovered as a *luaapi.PanicError.
func callRecovered[T any](ctx context.Context, ev evaluator, f func(ctx context.Context, ev evaluator) (T, error)) (res T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			res, err = zero, &luaapi.PanicError{Msg: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	return f(ctx, ev)
}
