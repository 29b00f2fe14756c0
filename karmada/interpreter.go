package karmada

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karmada/kube"
	"github.com/kartalua/karta/luaapi"

	"github.com/kartalua/karta/internal/statepool"
)

// Options configure NewInterpreter. The zero value gives the defaults.
type Options struct {
	// Limits bound each call: karta's one limits type and defaults
	// (luaapi.Limits), the wall clock Karmada's own second (its RunScript
	// runs each script under a one-second context).
	Limits luaapi.Limits
	// PoolSize is the most Lua states alive at once (default
	// 2*GOMAXPROCS).
	PoolSize int
}

// Interpreter runs customizations' Lua scripts the way Karmada's
// declarative interpreter does, in karta's sandbox (with the kube
// module): each call takes a state from a bounded pool, instantiates
// the precompiled script in a fresh environment, calls the operation's
// function under luaapi.CallProtected's limits, and converts the result by
// Karmada's rules (kube.Unmarshal). A state that failed is
// discarded. An Interpreter is safe for concurrent use.
type Interpreter struct {
	accessors map[schema.GroupVersionKind]*accessor
	protos    map[*script]*lua.FunctionProto
	pool      *statepool.Pool[*lua.LState]
	timeout   time.Duration
	// eagerArgs converts arguments eagerly (kube.Value): only
	// the tests that compare lazy arguments with eager ones set it.
	eagerArgs bool
}

// ScriptError is a customization script that does not compile.
type ScriptError struct {
	Customization string
	Source        string
	Operation     Operation
	Err           error
}

func (e *ScriptError) Error() string {
	prefix := ""
	if e.Source != "" {
		prefix = e.Source + ": "
	}
	return fmt.Sprintf("%scustomization %q: spec.customizations.%s.luaScript: %v", prefix, e.Customization, e.Operation.Field(), e.Err)
}

func (e *ScriptError) Unwrap() error { return e.Err }

// NewInterpreter merges custs by target kind with Karmada's precedence
// (see buildAccessors) and compiles every script in effect once. A script
// that does not compile is a *ScriptError. Close the Interpreter to free
// its Lua states.
func NewInterpreter(custs []*Customization, opts Options) (*Interpreter, error) {
	opts.Limits = opts.Limits.WithDefaults()
	if opts.PoolSize <= 0 {
		opts.PoolSize = 2 * runtime.GOMAXPROCS(0)
	}
	in := &Interpreter{
		accessors: buildAccessors(custs),
		protos:    map[*script]*lua.FunctionProto{},
		timeout:   opts.Limits.Timeout,
	}
	byText := map[string]*lua.FunctionProto{} // the prototype cache: one per distinct script
	compile := func(s *script) error {
		if p, ok := byText[s.text]; ok {
			in.protos[s] = p
			return nil
		}
		p, err := luaapi.CompileWith(fmt.Sprintf("karmada:%s/%s", s.customization, s.op.Field()), s.text, opts.Limits)
		if err != nil {
			return &ScriptError{Customization: s.customization, Source: s.source, Operation: s.op, Err: err}
		}
		byText[s.text], in.protos[s] = p, p
		return nil
	}
	for _, a := range in.accessors {
		for _, op := range Operations {
			if s := a.scripts[op]; s != nil {
				if err := compile(s); err != nil {
					return nil, err
				}
			}
		}
		for _, s := range a.dependencies {
			if err := compile(s); err != nil {
				return nil, err
			}
		}
	}
	sandbox := opts.Limits.Sandbox(luaapi.Loaders(kube.Module))
	pool, err := statepool.New(statepool.Options[*lua.LState]{
		Size:    opts.PoolSize,
		Prewarm: -1,
		New:     func() (*lua.LState, error) { return luaapi.NewState(sandbox), nil },
		Close:   (*lua.LState).Close,
	})
	if err != nil {
		return nil, err
	}
	in.pool = pool
	return in, nil
}

// errClosed is returned by calls on a closed Interpreter.
var errClosed = errors.New("karmada: interpreter is closed")

// Close frees the idle Lua states; calls after Close fail.
func (in *Interpreter) Close() { in.pool.Close() }

// HookEnabled reports whether a customization scripts op for objects of
// gvk (Karmada's HookEnabled).
func (in *Interpreter) HookEnabled(gvk schema.GroupVersionKind, op Operation) bool {
	a := in.accessors[gvk]
	return a != nil && a.enabled(op)
}

// Kinds lists the target kinds the loaded customizations cover.
func (in *Interpreter) Kinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(in.accessors))
	for gvk := range in.accessors {
		out = append(out, gvk)
	}
	return out
}
