package jqlua

import (
	_ "embed" // the portable runtime's source
	"fmt"
)

// PortableRuntime is the J table in plain Lua (portable.lua): every
// primitive of Primitives with the Go runtime's semantics, which are gojq's,
// for chunks that run where karta's Go runtime does not exist, such as
// Karmada's interpreter (the Karmada export). It is a Lua fragment that
// declares two locals: J, the runtime, and JX, its boundary (JX.message(e)
// reads a jq error raised by it, JX.plain(v) leaves out nulls the way
// Karmada's own decoding does, JX.kind(v) is jq's type). It uses only
// Lua 5.1's base functions and its string, table and math libraries, and
// builds J afresh each time it runs.
//
//go:embed portable.lua
var PortableRuntime string

// PortablePrelude begins a chunk whose accessors come from a portable Unit:
// the runtime, then the names generated accessors use (their direct reads
// of objects use type).
var PortablePrelude = PortableRuntime + PortableNames

// PortableNames is PortablePrelude after the runtime.
const PortableNames = "local NULL = J.null\nlocal type = type\nlocal Q = {}\n"

// NewPortableUnit returns an empty Unit for PortablePrelude: an expression
// outside the translated subset, which only gojq could run, is a
// *NotPortableError instead of a gojq-backed accessor.
func NewPortableUnit() *Unit { return &Unit{byExpr: map[string]int{}, portable: true} }

// NewCompactPortableUnit is NewPortableUnit for a target that compiles a
// chunk on every call (Karmada): its accessors read a constant string key
// with J.field's call instead of inline from the table, half the bytes of
// each read for a fifth more VM instructions per run (the exported health
// scripts' mean, 1,080 → 1,332), which such a target's compile outweighs.
func NewCompactPortableUnit() *Unit {
	return &Unit{byExpr: map[string]int{}, portable: true, compact: true}
}

// NotPortableError is an expression a portable Unit cannot translate.
type NotPortableError struct {
	Expr string
	// Reason says which construct is outside the translated subset.
	Reason string
}

func (e *NotPortableError) Error() string {
	return fmt.Sprintf("%s is outside the jq subset that runs without gojq", e.Reason)
}
