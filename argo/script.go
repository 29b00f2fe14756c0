package argo

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// DefaultTimeout is SPEC §10.5's wall clock per call. Argo CD gives its
// health scripts the same second.
const DefaultTimeout = time.Second

// ErrNotHealthScript is a chunk that is not in the Argo CD form: its top
// level does not end in return.
var ErrNotHealthScript = errors.New("not an Argo CD health script: its top level must end in return {status=..., message=...}")

// Limits bound each Run (SPEC §10.5). A zero field takes its default.
type Limits struct {
	// Timeout is the wall clock of a Run (default DefaultTimeout;
	// negative: only the context's deadline).
	Timeout time.Duration
	// MaxInstructions is the budget of VM instructions and library steps
	// (default luaapi.DefaultMaxInstructions; negative: none).
	MaxInstructions int64
	// CallDepth is the most nested calls (default
	// luaapi.DefaultCallStackSize).
	CallDepth int
	// MaxStringSize caps the strings the string library and table.concat
	// make (default luaapi.DefaultMaxStringSize).
	MaxStringSize int
}

// Script is a compiled health script. It is immutable and safe for
// concurrent use.
type Script struct {
	name    string
	chunk   string
	proto   *lua.FunctionProto
	limits  Limits
	timeout time.Duration
	// idle keeps sandboxed states between runs: building one costs far
	// more than a typical script. Concurrent runs beyond its capacity get
	// fresh states, which are closed afterwards.
	idle chan *lua.LState
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
	timeout := limits.Timeout
	switch {
	case timeout == 0:
		timeout = DefaultTimeout
	case timeout < 0:
		timeout = 0 // CallProtected: no deadline of its own
	}
	return &Script{
		name: name, chunk: chunk, proto: proto, limits: limits, timeout: timeout,
		idle: make(chan *lua.LState, runtime.GOMAXPROCS(0)),
	}, nil
}

// Name is the name the script was compiled with.
func (s *Script) Name() string { return s.name }

// Run runs the script with obj as the global obj and returns its verdict.
// Errors name the script: Lua errors by chunk and line, limits as
// *luaapi.LimitError, a status word Argo CD does not know, or a result of
// the wrong shape.
func (s *Script) Run(ctx context.Context, obj map[string]any) (Health, error) {
	L := s.state()
	h, err := s.run(ctx, L, obj)
	if err != nil {
		// SPEC §10.4: a state that hit a limit or an error is discarded.
		L.Close()
		return Health{}, err
	}
	select {
	case s.idle <- L:
	default:
		L.Close()
	}
	return h, nil
}

func (s *Script) state() *lua.LState {
	select {
	case L := <-s.idle:
		return L
	default:
	}
	return luaapi.NewState(luaapi.SandboxOptions{
		CallStackSize:   s.limits.CallDepth,
		MaxStringSize:   s.limits.MaxStringSize,
		MaxInstructions: s.limits.MaxInstructions,
	})
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
	h, err := FromLua(res[0])
	if err == nil {
		err = CheckStatus(h.Status)
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
