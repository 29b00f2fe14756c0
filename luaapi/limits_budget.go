package luaapi

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// errInstructions is the cause a callContext stops with when its step
// budget runs out; gopher-lua raises its text as the Lua error.
var errInstructions = errors.New("instruction limit exceeded")

// pollEvery is how many steps pass between looks at the clock and the
// parent context: about 10-50 µs of Lua.
const pollEvery = 1024

// callContext is the context a call runs under, and its step counter.
//
// gopher-lua's context-aware main loop calls Done exactly once per VM
// instruction. So Done counts instructions, and every pollEvery of them
// looks at the clock and the parent context: the deadline is seen within
// microseconds of passing, on the call's own goroutine, without a timer
// goroutine that a busy machine might run late. When the budget runs out,
// the deadline passes or the parent is done, Done's channel is closed and
// gopher-lua raises Err's text at the next instruction.
//
// Library functions charge their loops with charge. A callContext is only
// valid during its call, on the goroutine running it (Done is not safe for
// concurrent use; Err is): Go functions must not block waiting on it.
type callContext struct {
	parent      context.Context
	parentDone  <-chan struct{}
	deadline    time.Time
	hasDeadline bool
	budget      int64 // steps allowed; math.MaxInt64 when unlimited
	steps       int64
	// memory is the bytes the call has been charged for (see
	// chargeMemory); memLimit the most it may be, 0 for no limit.
	memory   int64
	memLimit int64
	nextPoll int64 // steps at which Done next polls: min(steps+pollEvery, budget)
	done     chan struct{}
	err      atomic.Pointer[error]
}

func newCallContext(parent context.Context, timeout time.Duration, budget int64) *callContext {
	if budget <= 0 {
		budget = math.MaxInt64
	}
	c := &callContext{parent: parent, parentDone: parent.Done(), budget: budget, done: make(chan struct{})}
	c.deadline, c.hasDeadline = parent.Deadline()
	if timeout > 0 {
		if d := time.Now().Add(timeout); !c.hasDeadline || d.Before(c.deadline) {
			c.deadline, c.hasDeadline = d, true
		}
	}
	c.nextPoll = min(pollEvery, budget)
	return c
}

func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, c.hasDeadline }
func (c *callContext) Value(key any) any           { return c.parent.Value(key) }

func (c *callContext) Err() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Done counts a step; see callContext.
func (c *callContext) Done() <-chan struct{} {
	c.steps++
	if c.steps > c.nextPoll {
		c.poll()
	}
	return c.done
}

// poll stops the context if its budget is spent, its parent is done or its
// deadline has passed.
func (c *callContext) poll() {
	if c.err.Load() != nil {
		return
	}
	c.nextPoll = min(c.steps+pollEvery, c.budget)
	switch {
	case c.steps > c.budget:
		c.stop(errInstructions)
	case c.parentDone != nil && isClosed(c.parentDone):
		c.stop(c.parent.Err())
	case c.hasDeadline && !time.Now().Before(c.deadline):
		c.stop(context.DeadlineExceeded)
	}
}

func (c *callContext) stop(err error) {
	c.err.Store(&err)
	close(c.done)
}

// ChargeSteps charges n steps of work done in Go by a jq evaluation (the
// gojq Meter interface): a jq program run inside a call shares the call's
// budget and deadline.
func (c *callContext) ChargeSteps(n int64) error {
	if n > math.MaxInt64-c.steps {
		n = math.MaxInt64 - c.steps // saturate: charges may be huge estimates
	}
	c.steps += n
	if c.steps > c.nextPoll {
		c.poll()
	}
	return c.Err()
}

// ChargeMemory charges n bytes a jq evaluation is about to allocate to the
// call's memory guard (the gojq Meter interface). Crossing the limit stops
// the call with a memory LimitError, which no pcall or jq try can catch.
func (c *callContext) ChargeMemory(n int64) error {
	if c.memLimit > 0 && c.err.Load() == nil {
		c.memory += min(n, c.memLimit+1)
		if c.memory > c.memLimit {
			c.stop(&LimitError{Kind: KindMemory, Limit: formatSize64(c.memLimit)})
		}
	}
	return c.Err()
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// charge adds n steps to the running call's budget, for work a library
// function does in Go (a match of gsub, an element of concat), and raises
// the context's error if that ends the call.
func charge(L *lua.LState, n int) {
	c, ok := L.Context().(*callContext)
	if !ok {
		return
	}
	c.steps += int64(n)
	if c.steps > c.nextPoll {
		c.poll()
	}
	if err := c.Err(); err != nil {
		L.RaiseError("%s", err.Error())
	}
}

// stepsLeft is how many steps the running call may still take (for a
// library loop that cannot be interrupted, such as the pattern matcher).
func stepsLeft(L *lua.LState) int64 {
	c, ok := L.Context().(*callContext)
	if !ok || c.budget == math.MaxInt64 {
		return math.MaxInt64
	}
	return max(c.budget-c.steps, 0)
}

// ChargeMemory charges n bytes that a library function running inside a
// call (karta's jq runtime, say) is about to allocate to the call's memory
// guard, and raises a memory LimitError before anything is allocated if
// that would pass the limit. Outside a call it does nothing.
func ChargeMemory(L *lua.LState, n int) { chargeMemory(L, n) }

// chargeMemory charges n bytes the call is about to allocate to its memory
// guard, and raises a memory LimitError, before anything is allocated, if
// that would pass the limit. See docs/security.md for what is charged.
func chargeMemory(L *lua.LState, n int) {
	c, ok := L.Context().(*callContext)
	if !ok || c.memLimit <= 0 {
		return
	}
	c.memory += int64(n)
	if c.memory > c.memLimit {
		raiseLimit(L, KindMemory, formatSize64(c.memLimit))
	}
}
