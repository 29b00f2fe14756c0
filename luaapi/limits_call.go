package luaapi

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// LuaError is a Lua error raised by a call: error(...), a runtime error such
// as indexing nil, or an error value raised by a Go function (jq raises its
// errors as userdata; Value keeps it, and Unwrap reaches the Go error it
// holds).
type LuaError struct {
	// Chunk and Line locate the error: from the message's position prefix
	// when it has one, else the innermost Lua frame of the traceback.
	// Chunk is empty when neither is known.
	Chunk string
	Line  int
	// Msg is the message without its position prefix.
	Msg string
	// Value is the raised value itself.
	Value     lua.LValue
	Traceback string
}

func (e *LuaError) Error() string {
	if e.Chunk == "" {
		return e.Msg
	}
	return e.Chunk + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
}

// Unwrap returns the Go error carried by a userdata error value, if any.
func (e *LuaError) Unwrap() error {
	if ud, ok := e.Value.(*lua.LUserData); ok {
		if err, ok := ud.Value.(error); ok {
			return err
		}
	}
	return nil
}

// PanicError is a Go panic during a call (a bug in a Go function, or in
// gopher-lua). The state must be discarded.
type PanicError struct {
	Msg   string
	Stack string
}

func (e *PanicError) Error() string { return "Go panic during Lua call: " + e.Msg }

// CallProtected calls fn(args...) on L and returns its results (nret of
// them, or all with lua.MultRet).
//
// The call runs under a context derived from ctx (see callContext) with a
// deadline of timeout measured from the start of this call, so time spent
// waiting for a state is not charged to the script (timeout <= 0: only
// ctx's own deadline), a budget of the state's MaxInstructions VM
// instructions plus the steps library functions charge (pattern matching
// included), and the state's MaxMemory guard. Library functions that could
// run long in Go charge their work as they go, so a pathological pattern
// ends on the budget; scripts compiled with Compile charge what they
// allocate before allocating it, so t[60000000] = true ends on the memory
// guard without growing the table. Failures are classified:
//
//   - ctx done, or the deadline passed → *LimitError{Kind: KindDeadline}
//     wrapping ctx.Err() or context.DeadlineExceeded;
//   - the budget spent → *LimitError{Kind: KindInstructions};
//   - gopher-lua's "stack overflow" (CallStackSize frames) →
//     *LimitError{Kind: KindCallDepth}; its "registry overflow" (the data
//     stack, e.g. unpack of a huge table) → KindStackSize;
//   - a limit raised by the sandbox (string sizes, memory) → that
//     *LimitError;
//   - a Go panic → *PanicError;
//   - any other error → *LuaError carrying the raised value.
//
// The sandbox's pcall and xpcall do not catch limits or Go panics, so a
// script cannot swallow them.
//
// After any error the state is usable again as far as gopher-lua goes (its
// stacks are unwound). Whether to pool it again is the caller's choice:
// after a limit, a panic or a Lua error karta's callers discard it (the
// script may have left anything in it); interpreter pools it again when
// the error is its own Go code's refusal, raised through the call.
func CallProtected(ctx context.Context, L *lua.LState, timeout time.Duration, fn lua.LValue, nret int, args ...lua.LValue) (results []lua.LValue, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	limit := effectiveTimeout(ctx, timeout)
	if cerr := ctx.Err(); cerr != nil {
		return nil, deadlineError(limit, cerr)
	}
	cfg := callConfigOf(L)
	budget, memory := cfg.maxInstructions, cfg.maxMemory
	// A call that can never be stopped runs without a context: gopher-lua's
	// plain main loop is faster than its context-checking one.
	var cc *callContext
	if budget > 0 || memory > 0 || timeout > 0 || ctx.Done() != nil {
		cc = newCallContext(ctx, timeout, budget)
		cc.memLimit = memory
		prev := L.Context()
		L.SetContext(cc)
		defer func() {
			if prev != nil {
				L.SetContext(prev)
			} else {
				L.RemoveContext()
			}
		}()
	}
	base := L.GetTop()
	defer func() {
		// PCall recovers panics inside the VM; this catches the rest
		// (a closed state, say).
		if r := recover(); r != nil {
			results, err = nil, &PanicError{Msg: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	nargs := len(args)
	if cfg.trampoline != nil {
		L.Push(cfg.trampoline)
		nargs++
	}
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	if perr := L.PCall(nargs, nret, cfg.errHandler); perr != nil {
		L.SetTop(base)
		if aerr, ok := perr.(*lua.ApiError); ok && aerr.StackTrace == "" {
			aerr.StackTrace = takeTraceback(L)
		}
		if cc != nil {
			if cerr := cc.Err(); cerr != nil {
				if errors.Is(cerr, errInstructions) {
					return nil, &LimitError{Kind: KindInstructions, Limit: strconv.FormatInt(budget, 10)}
				}
				var le *LimitError
				if errors.As(cerr, &le) {
					c := *le
					return nil, &c
				}
				return nil, deadlineError(limit, cerr)
			}
		}
		return nil, classify(L, perr)
	}
	n := L.GetTop() - base
	results = make([]lua.LValue, n)
	for i := range results {
		results[i] = L.Get(base + 1 + i)
	}
	L.SetTop(base)
	return results, nil
}

// effectiveTimeout is the time the call has: timeout, or ctx's remaining
// time when that ends sooner (at least 1ns: a deadline that has passed
// still is one). It is only printed.
func effectiveTimeout(ctx context.Context, timeout time.Duration) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if rem := time.Until(d); timeout <= 0 || rem < timeout {
			return max(rem, time.Nanosecond)
		}
	}
	return timeout
}

// deadlineError is a deadline LimitError; limit is the call's budget of
// time, or <= 0 when it had none (a context canceled without a deadline).
func deadlineError(limit time.Duration, cause error) *LimitError {
	s := "none"
	switch {
	case limit >= time.Millisecond:
		s = limit.Round(time.Millisecond).String()
	case limit > 0:
		s = limit.String()
	}
	return &LimitError{Kind: KindDeadline, Limit: s, Cause: cause}
}

// classify turns PCall's error into the error CallProtected returns, when
// the call's context did not stop it.
func classify(L *lua.LState, err error) error {
	aerr, ok := err.(*lua.ApiError)
	if !ok {
		return &PanicError{Msg: err.Error()}
	}
	if le := vmLimit(L, aerr); le != nil {
		return le
	}
	if ud, ok := aerr.Object.(*lua.LUserData); ok {
		if pe, ok := ud.Value.(*PanicError); ok {
			return pe
		}
	}
	if aerr.Type == lua.ApiErrorPanic {
		return &PanicError{Msg: aerr.Object.String(), Stack: aerr.StackTrace}
	}
	return newLuaError(aerr)
}

// vmLimit returns the limit an error is, if it is one: a *LimitError raised
// by the sandbox, or one of gopher-lua's own overflow errors. A script that
// raises the string "stack overflow" itself is taken at its word; that only
// ends its own call.
func vmLimit(L *lua.LState, aerr *lua.ApiError) *LimitError {
	switch v := aerr.Object.(type) {
	case *lua.LUserData:
		if le, ok := v.Value.(*LimitError); ok {
			c := *le
			return &c
		}
	case lua.LString:
		_, _, msg := splitPosition(string(v))
		switch {
		case msg == "stack overflow" || strings.Contains(msg, "callstack overflow"):
			return &LimitError{Kind: KindCallDepth, Limit: strconv.Itoa(L.Options.CallStackSize)}
		case msg == "registry overflow":
			return &LimitError{Kind: KindStackSize, Limit: strconv.Itoa(L.Options.RegistryMaxSize) + " values"}
		}
	}
	return nil
}

// sticky reports whether an error caught by the sandbox's pcall must be
// raised again: limits, an expired context and Go panics end the call.
func sticky(L *lua.LState, aerr *lua.ApiError) bool {
	if ctx := L.Context(); ctx != nil && ctx.Err() != nil {
		return true
	}
	if ud, ok := aerr.Object.(*lua.LUserData); ok {
		if _, ok := ud.Value.(*PanicError); ok {
			return true
		}
	}
	return aerr.Type == lua.ApiErrorPanic || vmLimit(L, aerr) != nil
}

// raiseLimit raises a *LimitError as a Lua error value. pcall will not
// catch it and CallProtected returns it.
func raiseLimit(L *lua.LState, kind LimitKind, limit string) {
	ud := L.NewUserData()
	ud.Value = &LimitError{Kind: kind, Limit: limit}
	L.Error(ud, 0)
}

func newLuaError(aerr *lua.ApiError) *LuaError {
	e := &LuaError{Value: aerr.Object, Traceback: aerr.StackTrace}
	switch v := aerr.Object.(type) {
	case lua.LString:
		e.Chunk, e.Line, e.Msg = splitPosition(string(v))
	case lua.LNumber, lua.LBool:
		e.Msg = v.String()
	case *lua.LUserData:
		switch x := v.Value.(type) {
		case error:
			e.Msg = x.Error()
		case fmt.Stringer:
			e.Msg = x.String()
		}
	}
	if e.Msg == "" && e.Chunk == "" {
		e.Msg = "(error object is a " + aerr.Object.Type().String() + " value)"
	}
	if e.Chunk == "" {
		e.Chunk, e.Line = tracebackPosition(aerr.StackTrace)
	}
	return e
}

// splitPosition splits gopher-lua's "chunk:line: msg" at the first
// ":<digits>: " (chunk names such as "karta:jobset/generated" contain
// colons, but never that).
func splitPosition(s string) (chunk string, line int, msg string) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i+1 && j+1 < len(s) && s[j] == ':' && s[j+1] == ' ' && i > 0 {
			n, err := strconv.Atoi(s[i+1 : j])
			if err == nil {
				return s[:i], n, s[j+2:]
			}
		}
	}
	return "", 0, s
}

// tracebackPosition finds the innermost Lua frame of a gopher-lua
// traceback ("\tchunk:12: in function 'f'").
func tracebackPosition(tb string) (string, int) {
	for _, line := range strings.Split(tb, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[G]") {
			continue
		}
		if chunk, n, rest := splitPosition(line); chunk != "" && strings.HasPrefix(rest, "in ") {
			return chunk, n
		}
	}
	return "", 0
}
