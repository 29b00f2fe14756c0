package interpreter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/jqvars"
	"github.com/kartalua/karta/luaapi"
)

// HookError is a hook call that failed, naming the Karta and the hook.
// Limits are reported as *luaapi.LimitError instead (with Karta and Hook
// set); errors.As reaches the cause either way.
type HookError struct {
	Karta string
	Hook  Hook
	Err   error
}

// Error is `karta "NAME": HOOK: cause`, naming the Karta and the hook once:
// a cause that names them itself (an error of the same Karta wrapped on
// its way out of a nested call) is printed without them.
func (e *HookError) Error() string {
	prefix := fmt.Sprintf("karta %q: ", e.Karta)
	msg := strings.ReplaceAll(e.Err.Error(), prefix, "")
	if rest, ok := strings.CutPrefix(msg, string(e.Hook)+": "); ok {
		msg = rest
	} else if strings.HasPrefix(msg, string(e.Hook)+" ") {
		return prefix + msg // "ReviseReplica is not defined: ..."
	}
	return prefix + string(e.Hook) + ": " + msg
}

func (e *HookError) Unwrap() error { return e.Err }

// ErrHookNotEnabled is returned for a hook no chunk defines (Suspend on a
// Karta without a suspendDefinition, say).
var ErrHookNotEnabled = errors.New("hook not enabled")

// ErrNoProgram is the error of an entry point given a nil *Program (the
// exports, say): a caller's bug, reported rather than a panic.
var ErrNoProgram = errors.New("no Program (nil)")

// withState runs f on a pooled state, inside a protected Lua call that
// carries the call's limits: the deadline (measured from here, so queueing
// for the state is not charged), the instruction budget and the call
// depth. A state whose call hit a limit, panicked or raised a Lua error is
// discarded; one whose call f refused with its own error goes back to the
// pool (reusable).
func (p *Program) withState(ctx context.Context, h Hook, f func(ctx context.Context, sd *stateData) error) error {
	if err := p.buildPool(); err != nil {
		return &HookError{Karta: p.name, Hook: h, Err: err}
	}
	sd, err := p.pool.Get(ctx)
	if err != nil {
		return &HookError{Karta: p.name, Hook: h, Err: err}
	}
	// A call that did not enter through a hook (an adapter's own entry)
	// has no references bound: its scripts' jq() reads them absent.
	if len(p.refs) > 0 && jqvars.From(ctx) == nil {
		ctx = jqvars.With(ctx, p.absentReferences())
	}
	var ferr error
	body := sd.L.NewFunction(func(L *lua.LState) int {
		if ferr = f(L.Context(), sd); ferr != nil {
			raise(L, ferr)
		}
		return 0
	})
	// The deadline is the Program's timeout from here (or ctx's, when
	// sooner), and f sees it through L.Context().
	start := time.Now()
	if _, err := luaapi.CallProtected(ctx, sd.L, p.limits.Timeout, body, 0); err != nil {
		if reusable(err, ferr) {
			p.pool.Put(sd)
		} else {
			p.pool.Discard(sd)
		}
		err = p.hookError(h, err)
		p.limitRec.note(ctx, start, p.limits.Timeout, err)
		return err
	}
	p.pool.Put(sd)
	return nil
}

// reusable reports whether a state whose call failed with err may serve
// again: when the failure is f's own error (ferr, a refused revision or an
// object of the wrong shape, raised through the VM from Go), not a limit,
// a panic or a Lua error. Such a call leaves nothing behind, and a caller
// that keeps sending a refused request would otherwise cost a new state
// per call.
func reusable(err, ferr error) bool {
	if ferr == nil || !errors.Is(err, ferr) {
		return false
	}
	var le *luaapi.LimitError
	var pe *luaapi.PanicError
	return !errors.As(err, &le) && !errors.As(err, &pe)
}

// callLua calls the Lua function of hook h — the override when a script
// defines one, else the generated hook — and converts its result with
// decode while the state is still held. args builds the arguments: the
// generated hook reads the object through a lazy view, scripts get real
// tables.
func (p *Program) callLua(ctx context.Context, h Hook, args func(L *lua.LState, generated bool) ([]lua.LValue, error), decode func(L *lua.LState, v lua.LValue) error) error {
	if !p.enabled[h] {
		return &HookError{Karta: p.name, Hook: h, Err: ErrHookNotEnabled}
	}
	return p.withState(ctx, h, func(ctx context.Context, sd *stateData) error {
		L := sd.L
		// The lazy tables of the call (a script's object, the answers of
		// karta.generated) are forgotten once decode has read the result,
		// so that the pooled state keeps no object alive.
		defer luaapi.EndLazy(L)
		fn := sd.generated.RawGetString(string(h))
		generated := true
		if p.overridden[h] {
			env, err := sd.loadOverrides(ctx)
			if err != nil {
				return err
			}
			if f, ok := env.RawGetString(string(h)).(*lua.LFunction); ok {
				fn, generated = f, false
			}
		}
		if fn == lua.LNil {
			return ErrHookNotEnabled
		}
		a, err := args(L, generated)
		if err != nil {
			return err
		}
		L.Push(fn)
		for _, v := range a {
			L.Push(v)
		}
		L.Call(len(a), 1)
		out := L.Get(-1)
		L.Pop(1)
		return decode(L, out)
	})
}

// loadOverrides runs spec.luaScript and the scripts, in order, in a fresh
// environment over the sandbox, and returns it: a global function defined
// later replaces the hook of that name; no global outlives the call.
func (sd *stateData) loadOverrides(ctx context.Context) (*lua.LTable, error) {
	L := sd.L
	env := luaapi.NewEnv(L)
	for _, o := range sd.p.overrides {
		if o.argo {
			continue
		}
		L.Push(luaapi.Instantiate(L, o.proto, env))
		L.Call(0, 0)
	}
	return env, nil
}

// hookError names the Karta and the hook in a failure, keeping limit
// errors typed and jq and Go errors raised inside Lua reachable.
func (p *Program) hookError(h Hook, err error) error {
	var le *luaapi.LimitError
	if errors.As(err, &le) {
		le.Karta, le.Hook = p.name, string(h)
		return le
	}
	var lerr *luaapi.LuaError
	if errors.As(err, &lerr) {
		if ud, ok := lerr.Value.(*lua.LUserData); ok {
			if goErr, ok := ud.Value.(error); ok {
				err = goErr
			}
		}
	}
	var he *HookError
	if errors.As(err, &he) {
		return he
	}
	// These name the Karta and the hook themselves.
	var nd *NotDefinedError
	if errors.As(err, &nd) && nd.Karta == p.name {
		return nd
	}
	var km *KindMismatchError
	if errors.As(err, &km) && km.Karta == p.name {
		return km
	}
	return &HookError{Karta: p.name, Hook: h, Err: err}
}
