package argo

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/argohealth"
	"github.com/kartalua/karta/internal/statepool"
	"github.com/kartalua/karta/luaapi"
)

// DefaultTimeout is the wall clock per call. Argo CD gives its health
// scripts the same second.
const DefaultTimeout = luaapi.DefaultTimeout

// ErrNotHealthScript is a chunk that is not in the Argo CD form: its top
// level does not end in return.
var ErrNotHealthScript = errors.New("not an Argo CD health script: its top level must end in return {status=..., message=...}")

// Limits bound each Run: karta's one limits type and defaults
// (luaapi.Limits), the memory guard included.
type Limits = luaapi.Limits

// Script is a compiled health script. It is immutable and safe for
// concurrent use.
type Script struct {
	name    string
	chunk   string
	proto   *lua.FunctionProto
	timeout time.Duration
	// pool keeps sandboxed states between runs (building one costs far
	// more than a typical script), at most GOMAXPROCS of them: concurrent
	// runs beyond that wait for a state.
	pool *statepool.Pool[*lua.LState]
}

// Compile compiles a health script with the default limits. name (a file
// name, say) names the chunk in errors: script:NAME:3: ....
func Compile(name, source string) (*Script, error) {
	return CompileWith(name, source, Limits{})
}

// CompileWith compiles a health script with limits. A chunk that does not
// parse is a *luaapi.SyntaxError; one that is not in the Argo CD form
// wraps ErrNotHealthScript.
func CompileWith(name, source string, limits Limits) (*Script, error) {
	chunk := "script:" + name
	info, err := luaapi.InspectChunk(chunk, source)
	if err != nil {
		return nil, err
	}
	if !info.EndsInReturn {
		return nil, fmt.Errorf("%s: %w", chunk, ErrNotHealthScript)
	}
	proto, err := luaapi.Compile(chunk, source)
	if err != nil {
		return nil, err
	}
	limits = limits.WithDefaults()
	sandbox := limits.Sandbox(nil)
	pool, err := statepool.New(statepool.Options[*lua.LState]{
		Size:    runtime.GOMAXPROCS(0),
		Prewarm: -1,
		New:     func() (*lua.LState, error) { return luaapi.NewState(sandbox), nil },
		Close:   (*lua.LState).Close,
	})
	if err != nil {
		return nil, err
	}
	// A negative Timeout: CallProtected then has no deadline of its own.
	return &Script{name: name, chunk: chunk, proto: proto, timeout: limits.Timeout, pool: pool}, nil
}

// Name is the name the script was compiled with.
func (s *Script) Name() string { return s.name }

// Run runs the script with obj as the global obj and returns its verdict.
// Errors name the script: Lua errors by chunk and line, limits as
// *luaapi.LimitError, a status word Argo CD does not know, or a result of
// the wrong shape.
func (s *Script) Run(ctx context.Context, obj map[string]any) (Health, error) {
	L, err := s.pool.Get(ctx)
	if err != nil {
		return Health{}, fmt.Errorf("%s: %w", s.chunk, err)
	}
	h, err := s.run(ctx, L, obj)
	if err != nil {
		// A state that hit a limit or an error is discarded.
		s.pool.Discard(L)
		return Health{}, err
	}
	s.pool.Put(L)
	return h, nil
}

func (s *Script) run(ctx context.Context, L *lua.LState, obj map[string]any) (Health, error) {
	// A fresh environment per run: no global a script sets outlives it.
	env := luaapi.NewEnv(L)
	t, err := luaapi.ToLuaTable(L, obj)
	if err != nil {
		return Health{}, fmt.Errorf("%s: obj: %w", s.chunk, err)
	}
	env.RawSetString("obj", t)
	res, err := luaapi.CallProtected(ctx, L, s.timeout, luaapi.Instantiate(L, s.proto, env), 1)
	if err != nil {
		return Health{}, s.named(err)
	}
	h, err := argohealth.FromLua(res[0])
	if err == nil {
		err = argohealth.CheckStatus(h.Status)
	}
	if err != nil {
		return Health{}, fmt.Errorf("%s: %w", s.chunk, err)
	}
	return h, nil
}

// named puts the script's chunk name in front of an error that does not
// start with it already (a Lua error reads "script:x.lua:3: ...").
func (s *Script) named(err error) error {
	var le *luaapi.LuaError
	if errors.As(err, &le) && le.Chunk == s.chunk {
		return err
	}
	return fmt.Errorf("%s: %w", s.chunk, err)
}
