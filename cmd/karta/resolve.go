package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// resolver finds the Program for an object (docs/cli.md -k): the Karta of the
// -k file (the one whose root kind is the object's when the file holds
// several), the built-in -k names, or, without -k, the built-in registered
// for the object's kind. Each Karta is validated and compiled once per
// command, however many documents use it, so its problems print once.
type resolver struct {
	s       streams
	scripts []interpreter.Script
	// reg returns the built-in registry; called only when needed.
	reg func() (*interpreter.Registry, error)

	// file and kartas are set when -k names a file.
	file   string
	kartas []*karta.Karta
	// named is the built-in -k names.
	named *interpreter.Program

	compiled map[*karta.Karta]compileResult
	// allowKindMismatch compiles every Program with
	// Options.AllowKindMismatch (--allow-kind-mismatch).
	allowKindMismatch bool
}

// compileResult is a Karta compiled with the scripts, or why it was not.
type compileResult struct {
	p   *interpreter.Program
	err error
}

// newResolver checks -k up front: a file is loaded (its load errors are
// printed, exit 1, or 2 when it cannot be read), a name must be in reg
// (exit 2 otherwise).
func newResolver(s streams, ref string, scripts []interpreter.Script, reg func() (*interpreter.Registry, error)) (*resolver, error) {
	r := &resolver{s: s, scripts: scripts, reg: reg, compiled: map[*karta.Karta]compileResult{}}
	if ref == "" {
		return r, nil
	}
	if st, err := os.Stat(ref); err == nil && !st.IsDir() {
		kartas, err := karta.LoadFile(ref)
		if err != nil {
			return nil, reportLoadError(s, ref, err)
		}
		r.file, r.kartas = ref, kartas
		return r, nil
	}
	registry, err := r.reg()
	if err != nil {
		return nil, err
	}
	p, err := registry.LookupName(ref)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, usageError("-k %s: no such file and no built-in Karta of that name", ref)
	}
	r.named = p
	return r, nil
}

// reportLoadError prints why a Karta file did not load, as validate does,
// and returns the exit code as an error.
func reportLoadError(s streams, file string, err error) error {
	var loadErrs karta.LoadErrors
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		fmt.Fprintln(s.err, err.Error())
		return &exitError{code: exitUsage}
	case errors.As(err, &loadErrs):
		for _, le := range loadErrs {
			fmt.Fprintln(s.err, le.Error())
		}
	default:
		fmt.Fprintf(s.err, "%s: %v\n", file, err)
	}
	return invalid()
}

// only is the Program of a command without an object (compile): -k must
// name a built-in or a file with exactly one Karta.
func (r *resolver) only() (*interpreter.Program, error) {
	switch {
	case r.named != nil:
		return r.withScripts(r.named)
	case len(r.kartas) == 1:
		return r.compile(0)
	}
	return nil, fmt.Errorf("%s holds %d Kartas (%s); use a file with one", r.file, len(r.kartas), r.describe())
}

// program is the Program for an object of kind gvk.
func (r *resolver) program(gvk schema.GroupVersionKind) (*interpreter.Program, error) {
	switch {
	case r.named != nil:
		return r.withScripts(r.named)
	case r.file != "":
		return r.fromFile(gvk)
	case gvk.Kind == "":
		return nil, errors.New("the object has no apiVersion and kind to look a built-in Karta up by; pass -k FILE")
	}
	registry, err := r.reg()
	if err != nil {
		return nil, err
	}
	p, err := registry.Lookup(gvk)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("no Karta registered for %s; pass -k FILE", gvk)
	}
	return r.withScripts(p)
}

// fromFile picks the -k file's Karta for gvk. A single Karta is used
// whatever the object's kind: -k says which Karta to use, and one Karta
// may well serve several versions of a kind.
func (r *resolver) fromFile(gvk schema.GroupVersionKind) (*interpreter.Program, error) {
	if len(r.kartas) == 1 {
		return r.compile(0)
	}
	var match []int
	for i, k := range r.kartas {
		if rootGVK(k) == gvk {
			match = append(match, i)
		}
	}
	if len(match) == 1 {
		return r.compile(match[0])
	}
	how := "none is"
	if len(match) > 1 {
		how = "several are"
	}
	return nil, fmt.Errorf("%s holds %d Kartas (%s) and %s for %s", r.file, len(r.kartas), r.describe(), how, kindName(gvk))
}

// kindName names the object's kind in messages.
func kindName(gvk schema.GroupVersionKind) string {
	if gvk.Kind == "" {
		return "an object without apiVersion and kind"
	}
	return gvk.String()
}

// compile validates and compiles document i of the -k file once. Its
// validation problems are printed here, as validate prints them.
func (r *resolver) compile(i int) (*interpreter.Program, error) {
	k := r.kartas[i]
	if c, ok := r.compiled[k]; ok {
		return c.p, c.err
	}
	problems := karta.ValidateWithOptions(k, interpreter.ValidateOptions())
	if problems.HasErrors() {
		where := documentLabel(r.file, i, len(r.kartas))
		for _, p := range problems {
			fmt.Fprintf(r.s.err, "%s: %s\n", where, p.String())
		}
		r.compiled[k] = compileResult{err: invalid()}
		return nil, invalid()
	}
	return r.build(k)
}

// withScripts recompiles a built-in with the --script overrides (or to
// allow a kind mismatch); otherwise the registered Program serves as it is.
func (r *resolver) withScripts(p *interpreter.Program) (*interpreter.Program, error) {
	if len(r.scripts) == 0 && !r.allowKindMismatch {
		return p, nil
	}
	if c, ok := r.compiled[p.Karta()]; ok {
		return c.p, c.err
	}
	// A built-in keeps its bundled script, ahead of the --script ones.
	if b, ok, _ := builtin.Get(p.Name()); ok && b.Karta == p.Karta() {
		bp, err := b.Compile(r.options())
		if err != nil {
			printLines(r.s.err, "", err.Error())
			r.compiled[p.Karta()] = compileResult{err: invalid()}
			return nil, invalid()
		}
		r.compiled[p.Karta()] = compileResult{p: bp}
		return bp, nil
	}
	return r.build(p.Karta())
}

// build compiles k with the scripts once. A compile error is about the
// Karta and the scripts, not about any object, so it is printed here, once,
// as it is: it names the Karta and the chunk (script:fix.lua).
func (r *resolver) build(k *karta.Karta) (*interpreter.Program, error) {
	p, err := interpreter.Compile(k, r.options())
	if err != nil {
		printLines(r.s.err, "", err.Error())
		r.compiled[k] = compileResult{err: invalid()}
		return nil, invalid()
	}
	r.compiled[k] = compileResult{p: p}
	return p, nil
}

// options compiles for one call at a time: the command runs the documents
// one after another, so one pooled Lua state is enough.
func (r *resolver) options() interpreter.Options {
	return interpreter.Options{Scripts: r.scripts, PoolSize: 1, AllowKindMismatch: r.allowKindMismatch}
}

// describe lists the file's Kartas with the kinds they are for.
func (r *resolver) describe() string {
	parts := make([]string, len(r.kartas))
	for i, k := range r.kartas {
		parts[i] = fmt.Sprintf("%q for %s", k.Name, rootGVK(k))
	}
	return strings.Join(parts, ", ")
}

func rootGVK(k *karta.Karta) schema.GroupVersionKind {
	if root := k.Spec.StructureDefinition.RootComponent; root != nil && root.Kind != nil {
		return root.Kind.GVK()
	}
	return schema.GroupVersionKind{}
}
