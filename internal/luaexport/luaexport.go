// Package luaexport writes a Karta's Program as self-contained Lua for
// runtimes other than karta's: Karmada's (package karmada's Export) and
// Argo CD's (package argo's Export). Both carry the same pieces, written
// here once: jqlua's portable jq runtime, the Karta's expressions
// translated onto it (the translator of the in-process hooks, so the jq
// semantics are gojq's everywhere), helpers, and the Karta's generic
// status (statusOf). An adapter adds its own entry points and assembles
// the chunk with Chunk.
package luaexport

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// Exporter builds one exported chunk for a Program.
type Exporter struct {
	In    *interpreter.Program
	Model *interpreter.Shape
	// target names the runtime in errors ("Karmada", "Argo CD").
	target   string
	compiled Compiled
	// u translates the Karta's jq expressions with jqlua's translator, for
	// its portable runtime: the accessors run unchanged in the target.
	u *jqlua.Unit
	b strings.Builder
	// shared counts the component paths of each pipeline prefix; piped
	// are the paths translated as their shared prefix piped into their
	// last stage, by expression, whose definitions pipes holds (pipe.go).
	shared map[string]int
	piped  map[string]pipedRef
	pipes  strings.Builder
}

// Compiled is how a target runs an exported chunk, which decides the form
// of its accessors' field reads.
type Compiled int

const (
	// CompiledOnce: the target compiles a chunk once and runs it on every
	// call (Argo CD's health checks): field reads inline, the fewest VM
	// instructions per run.
	CompiledOnce Compiled = iota
	// CompiledPerCall: the target compiles a chunk on every call
	// (Karmada): field reads as calls (jqlua.NewCompactPortableUnit), half
	// their bytes, and the runtime built whole on every run
	// (jqlua.ShakePortableEager), without warm's stubs: bytes are what the
	// compile of every call pays for.
	CompiledPerCall
)

// New starts an export of p for target, which runs chunks as compiled says.
func New(p *interpreter.Program, target string, compiled Compiled) *Exporter {
	u := jqlua.NewPortableUnit()
	if compiled == CompiledPerCall {
		u = jqlua.NewCompactPortableUnit()
	}
	e := &Exporter{In: p, Model: p.Shape(), target: target, compiled: compiled, u: u, piped: map[string]pipedRef{}}
	e.shared = e.sharedPrefixes(e.Model)
	return e
}

// Analysis is the checked form of one of the Karta's expressions, from the
// checked Karta the Program was compiled from: no text is parsed again.
func (e *Exporter) Analysis(expr string) (*jqexpr.Analysis, error) {
	return jqexpr.OfChecked(e.In.Checked().Expr(expr), expr)
}

// Fail is an *interpreter.ExportError for the expression expr of field.
func (e *Exporter) Fail(field, expr string, err error) error {
	return &interpreter.ExportError{Karta: e.In.Name(), Target: e.target, Field: field, Expr: expr, Reason: err.Error()}
}

// Refuse is an *interpreter.ExportError for a feature the export cannot
// carry.
func (e *Exporter) Refuse(format string, args ...any) error {
	return &interpreter.ExportError{Karta: e.In.Name(), Target: e.target, Reason: fmt.Sprintf(format, args...)}
}

// Expr translates a jq path and returns a Lua expression, of the Lua
// value obj (nil for null), for the list of its outputs (NULL for null):
// the accessor called through run, which raises the jq error naming the
// field. The call is written where it is used, so a chunk carries no table
// of wrappers, one per expression.
func (e *Exporter) Expr(field, expr, obj string) (string, error) {
	ref, err := e.Accessor(field, expr)
	if err != nil {
		return "", err
	}
	return outsCall(field, ref, obj), nil
}

// Accessor translates a component's jq path and returns the Lua reference
// of its accessor (Q[i], or QP[i] for a path that shares its pipeline
// prefix with others: pipe.go), for a caller that calls it through the
// helpers (run), naming field.
func (e *Exporter) Accessor(field, expr string) (string, error) {
	if ref, ok := e.pipedAccessor(expr); ok {
		return ref, nil
	}
	return e.accessor(field, expr)
}

// accessor adds expr's accessor to the unit and returns its reference.
func (e *Exporter) accessor(field, expr string) (string, error) {
	a, err := e.Analysis(expr)
	if err != nil {
		return "", e.Fail(field, expr, err)
	}
	ref, err := addQuery(e.u, e.In.Karta().Spec.References, a, e.target)
	if err != nil {
		return "", e.Fail(field, expr, err)
	}
	return ref, nil
}

// addQuery adds a's accessor to u. An expression that reads references
// is added with each one's exportFallback, a jq constant, in place of its
// variable ($runtime.spec → (null).spec): the chunk runs in the target's
// Lua, which resolves no reference (docs/karta.md, "References") and
// binds no variable. A reference read without a fallback is the error,
// naming it.
func addQuery(u *jqlua.Unit, refs []karta.Reference, a *jqexpr.Analysis, target string) (string, error) {
	ref, err := u.AddQuery(a.Text, a.Query)
	if err == nil {
		return ref, nil
	}
	if _, reads := readReference(a.Vars, err); !reads {
		return "", err
	}
	q, perr := withFallbacks(refs, a)
	if perr != nil {
		return "", perr
	}
	if ref, err = u.AddQuery(q.String(), q); err != nil {
		return "", referenceError(a.Vars, target, err)
	}
	return ref, nil
}

// withFallbacks is a's query, parsed again (the checked tree is shared and
// never changed), with the references' exportFallbacks in place of their
// variables.
func withFallbacks(refs []karta.Reference, a *jqexpr.Analysis) (*gojq.Query, error) {
	fallbacks := map[string]*gojq.Query{}
	for _, r := range refs {
		if r.ExportFallback == "" {
			continue
		}
		fb, err := gojq.Parse(r.ExportFallback)
		if err != nil { // validation parsed it: a karta bug
			return nil, fmt.Errorf("exportFallback of $%s: %w", r.Name, err)
		}
		fallbacks["$"+r.Name] = fb
	}
	q, err := gojq.Parse(a.Text)
	if err != nil {
		return nil, err
	}
	return jqexpr.SubstituteVariables(q, fallbacks), nil
}

// NoInstances reports whether component c has no id on any object in the
// export: its ids come from references alone (c.IDsFromReferences, the
// rule in process too), and with the references' exportFallbacks, jq
// constants, in their place they yield nothing. Such a component is
// exported without instances, and its other paths, which may need what
// the target's jq cannot run, are not exported; in process the same
// component with no id has nothing else read.
func (e *Exporter) NoInstances(c *interpreter.ComponentShape) bool {
	if !c.IDsFromReferences {
		return false
	}
	a, err := e.Analysis(c.InstanceIDPath)
	if err != nil || a.Query == nil {
		return false
	}
	q, err := withFallbacks(e.In.Karta().Spec.References, a)
	if err != nil {
		return false
	}
	code, err := gojq.Compile(q) // fails when a reference without a fallback is left
	if err != nil {
		return false
	}
	// The query reads no input and its fallbacks are literals; the
	// deadline is a guard, not a bound.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, yields := code.RunWithContext(ctx, nil).Next()
	return !yields
}

// readReference is the reference (a "$"-prefixed variable of vars) whose
// being unbound made err, if it is one.
func readReference(vars []string, err error) (string, bool) {
	_, name, ok := strings.Cut(err.Error(), "variable not defined: ")
	return name, ok && slices.Contains(vars, name)
}

// referenceError names the reference an expression reads when that is
// why it does not compile without variables: the exported chunk runs in
// the target's Lua, which resolves no reference (docs/karta.md,
// "References"), and the reference declares no exportFallback.
func referenceError(vars []string, target string, err error) error {
	name, ok := readReference(vars, err)
	if !ok {
		return err
	}
	return fmt.Errorf("it reads the reference %s, which %s cannot resolve: an export carries no resolver, and the reference declares no exportFallback", name, target)
}

// outsCall is Expr's list of the outputs of the accessor ref on obj.
func outsCall(field, ref, obj string) string {
	return fmt.Sprintf("run(%s, %s, %s)", ref, obj, jqlua.LuaString(field))
}

// Value is Expr for a caller that needs the expression's only output: when
// the expression has exactly one output on every input (jqlua's Unit.One)
// it returns a Lua expression of obj computing that output with no
// protected call and no tables (V), and one true; else Expr's list of
// outputs and false. Its errors must be caught by Protect, which names the
// field.
func (e *Exporter) Value(field, expr, obj string) (string, bool, error) {
	ref, err := e.accessor(field, expr)
	if err != nil {
		return "", false, err
	}
	if !e.u.One(ref) {
		return outsCall(field, ref, obj), false, nil
	}
	return fmt.Sprintf("V(%s, %s, %s)", ref, obj, jqlua.LuaString(field)), true, nil
}

// Protect writes function name(obj), which calls inner(obj) under one
// protected call and raises a jq error of a V in it as Expr's functions
// do: prefixed with the field of the expression that raised it.
func (e *Exporter) Protect(name, inner string) {
	e.W(`function %s(obj)
  local ok, r = pcall(%s, obj)
  if ok then return r end
  error(JX.message(r) and WHAT .. ": " .. JX.message(r) or r, 0)
end

`, name, inner)
}

// W appends to the chunk's body.
func (e *Exporter) W(format string, args ...any) { fmt.Fprintf(&e.b, format, args...) }

// Chunk assembles the chunk: header (comment lines), the portable jq
// runtime, the accessors, imports (what the target's own modules the body
// needs, such as Karmada's kube), the helpers, then the body written with
// W — each only as far as roots reach. The walk is jqlua's: ShakeChunk
// keeps the statements of everything after the runtime that define a root
// or define nothing (the chunk's own work) and those they name, accessors
// (Q[i]) one by one;
// ShakePortable then keeps the parts of the runtime the result names. With
// no roots, the chunk is what its top-level work reaches (Argo CD's
// health.lua); a Karmada rule's chunk is what its function reaches.
func (e *Exporter) Chunk(header, imports string, roots ...string) string {
	var rest strings.Builder
	rest.WriteString(jqlua.PortableNames)
	rest.WriteString("\n")
	rest.WriteString(e.u.Lua())
	rest.WriteString("\n")
	rest.WriteString(imports)
	rest.WriteString(helperText())
	rest.WriteString(e.pipesLua())
	rest.WriteString("\n")
	rest.WriteString(e.b.String())
	shaken := jqlua.ShakeChunk(rest.String(), roots)
	var b strings.Builder
	b.WriteString(header)
	if slices.ContainsFunc(jqlua.ChunkNames(shaken), func(n string) bool { return n == "J" || n == "JX" }) {
		b.WriteString("-- The parts of karta's jq runtime (internal/jqlua/portable.lua) it uses; then the Karta's jq, each as Lua under it.\n")
		shake := jqlua.ShakePortable
		if e.compiled == CompiledPerCall {
			shake = jqlua.ShakePortableEager
		}
		b.WriteString(uncommented(shake(shaken)))
	}
	b.WriteString(shaken)
	return b.String()
}

// uncommented is Lua source without its comment lines: the runtime's
// comments document karta's source of it, not a Karta, and each export
// would otherwise carry them in every script. The runtime has no long
// strings and no comment after code on a line, so a line whose first
// non-blank characters are "--" is a comment.
func uncommented(src string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(src, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// Check reports an expression the export to target ("Karmada") cannot
// carry, and why: the same translation it runs (nil when it translates),
// with the exportFallbacks of the Karta's references refs bound.
func Check(a *jqexpr.Analysis, refs []karta.Reference, target string) error {
	_, err := addQuery(jqlua.NewPortableUnit(), refs, a, target)
	return err
}
