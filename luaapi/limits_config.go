package luaapi

import (
	"time"

	"github.com/kartalua/karta/internal/srcbound"
	lua "github.com/yuin/gopher-lua"
)

// DefaultTimeout is the wall clock of one call.
const DefaultTimeout = time.Second

// Limits bound every call of untrusted Lua and jq. Kartas' hooks, Karmada
// customizations and Argo CD scripts take this one type with one set of
// defaults. A zero field takes its default; a negative Timeout,
// MaxInstructions or MaxMemory means none (for trusted code only).
type Limits struct {
	// Timeout is the wall-clock limit of one call, measured from the start
	// of the call's own run (waiting for a pooled state is not charged).
	// Default DefaultTimeout; negative: only the caller's context.
	Timeout time.Duration
	// MaxInstructions is the budget of VM instructions and library steps
	// of one call (jq's included). Default DefaultMaxInstructions.
	MaxInstructions int64
	// CallDepth is the call stack depth limit. Default
	// DefaultCallStackSize.
	CallDepth int
	// MaxStringSize caps strings made by the string library and the ..
	// operator. Default DefaultMaxStringSize.
	MaxStringSize int
	// MaxMemory is the memory guard of one call: the bytes of the strings,
	// tables, table slots and closures scripts create, and of the values
	// jq builds (docs/security.md). Default DefaultMaxMemory.
	MaxMemory int64
	// MaxSourceSize caps a Lua chunk's source in bytes, checked before it
	// is parsed. Default srcbound.DefaultMaxSourceSize (1 MiB).
	MaxSourceSize int
	// MaxNesting caps a Lua chunk's nesting depth (brackets, blocks, runs
	// of unary operators, operators and suffixes of one expression),
	// checked by a scanner before it is parsed: gopher-lua's parser and
	// compiler recurse once per level. Default srcbound.DefaultMaxNesting
	// (200). jq expressions are checked with the same defaults when a
	// Karta is loaded.
	MaxNesting int
}

// WithDefaults fills the zero fields with their defaults.
func (l Limits) WithDefaults() Limits {
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxInstructions == 0 {
		l.MaxInstructions = DefaultMaxInstructions
	}
	if l.CallDepth <= 0 {
		l.CallDepth = DefaultCallStackSize
	}
	if l.MaxStringSize <= 0 {
		l.MaxStringSize = DefaultMaxStringSize
	}
	if l.MaxMemory == 0 {
		l.MaxMemory = DefaultMaxMemory
	}
	if l.MaxSourceSize <= 0 {
		l.MaxSourceSize = srcbound.DefaultMaxSourceSize
	}
	if l.MaxNesting <= 0 {
		l.MaxNesting = srcbound.DefaultMaxNesting
	}
	return l
}

// Sandbox is the SandboxOptions of states that run calls under l, with
// modules.
func (l Limits) Sandbox(modules map[string]func(*lua.LState) lua.LValue) SandboxOptions {
	l = l.WithDefaults()
	return SandboxOptions{
		Modules:         modules,
		CallStackSize:   l.CallDepth,
		MaxStringSize:   l.MaxStringSize,
		MaxInstructions: l.MaxInstructions,
		MaxMemory:       l.MaxMemory,
	}
}

// SourceLimitError is a Lua chunk or jq expression refused before it is
// parsed: larger than MaxSourceSize or nested deeper than MaxNesting. It
// names the chunk, the line and the limit.
type SourceLimitError = srcbound.LimitError

// CheckSource checks a Lua chunk's size and nesting depth under l (zero
// fields: the defaults) without parsing it: a *SourceLimitError.
func (l Limits) CheckSource(chunk, source string) error {
	l = l.WithDefaults()
	return srcbound.Lua(chunk, source, l.MaxSourceSize, l.MaxNesting)
}
