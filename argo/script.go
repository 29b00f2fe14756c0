package argo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/statepool"
	"github.com/kartalua/karta/luaapi"
)

// InvalidHealthStatus is the message Argo CD gives, with status Unknown,
// to a health script whose status is not one of its words.
const InvalidHealthStatus = "Lua returned an invalid health status"

// Script is a compiled Argo CD script: a health.lua, a discovery.lua or
// an action.lua. Any chunk compiles, as Argo CD runs any chunk: the result
// is the chunk's last return value, nil when it returns nothing. A Script
// is immutable and safe for concurrent use.
type Script struct {
	name    string
	chunk   string
	proto   *lua.FunctionProto
	timeout time.Duration
	// pool keeps sandboxed states between runs (building one costs far
	// more than a typical script), at most GOMAXPROCS of them: concurrent
	// runs beyond that wait for a state.
	pool *statepool.Pool[*argoState]
	// eager converts the whole object before the script runs, as Argo CD
	// does, instead of handing it lazy tables: the reference the tests
	// compare the lazy conversion with.
	eager bool
}

// Compile compiles a script with the default limits. name (a file name,
// say) names the chunk in errors: script:NAME:3: .... A chunk that does not
// parse is a *luaapi.SyntaxError; one beyond the limits' source size or
// nesting depth a *luaapi.SourceLimitError, refused before it is parsed.
func Compile(name, source string) (*Script, error) {
	return CompileWith(name, source, luaapi.Limits{})
}

// CompileWith compiles a script with limits.
func CompileWith(name, source string, limits luaapi.Limits) (*Script, error) {
	chunk := "script:" + name
	proto, err := luaapi.CompileWith(chunk, source, limits)
	if err != nil {
		return nil, err
	}
	limits = limits.WithDefaults()
	sandbox := limits.Sandbox(nil)
	pool, err := statepool.New(statepool.Options[*argoState]{
		Size:    runtime.GOMAXPROCS(0),
		Prewarm: -1,
		New: func() (*argoState, error) {
			L := luaapi.NewState(sandbox)
			return &argoState{L: L, meta: newMetatables(L)}, nil
		},
		Close: func(st *argoState) { st.L.Close() },
	})
	if err != nil {
		return nil, err
	}
	// A negative Timeout: CallProtected then has no deadline of its own.
	return &Script{name: name, chunk: chunk, proto: proto, timeout: limits.Timeout, pool: pool}, nil
}

// Name is the name the script was compiled with.
func (s *Script) Name() string { return s.name }

// Run runs the script as a health script, with obj as the global obj, and
// returns its verdict as Argo CD's ExecuteHealthLua reads it:
//
//   - nil (or no return value) is no assessment: the empty Health.
//   - A table is encoded to JSON as gopher-json does and unmarshaled into
//     {status, message}: a table that encodes to an array (an empty table,
//     say) or whose fields have the wrong JSON types is the empty Health;
//     a status that is not one of Argo CD's words — an empty one included
//     — is Unknown with the message InvalidHealthStatus.
//   - Anything else is an error: "expect table output from Lua script, not
//     string".
//
// Errors name the script: Lua errors by chunk and line, limits as
// *luaapi.LimitError, and a table the encoding refuses.
func (s *Script) Run(ctx context.Context, obj map[string]any) (Health, error) {
	var h Health
	err := s.call(ctx, obj, nil, func(L *lua.LState, v lua.LValue) error {
		var err error
		h, err = healthOf(L, v)
		return err
	})
	return h, err
}

// healthOf reads a health script's result as ExecuteHealthLua does.
func healthOf(L *lua.LState, v lua.LValue) (Health, error) {
	switch v.Type() {
	case lua.LTNil:
		return Health{}, nil
	case lua.LTTable:
	default:
		return Health{}, wrongResult("table", v)
	}
	x, err := fromLua(L, v)
	if err != nil {
		return Health{}, err
	}
	if h, ok := healthDirect(x); ok {
		return h, nil
	}
	return healthJSON(x)
}

// healthJSON reads the JSON value x into a Health through its JSON text,
// as Argo CD does.
func healthJSON(x any) (Health, error) {
	data, err := json.Marshal(x)
	if err != nil {
		return Health{}, err
	}
	var h Health
	if err := json.Unmarshal(data, &h); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Health{}, nil
		}
		return Health{}, err
	}
	if !validStatus(h.Status) {
		return Health{Status: StatusUnknown, Message: InvalidHealthStatus}, nil
	}
	return h, nil
}

func validStatus(word string) bool {
	for _, s := range Statuses() {
		if word == s {
			return true
		}
	}
	return false
}

// wrongResult is Argo CD's error for a result of the wrong type.
func wrongResult(want string, v lua.LValue) error {
	return fmt.Errorf("expect %s output from Lua script, not %s", want, v.Type())
}

// call runs the script in a fresh environment holding obj (and
// actionParams when params is not nil) and hands its result — the last
// value it returned, nil for none — to read, inside the call, before the
// state goes back to the pool.
func (s *Script) call(ctx context.Context, obj map[string]any, params map[string]string, read func(*lua.LState, lua.LValue) error) error {
	st, err := s.pool.Get(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", s.chunk, err)
	}
	err = s.run(ctx, st, obj, params, read)
	st.meta.reset()
	if err != nil {
		// A state that hit a limit or an error is discarded.
		s.pool.Discard(st)
		return err
	}
	s.pool.Put(st)
	return nil
}

// argoState is a pooled sandbox state with the base functions Argo CD
// gives its scripts and Kartas do not get (metatables.go).
type argoState struct {
	L    *lua.LState
	meta *metatables
}

func (s *Script) run(ctx context.Context, st *argoState, obj map[string]any, params map[string]string, read func(*lua.LState, lua.LValue) error) error {
	L := st.L
	// A fresh environment per run: no global a script sets outlives it.
	env := luaapi.NewEnv(L)
	st.meta.addTo(env)
	if params != nil {
		t := L.CreateTable(0, len(params))
		for k, v := range params {
			t.RawSetString(k, lua.LString(v))
		}
		env.RawSetString("actionParams", t)
	}
	// A nil obj is an empty table, as Argo CD's empty Unstructured is.
	// The object reaches the script as lazy tables (luaapi.NewLazy): a
	// table converts its own level when the script first touches it, so
	// a script pays for the part of the object it reads. Whatever would
	// make the conversion fail is found first, on the whole object, so
	// that the call fails as the eager conversion fails.
	var o lua.LValue
	if s.eager {
		var err error
		if o, err = toLua(L, obj, 0); err != nil {
			return fmt.Errorf("%s: %w", s.chunk, err)
		}
	} else {
		if err := checkObject(obj, 0); err != nil {
			return fmt.Errorf("%s: %w", s.chunk, err)
		}
		o = luaapi.NewLazy(L, obj, &argoRules)
		defer luaapi.EndLazy(L)
	}
	env.RawSetString("obj", o)
	res, err := luaapi.CallProtected(ctx, L, s.timeout, luaapi.Instantiate(L, s.proto, env), lua.MultRet)
	if err != nil {
		return s.named(err)
	}
	v := lua.LValue(lua.LNil)
	if len(res) > 0 {
		v = res[len(res)-1]
	}
	if err := read(L, v); err != nil {
		return &resultError{chunk: s.chunk, err: err}
	}
	return nil
}

// resultError is a result Argo CD would refuse too, named by the script.
type resultError struct {
	chunk string
	err   error
}

func (e *resultError) Error() string { return e.chunk + ": " + e.err.Error() }
func (e *resultError) Unwrap() error { return e.err }

// named puts the script's chunk name in front of an error that does not
// start with it already (a Lua error reads "script:x.lua:3: ...").
func (s *Script) named(err error) error {
	var le *luaapi.LuaError
	if errors.As(err, &le) && le.Chunk == s.chunk {
		return err
	}
	return fmt.Errorf("%s: %w", s.chunk, err)
}

// ArgoMessage is the message Argo CD would give for an error of a script
// run: a Lua error as the raised value reads in Argo CD, whose chunks are
// all named "<string>" (error("x", 0) reads "x"; a runtime error
// "<string>:3: attempt to ..."), and the encoding and result errors
// without karta's naming of the script. Action tests compare an
// expectedErrorMessage with it. Errors Argo CD cannot have (karta's limits,
// say) keep their own message.
func ArgoMessage(err error) string {
	var le *luaapi.LuaError
	if errors.As(err, &le) {
		if s, ok := le.Value.(lua.LString); ok {
			msg := string(s)
			if le.Chunk != "" && strings.HasPrefix(msg, le.Chunk+":") {
				msg = "<string>" + msg[len(le.Chunk):]
			}
			return msg
		}
		if le.Value != nil {
			return le.Value.String()
		}
	}
	var re *resultError
	if errors.As(err, &re) {
		return re.err.Error()
	}
	return err.Error()
}
