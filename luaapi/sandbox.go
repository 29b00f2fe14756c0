package luaapi

import (
	"fmt"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Defaults of SandboxOptions.
const (
	// DefaultCallStackSize is the call depth limit, in call frames
	// (Lua and Go functions alike).
	DefaultCallStackSize = 200
	// DefaultStackSize is the most values the Lua data stack (gopher-lua's
	// "registry") may grow to: 128 Ki values, 2 MiB. It starts at
	// initialStackSize and grows on demand, so a state only pays for what
	// its calls used. Karmada's states have a fixed 5120, so every script
	// that runs there fits.
	DefaultStackSize = 128 * 1024
	// DefaultMaxInstructions is the per-call budget of VM
	// instructions (and library steps).
	DefaultMaxInstructions = 10_000_000
	// DefaultMaxStringSize is the cap on strings made by the
	// string library, table.concat and the .. operator.
	DefaultMaxStringSize = 1 << 20
	// DefaultMaxMemory is the per-call memory guard: the bytes of strings,
	// tables, table slots and closures one call may create.
	DefaultMaxMemory = 64 << 20

	initialStackSize = 1024
	stackGrowStep    = 1024
)

// SandboxOptions configure NewState. The zero value gives the defaults.
type SandboxOptions struct {
	// Modules are extra Lua modules (kube, karta, jq...): installed as
	// globals and returned by require(name). Each loader builds its module
	// in L; loaders run in name order after the sandbox exists, so a loader
	// may read the modules installed before it with L.GetGlobal. A table is
	// installed as a read-only proxy (see NewReadOnly); any other value
	// (a function such as jq) as it is. Names may not collide with the
	// sandbox's own globals; NewState panics if they do.
	Modules map[string]func(L *lua.LState) lua.LValue
	// CallStackSize is the call depth limit (default DefaultCallStackSize).
	CallStackSize int
	// StackSize is the most values the Lua data stack holds (default
	// DefaultStackSize); unpack of a huge table hits it.
	StackSize int
	// MaxStringSize caps the results of string.rep, string.format,
	// string.gsub and table.concat (default DefaultMaxStringSize).
	MaxStringSize int
	// MaxInstructions is each call's budget of VM instructions and library
	// steps (default DefaultMaxInstructions; negative for none).
	MaxInstructions int64
	// MaxMemory is each call's memory guard in bytes (default
	// DefaultMaxMemory; negative for none): what scripts compiled with
	// Compile create, and what the library makes for them, is charged
	// before it is allocated. See docs/security.md.
	MaxMemory int64
}

func (o SandboxOptions) withDefaults() SandboxOptions {
	if o.CallStackSize <= 0 {
		o.CallStackSize = DefaultCallStackSize
	}
	if o.StackSize <= 0 {
		o.StackSize = DefaultStackSize
	}
	if o.StackSize < initialStackSize {
		o.StackSize = initialStackSize
	}
	if o.MaxStringSize <= 0 {
		o.MaxStringSize = DefaultMaxStringSize
	}
	switch {
	case o.MaxInstructions == 0:
		o.MaxInstructions = DefaultMaxInstructions
	case o.MaxInstructions < 0:
		o.MaxInstructions = 0
	}
	switch {
	case o.MaxMemory == 0:
		o.MaxMemory = DefaultMaxMemory
	case o.MaxMemory < 0:
		o.MaxMemory = 0
	}
	return o
}

// Registry keys of what a sandboxed state keeps for Go: the metatable its
// per-call environments share, the string metatable (kept for inspection;
// Go's L.GetMetatable honours its __metatable) and the callConfig
// CallProtected reads. The registry is unreachable from scripts: there is
// no debug library.
const (
	envMetaKey    = "karta.sandbox.envmeta"
	stringMetaKey = "karta.sandbox.stringmeta"
	callConfigKey = "karta.sandbox.callconfig"
)

// callConfig is what every protected call of a NewState state needs, kept
// in one registry entry so that a call looks it up once.
type callConfig struct {
	maxInstructions int64 // 0: none
	maxMemory       int64 // 0: none
	// trampoline and errHandler: see limits_trace.go.
	trampoline, errHandler *lua.LFunction
	// lazy holds the state's lazy tables (lazy.go).
	lazy *lazyTables
}

// noCallConfig is the config of a state NewState did not make: no limits
// of its own, plain protected calls.
var noCallConfig = &callConfig{}

// callConfigOf is L's callConfig.
func callConfigOf(L *lua.LState) *callConfig {
	if ud, ok := L.G.Registry.RawGetString(callConfigKey).(*lua.LUserData); ok {
		if c, ok := ud.Value.(*callConfig); ok {
			return c
		}
	}
	return noCallConfig
}

// baseNames are the sandbox's base functions, plus require.
var baseNames = []string{
	"assert", "error", "ipairs", "next", "pairs", "pcall", "select",
	"tonumber", "tostring", "type", "unpack", "xpcall",
}

// NewState returns a gopher-lua state holding the read-only sandbox
// (docs/security.md, "What a script can do"). It does not run any user
// code.
//
// The sandbox is the state's global table (L.G.Global, also L.Env), holding:
// the base functions (baseNames), require, and read-only proxies of
// string, table, math, os (time, date, clock) and each module. It holds no
// _G and no _VERSION: _G is set in each per-call environment (NewEnv), and
// _VERSION is not in the sandbox's documented list, which is the whole of it.
//
// Scripts never run with the sandbox as their environment: they run in a
// NewEnv table whose __index is the sandbox, so they can read it but reach
// no path that writes it. Go code must not write globals (L.SetGlobal)
// while a call runs: that would write the shared sandbox.
func NewState(opts SandboxOptions) *lua.LState {
	opts = opts.withDefaults()
	L := lua.NewState(lua.Options{
		SkipOpenLibs:     true,
		CallStackSize:    opts.CallStackSize,
		RegistrySize:     initialStackSize,
		RegistryMaxSize:  opts.StackSize,
		RegistryGrowStep: stackGrowStep,
	})
	// Open only the libraries the sandbox draws from, as linit.go does,
	// into the state's initial global table; the sandbox copies from it.
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.OsLibName, lua.OpenOs},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	opened := L.G.Global
	lib := func(name string) *lua.LTable { return opened.RawGetString(name).(*lua.LTable) }

	sandbox := L.NewTable()
	L.G.Global = sandbox
	L.Env = sandbox

	for _, name := range baseNames {
		sandbox.RawSetString(name, opened.RawGetString(name))
	}
	sandbox.RawSetString("pcall", L.NewFunction(sandboxPCall))
	sandbox.RawSetString("xpcall", L.NewFunction(sandboxXPCall))
	// The base functions that read a table raw fill a lazy table first
	// (lazy.go). pairs returns the sandbox's next, as Lua's pairs returns
	// the global next.
	for _, name := range []string{"next", "ipairs", "unpack"} {
		sandbox.RawSetString(name, fillingFirst(L, opened.RawGetString(name).(*lua.LFunction)))
	}
	sandbox.RawSetString("pairs", L.NewClosure(sandboxPairs, sandbox.RawGetString("next")))
	chargeBaseLibrary(L, sandbox)

	// string: all but dump. The library table is also the __index of the
	// string metatable (for ("x"):upper()); gopher-lua makes it its own
	// __index, which would let string.__index.upper = nil through the
	// proxy, so the metatable becomes a separate table, unreachable from
	// scripts since getmetatable is absent.
	// table: gopher-lua's table library is exactly insert remove concat
	// sort getn maxn; copied by name so a newer gopher-lua adds nothing.
	tbl := L.NewTable()
	for _, name := range []string{"insert", "remove", "concat", "sort", "getn", "maxn"} {
		tbl.RawSetString(name, lib(lua.TabLibName).RawGetString(name))
	}
	chargeTableLibrary(L, tbl)
	guardTableWrites(L, tbl)

	str := lib(lua.StringLibName)
	str.RawSetString("dump", lua.LNil)
	str.RawSetString("__index", lua.LNil)
	capStrings(L, str, tbl, opts.MaxStringSize)
	chargeStringLibrary(L, str)
	// Every table function reads its first argument raw: a lazy table is
	// filled first, before the wrappers above measure or check it.
	for _, name := range []string{"insert", "remove", "concat", "sort", "getn", "maxn"} {
		tbl.RawSetString(name, fillingFirst(L, tbl.RawGetString(name).(*lua.LFunction)))
	}
	installGuards(L, sandbox, opts.MaxStringSize)
	strMeta := L.NewTable()
	strMeta.RawSetString("__index", str)
	strMeta.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(lua.LString(""), strMeta)
	L.G.Registry.RawSetString(stringMetaKey, strMeta)

	osLib := L.NewTable()
	for _, name := range []string{"time", "date", "clock"} {
		osLib.RawSetString(name, lib(lua.OsLibName).RawGetString(name))
	}
	chargeOsLibrary(L, osLib, opts.MaxStringSize)
	// os.time reads its table argument raw.
	osLib.RawSetString("time", fillingFirst(L, osLib.RawGetString("time").(*lua.LFunction)))

	modules := map[string]lua.LValue{
		"string": NewReadOnly(L, "string", str),
		"table":  NewReadOnly(L, "table", tbl),
		"math":   NewReadOnly(L, "math", lib(lua.MathLibName)),
		"os":     NewReadOnly(L, "os", osLib),
	}
	for name, m := range modules {
		sandbox.RawSetString(name, m)
	}
	installModules(L, sandbox, modules, opts.Modules)
	sandbox.RawSetString("require", L.NewFunction(sandboxRequire(modules)))

	envMeta := L.NewTable()
	envMeta.RawSetString("__index", sandbox)
	envMeta.RawSetString("__metatable", lua.LFalse)
	L.G.Registry.RawSetString(envMetaKey, envMeta)
	cfg := L.NewUserData()
	cfg.Value = &callConfig{
		maxInstructions: opts.MaxInstructions,
		maxMemory:       opts.MaxMemory,
		trampoline:      L.NewFunction(trampoline),
		errHandler:      L.NewFunction(errHandler),
		lazy:            newLazyTables(L),
	}
	L.G.Registry.RawSetString(callConfigKey, cfg)
	return L
}

// installModules runs the loaders in name order and installs their modules
// as globals and in the require table.
func installModules(L *lua.LState, sandbox *lua.LTable, modules map[string]lua.LValue, loaders map[string]func(*lua.LState) lua.LValue) {
	names := make([]string, 0, len(loaders))
	for name := range loaders {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "require" || name == "_G" || sandbox.RawGetString(name) != lua.LNil {
			panic(fmt.Sprintf("luaapi: module %q collides with a sandbox global", name))
		}
		v := loaders[name](L)
		if t, ok := v.(*lua.LTable); ok {
			v = NewReadOnly(L, name, t)
		}
		modules[name] = v
		sandbox.RawSetString(name, v)
	}
}

// sandboxTable returns the read-only global table of a state created by NewState
// (the table every per-call environment's __index points to).
func sandboxTable(L *lua.LState) *lua.LTable { return L.G.Global }

// NewEnv returns a fresh per-call environment: an empty table whose
// metatable's __index is the sandbox. Reads fall through to the sandbox;
// writes land in the fresh table and die with it. Its _G is itself, so
// _G.x = 1 and pairs(_G) see only this call's globals.
func NewEnv(L *lua.LState) *lua.LTable {
	// Sized for a few globals: gopher-lua's first string key otherwise
	// makes room for 32 (a 2 KiB map per call).
	env := L.CreateTable(0, envGlobals)
	env.Metatable = L.G.Registry.RawGetString(envMetaKey)
	env.RawSetString("_G", env)
	return env
}

// Compile compiles an untrusted chunk (a user script, a Karmada or Argo CD
// customization) once into a prototype, naming the chunk (e.g.
// "karta:jobset/luaScript", "script:fix.lua") so Lua errors read
// `karta:jobset/luaScript:3: attempt to ...`. The chunk is rewritten so its
// concatenations, table constructors, dynamic stores and closures are
// checked by the memory guard and the string size limit (guard_rewrite.go).
// A prototype is immutable and may be instantiated in any number of states
// concurrently; it must run in a NewState state, whose sandbox has the
// guard functions. Syntax errors are *SyntaxError; a chunk larger or
// nested deeper than the default Limits allow is a *SourceLimitError,
// refused before it is parsed.
func Compile(chunk, source string) (*lua.FunctionProto, error) {
	return CompileWith(chunk, source, Limits{})
}

// CompileWith is Compile with the source limits of limits (MaxSourceSize,
// MaxNesting; zero fields take the defaults).
func CompileWith(chunk, source string, limits Limits) (*lua.FunctionProto, error) {
	if err := limits.CheckSource(chunk, source); err != nil {
		return nil, err
	}
	return compile(chunk, source, true)
}

func compile(chunk, source string, guarded bool) (*lua.FunctionProto, error) {
	stmts, err := parse.Parse(strings.NewReader(source), chunk)
	if err != nil {
		return nil, &SyntaxError{Chunk: chunk, Msg: cleanParseError(chunk, err)}
	}
	if guarded {
		stmts = guardChunk(stmts)
	}
	proto, err := lua.Compile(stmts, chunk)
	if err != nil {
		return nil, &SyntaxError{Chunk: chunk, Msg: strings.Join(strings.Fields(err.Error()), " ")}
	}
	// A main chunk is a vararg function, and gopher-lua (Lua 5.1's
	// compatibility "arg") builds a table of its varargs on every call
	// unless the chunk uses "...": a table with a 32-slot map (about
	// 2.5 KiB, three allocations) per call. A main chunk has no local
	// named arg (the compiler declares one in nested functions only), so
	// nothing can read that table: it is not built.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, nil
}

// envGlobals is the room a per-call environment is made with.
const envGlobals = 8

// Instantiate makes a function of L from proto whose globals are env
// (normally a NewEnv table). Functions the chunk defines inherit env.
func Instantiate(L *lua.LState, proto *lua.FunctionProto, env *lua.LTable) *lua.LFunction {
	fn := L.NewFunctionFromProto(proto)
	fn.Env = env
	return fn
}
