package kartatest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
)

// Options configure Run.
type Options struct {
	// Update writes the expectations from the current results: every
	// golden file a case names, and every inline expectation it states (a
	// case that states none gets its status and pod count). The report
	// then lists what was written, and nothing fails but errors.
	Update bool
}

// Result is one check of one case: "DIR/NAME: status", say.
type Result struct {
	Name string
	// Failure says what differs, "" when the check passed.
	Failure string
	// Diff is a unified diff from the expected to the actual text, when
	// the check compares texts.
	Diff string
}

// OK reports whether the check passed.
func (r Result) OK() bool { return r.Failure == "" }

// Report is what a run found.
type Report struct {
	Results        []Result
	Passed, Failed int
	// Written lists the files Update wrote, sorted.
	Written []string
}

func (r *Report) add(res Result) {
	r.Results = append(r.Results, res)
	if res.OK() {
		r.Passed++
	} else {
		r.Failed++
	}
}

// Run runs every test file at or under path (a folder, or a test file).
// An error is a problem with path itself; a test file that does not load
// is a failed result, so that one broken folder does not hide the others.
func Run(ctx context.Context, path string, opts Options) (*Report, error) {
	files, err := findSuites(path)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	written := map[string]bool{}
	for _, file := range files {
		r := &runner{ctx: ctx, file: file, dir: filepath.Dir(file), opts: opts, rep: rep, written: written, progs: map[schema.GroupVersionKind]*interpreter.Program{}}
		r.run()
	}
	for f := range written {
		rep.Written = append(rep.Written, f)
	}
	sort.Strings(rep.Written)
	return rep, nil
}

// findSuites lists the test files at or under path, sorted.
func findSuites(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == FileName {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no %s in it or below: a test folder holds a %s listing its cases", path, FileName, FileName)
	}
	sort.Strings(files)
	return files, nil
}

// runner runs one test file.
type runner struct {
	ctx     context.Context
	file    string
	dir     string
	opts    Options
	rep     *Report
	written map[string]bool
	suite   *Suite
	// named is the suite's own Karta compiled, nil when the built-ins are
	// looked up by kind; progs caches those.
	named   *interpreter.Program
	progs   map[schema.GroupVersionKind]*interpreter.Program
	updates *updater
}

func (r *runner) run() {
	s, err := readSuite(r.file)
	if err != nil {
		r.rep.add(Result{Name: r.file, Failure: err.Error()})
		return
	}
	r.suite = s
	if err := r.compileNamed(); err != nil {
		r.rep.add(Result{Name: r.file, Failure: err.Error()})
		return
	}
	if r.opts.Update {
		if r.updates, err = newUpdater(r.file); err != nil {
			r.rep.add(Result{Name: r.file, Failure: err.Error()})
			return
		}
	}
	for i := range s.Tests {
		r.runCase(i, &s.Tests[i])
	}
	if r.updates != nil && r.updates.changed {
		if err := r.updates.write(); err != nil {
			r.rep.add(Result{Name: r.file, Failure: err.Error()})
			return
		}
		r.written[r.file] = true
	}
}

// compileNamed compiles the suite's Karta when it names one: a file in the
// folder, or else a built-in's name.
func (r *runner) compileNamed() error {
	s := r.suite
	scripts, err := r.readScripts()
	if err != nil {
		return err
	}
	if s.Karta == "" {
		if len(scripts) > 0 {
			return errors.New("scripts need karta: name the Karta they override (a file or a built-in's name)")
		}
		return nil
	}
	opts := interpreter.Options{Scripts: scripts, PoolSize: 1}
	file := filepath.Join(r.dir, s.Karta)
	if _, err := os.Stat(file); err == nil {
		ks, err := karta.LoadFile(file)
		if err != nil {
			return err
		}
		if len(ks) != 1 {
			return fmt.Errorf("karta %s holds %d Kartas; a test file tests one", s.Karta, len(ks))
		}
		r.named, err = interpreter.Compile(ks[0], opts)
		return err
	}
	b, ok, err := builtin.Get(s.Karta)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("karta %s: no such file in %s and no built-in of that name", s.Karta, r.dir)
	}
	r.named, err = b.Compile(opts)
	return err
}

func (r *runner) readScripts() ([]interpreter.Script, error) {
	var out []interpreter.Script
	for _, f := range r.suite.Scripts {
		data, err := os.ReadFile(filepath.Join(r.dir, f))
		if err != nil {
			return nil, fmt.Errorf("scripts: %w", err)
		}
		out = append(out, interpreter.Script{Name: filepath.Base(f), Source: string(data)})
	}
	return out, nil
}

// program is the Program for an object: the suite's Karta, or the
// built-in of its kind.
func (r *runner) program(gvk schema.GroupVersionKind) (*interpreter.Program, error) {
	if r.named != nil {
		return r.named, nil
	}
	if p, ok := r.progs[gvk]; ok {
		return p, nil
	}
	reg, err := builtins()
	if err != nil {
		return nil, err
	}
	p, err := reg.Lookup(gvk)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("no built-in Karta for %s; name the Karta under test with karta: in %s", gvk, FileName)
	}
	r.progs[gvk] = p
	return p, nil
}

// caseName is "DIR/NAME" for the report.
func (r *runner) caseName(c *Case) string {
	name := c.Name
	if name == "" {
		name = strings.TrimSuffix(c.Object, filepath.Ext(c.Object))
	}
	return filepath.ToSlash(filepath.Join(r.dir, name))
}

func (r *runner) runCase(i int, c *Case) {
	name := r.caseName(c)
	doc, err := r.readObject(c.Object)
	if err != nil {
		r.rep.add(Result{Name: name, Failure: err.Error()})
		return
	}
	obj := &unstructured.Unstructured{Object: doc.Object}
	p, err := r.program(obj.GroupVersionKind())
	if err != nil {
		r.rep.add(Result{Name: name, Failure: err.Error()})
		return
	}
	if c.Status == nil && c.Pods == nil && c.Gang == nil && c.Revise == nil {
		if !r.opts.Update {
			r.rep.add(Result{Name: name, Failure: "the case checks nothing: add status, pods, gang or revise expectations (or run karta test --update)"})
			return
		}
		// A new case: write what it gives now, for review.
		c.Status = &StatusCheck{Status: "?", Matched: []string{}}
		c.Pods = &PodsCheck{Count: new(int)}
		r.updates.addCase(i)
	}
	ctx := r.ctx
	if len(c.Refs) > 0 {
		res, err := r.readRefs(c.Refs)
		if err != nil {
			r.rep.add(Result{Name: name, Failure: err.Error()})
			return
		}
		ctx = interpreter.WithResolver(ctx, res, nil)
	}
	ck := &checker{r: r, i: i, ctx: ctx, p: p, obj: obj, name: name}
	if c.Status != nil {
		r.rep.add(ck.status(c.Status))
	}
	if c.Pods != nil {
		r.rep.add(ck.pods(c.Pods))
	}
	if c.Gang != nil {
		r.rep.add(ck.gang(c.Gang))
	}
	if c.Revise != nil {
		r.rep.add(ck.revise(c.Revise, c.Object))
	}
}

// readObject decodes the one workload object of a file (a List is not a
// case: a case is one object).
func (r *runner) readObject(file string) (*object.Document, error) {
	path := filepath.Join(r.dir, file)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := object.Decode(data, path)
	if err != nil {
		return nil, err
	}
	if exp := object.Expand(docs); len(docs) != 1 || len(exp) != 1 || exp[0].Item != 0 {
		return nil, fmt.Errorf("%s: a case's object file holds exactly one object (not several documents, nor a List)", path)
	}
	return docs[0], nil
}

// readRefs reads a case's refs into a static resolver: every object of
// every file (several documents, Lists), as karta --ref reads them.
func (r *runner) readRefs(files []string) (*interpreter.StaticResolver, error) {
	var objs []*unstructured.Unstructured
	for _, file := range files {
		path := filepath.Join(r.dir, file)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("refs: %w", err)
		}
		docs, err := object.Decode(data, path)
		if err != nil {
			return nil, fmt.Errorf("refs: %w", err)
		}
		for _, d := range object.Expand(docs) {
			objs = append(objs, &unstructured.Unstructured{Object: d.Object})
		}
	}
	return interpreter.NewStaticResolver(objs...), nil
}

var errNoBuiltins = errors.New("the built-ins did not load")

var (
	builtinOnce sync.Once
	builtinReg  *interpreter.Registry
	builtinErr  error
)

// builtins is the process's built-in registry, compiled lazily per kind.
func builtins() (*interpreter.Registry, error) {
	builtinOnce.Do(func() {
		builtinReg, builtinErr = builtin.Registry(interpreter.Options{PoolSize: 1})
		if builtinErr != nil {
			builtinErr = fmt.Errorf("%w: %v", errNoBuiltins, builtinErr)
		}
	})
	return builtinReg, builtinErr
}
