package luaapi

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// Modules written outside this package (Karmada's kube library, in
// karmada/kube) are built on the API of this file and the value bridge's
// exported parts (ViewOf, LazySource, NewLazy, ValuesOf, GoNumber,
// ConvertError, MaxDepth), so that they run under the same limits as the
// sandbox's own library:
//
//   - Module names the module and its functions; Module.Open is the loader
//     SandboxOptions.Modules (or Limits.Sandbox) takes, and the sandbox
//     installs the module as a read-only global that require returns.
//   - A module function runs in Go, where the VM's instruction count and
//     the guard rewrite do not see it: if it loops or allocates in
//     proportion to its arguments it charges the call first, with Charge
//     (steps) and ChargeMemory (bytes), and a limit crossed ends the call
//     with its *LimitError, which pcall cannot catch. Each function needs a
//     row in docs/charges.md saying what it charges.
//   - A function that walks a nested argument stops at MaxDepth and names
//     where a value is wrong with a Path, as the bridge's conversions do.
//   - A function's table arguments may be lazy tables (lazy.go): it reads
//     them through their metamethods, fills them (FillLazy) before reading
//     them raw, or reads an unfilled one's Go value (LazySource).
//   - Per-state data a module keeps belongs in L.G.Registry, which scripts
//     cannot reach; the sandbox itself (the state's global table, L.G.Global)
//     is read-only and must not be written.

// Module is a Lua library written in Go: the name scripts require and
// read it by, and its functions.
type Module struct {
	// Name is the module's global and require name (e.g. "kube"); it may
	// not be a name of the sandbox's own.
	Name string
	// Funcs are the module's functions by name.
	Funcs map[string]lua.LGFunction
}

// Open builds the module's table in L: a loader for SandboxOptions.Modules,
// which installs the table as a read-only proxy.
func (m Module) Open(L *lua.LState) lua.LValue {
	tb := L.CreateTable(0, len(m.Funcs))
	L.SetFuncs(tb, m.Funcs)
	return tb
}

// Loaders is modules as SandboxOptions.Modules (and Limits.Sandbox) take
// them: each module's Open by its Name.
func Loaders(modules ...Module) map[string]func(*lua.LState) lua.LValue {
	out := make(map[string]func(*lua.LState) lua.LValue, len(modules))
	for _, m := range modules {
		out[m.Name] = m.Open
	}
	return out
}

// Charge charges n steps (a step is about one VM instruction's work:
// copying 8 values, comparing or scanning 16 bytes) to the instruction
// budget of L's call, and raises the call's *LimitError, before the work
// is done, when the budget or the deadline is passed. Outside a
// CallProtected call it does nothing.
func Charge(L *lua.LState, n int) { charge(L, n) }

// HasLazy reports whether L can hold lazy tables (NewLazy): whether
// NewState made it.
func HasLazy(L *lua.LState) bool { return lazyOf(L) != nil }

// Path is where a walk of a nested value is, for its errors: the members
// and elements from the root down. It is formatted only when an error
// names it (`result.spec.containers[1].name`, with the root and the first
// array index the caller chooses).
type Path struct {
	segs []pathSeg
}

// Key enters the member k of an object.
func (p *Path) Key(k string) { p.segs = append(p.segs, pathSeg{key: k, isKey: true}) }

// Index enters the element at index i of an array, counted from 1 (a Lua
// index; Error prints it from the base it is given).
func (p *Path) Index(i int) { p.segs = append(p.segs, pathSeg{index: i}) }

// Pop leaves the member or element entered last.
func (p *Path) Pop() { p.segs = p.segs[:len(p.segs)-1] }

// TooDeep reports whether the walk is MaxDepth deep, where the bridge's
// conversions stop.
func (p *Path) TooDeep() bool { return len(p.segs) >= MaxDepth }

// Error is a *ConvertError at p: root names the value, base is the
// first array index printed (1 for Lua paths, 0 for JSON paths).
func (p *Path) Error(root string, base int, format string, args ...any) *ConvertError {
	return &ConvertError{Path: formatPath(root, p.segs, base), Msg: fmt.Sprintf(format, args...)}
}

// DepthError is the error of a value nested deeper than MaxDepth at p, as
// the bridge's conversions report it: the path's first steps only.
func (p *Path) DepthError(root string, base int) error { return tooDeep(root, p.segs, base) }
