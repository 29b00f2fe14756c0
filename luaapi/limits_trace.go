package luaapi

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua's PCall without an error handler writes a traceback with one
// line per tail call ever made by the failing frames, and only then keeps
// the last 20: a script looping by tail calls until its deadline
// (local function f() return f() end) makes millions of lines, hundreds of
// MiB and seconds of work after the limit has already stopped it. So
// CallProtected calls through an error handler, which gopher-lua runs
// instead of building its traceback, and which writes a bounded one. An
// error handler also turns Go panics into plain Lua errors, so the call
// goes through a trampoline that turns them into *PanicError values first.

// tracebackKey is the registry key of the traceback errHandler leaves for
// CallProtected.
const tracebackKey = "karta.sandbox.traceback"

// maxTraceback is the most frames a traceback lists.
const maxTraceback = 20

// trampoline calls its first argument with the rest, returning all its
// results; a Go panic under it becomes a *PanicError raised as a Lua error.
func trampoline(L *lua.LState) (n int) {
	base := L.GetTop()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		aerr, isLua := r.(*lua.ApiError)
		msg := fmt.Sprint(r)
		if isLua {
			msg = aerr.Object.String()
		}
		if strings.HasSuffix(msg, "registry overflow") {
			// The data stack is full (gopher-lua raises this as a
			// Lua error, or panics when raising it overflows too).
			// Free it, so the error handler has room, and end the
			// call with the limit.
			L.SetTop(0)
			raiseLimit(L, KindStackSize, strconv.Itoa(L.Options.RegistryMaxSize)+" values")
		}
		if isLua && aerr.Type != lua.ApiErrorPanic {
			panic(r) // a Lua error: the handler's
		}
		// A Go panic, or one an inner pcall re-raised (sandboxPCall).
		pe := &PanicError{Msg: msg, Stack: string(debug.Stack())}
		if isLua {
			pe.Stack = aerr.StackTrace
		}
		L.SetTop(0)
		ud := L.NewUserData()
		ud.Value = pe
		L.Error(ud, 0)
	}()
	L.Call(base-1, lua.MultRet)
	return L.GetTop()
}

// errHandler records a bounded traceback of where the error was raised and
// returns the error value unchanged.
func errHandler(L *lua.LState) int {
	L.G.Registry.RawSetString(tracebackKey, lua.LString(traceback(L)))
	return 1
}

// traceback is gopher-lua's traceback format ("\tchunk:12: in function
// 'f'") for at most maxTraceback frames, a run of tail calls printed once.
// Level 0 is the handler itself, skipped.
func traceback(L *lua.LState) string {
	lines := []string{"stack traceback:"}
	// gopher-lua numbers every tail call as a level of its own, all of
	// them the same frame: the walk gives up after a few more levels than
	// it prints.
	for level := 1; level <= 3*maxTraceback && len(lines) <= maxTraceback; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sln", dbg, lua.LNil); err != nil {
			break
		}
		where := "[G]:"
		if dbg.What != "G" {
			where = fmt.Sprintf("%s:%d:", dbg.Source, dbg.CurrentLine)
		}
		name := "?"
		if dbg.Name != "" {
			name = "function '" + dbg.Name + "'"
		} else if dbg.What == "main" {
			name = "main chunk"
		} else if dbg.What != "G" {
			name = fmt.Sprintf("function <%s:%d>", dbg.Source, dbg.LineDefined)
		}
		line := "\t" + where + " in " + name
		if len(lines) > 1 && lines[len(lines)-1] == line {
			continue // the frames a tail call replaced print as one
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// takeTraceback returns and clears the traceback errHandler left.
func takeTraceback(L *lua.LState) string {
	tb, _ := L.G.Registry.RawGetString(tracebackKey).(lua.LString)
	L.G.Registry.RawSetString(tracebackKey, lua.LNil)
	return string(tb)
}

// pcallInner is L.PCall(nargs, MultRet) for the sandbox's pcall and
// xpcall, through the trampoline and the error handler, so a script's
// error inside pcall costs no unbounded traceback either, and a Go panic
// stays recognisable (sticky) as a *PanicError. The function and its
// arguments are the top nargs+1 values.
func pcallInner(L *lua.LState, nargs int) error {
	cfg := callConfigOf(L)
	if cfg.trampoline == nil {
		return L.PCall(nargs, lua.MultRet, nil)
	}
	L.Insert(cfg.trampoline, L.GetTop()-nargs)
	err := L.PCall(nargs+1, lua.MultRet, cfg.errHandler)
	if err != nil {
		takeTraceback(L)
	}
	return err
}
