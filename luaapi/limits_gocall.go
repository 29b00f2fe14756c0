package luaapi

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// GoCall is a call of Go work under l's limits without a Lua state: a
// Program's hook run by its Go algorithm, whose jq expressions run on the
// direct back end and, one by one where it declines, on gojq. Its
// Context is the context CallProtected gives a Lua call — a gojq.Meter
// charged with the call's instruction budget and memory guard, done at
// its deadline — so gojq evaluated with it is charged exactly as gojq
// evaluated inside a Lua call (a script's karta.generated), and Err reports a
// crossed limit with the same *LimitError CallProtected returns.
//
// A GoCall is only valid during its call, on the goroutine running it.
type GoCall struct {
	cc    *callContext
	limit time.Duration // the call's time, as a deadline error prints it
}

// StartGo starts a GoCall under l (zero fields take their defaults) whose
// deadline is l.Timeout from start, or ctx's deadline when sooner. start
// is when the call began (a caller that starts the GoCall lazily, on its
// first need, passes the time it began its own work).
func (l Limits) StartGo(ctx context.Context, start time.Time) *GoCall {
	l = l.WithDefaults()
	cc := newCallContext(ctx, 0, l.MaxInstructions)
	if l.Timeout > 0 {
		if d := start.Add(l.Timeout); !cc.hasDeadline || d.Before(cc.deadline) {
			cc.deadline, cc.hasDeadline = d, true
		}
	}
	if l.MaxMemory > 0 {
		cc.memLimit = l.MaxMemory
	}
	return &GoCall{cc: cc, limit: effectiveTimeout(ctx, l.Timeout)}
}

// Context is the call's context (see GoCall).
func (g *GoCall) Context() context.Context { return g.cc }

// Charge charges steps and bytes of the call's Go work to its budget and
// memory guard; see Err for what it returns.
func (g *GoCall) Charge(steps, bytes int64) error {
	_ = g.cc.ChargeSteps(steps)
	_ = g.cc.ChargeMemory(bytes)
	return g.Err()
}

// Err is the limit that ended the call, as CallProtected reports it (a
// *LimitError of its deadline, instruction budget or memory guard), or
// nil while the call may go on. It looks at the clock and ctx.
func (g *GoCall) Err() error {
	c := g.cc
	if c.err.Load() == nil {
		c.poll()
	}
	cerr := c.Err()
	if cerr == nil {
		return nil
	}
	if errors.Is(cerr, errInstructions) {
		return &LimitError{Kind: KindInstructions, Limit: strconv.FormatInt(c.budget, 10)}
	}
	var le *LimitError
	if errors.As(cerr, &le) {
		cp := *le
		return &cp
	}
	return deadlineError(g.limit, cerr)
}
