package argo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/yamlerr"
	"github.com/kartalua/karta/object"
)

// TestKind is what a test of the layout checks.
type TestKind string

// The kinds of test: a health_test.yaml entry, an action_test.yaml
// discoveryTests entry and an actionTests entry.
const (
	TestHealth    TestKind = "health"
	TestDiscovery TestKind = "discovery"
	TestAction    TestKind = "action"
)

// Report is what RunTestDir found. Every test counts once in Passed or
// Failed; Failed also counts the problems.
type Report struct {
	Passed, Failed int
	// Results has one entry per test, sorted by name.
	Results []Result
	// Problems are files that could not be tested at all: an unreadable
	// or invalid test file, or a health.lua and its health_test.yaml
	// without the other.
	Problems []Problem
}

// Result is one test.
type Result struct {
	Kind TestKind
	// Name is Argo CD's name for the test under its folder, relative to
	// the directory, with slashes: <folder>/<inputPath> for a health
	// test, <folder>/actions/discovery/<inputPath> and
	// <folder>/actions/<action>/<inputPath> for the action tests.
	Name string
	// Script is the script that ran, relative to the directory.
	Script string
	// Want is a health test's healthStatus; Got what the script
	// returned.
	Want, Got Health
	// WantActions is a discovery test's expected result; GotActions what
	// the script offered.
	WantActions, GotActions []Action
	// WantError is an action test's expectedErrorMessage.
	WantError string
	// Mismatches say how an action's result differs from the expected
	// output, or which offered action the discovery test does not expect.
	Mismatches []string
	// Err is why the test could not run or the script failed.
	Err error
}

// OK reports whether the test passed, as Argo CD's harness decides:
//
//   - health: the script ran and returned exactly the expected status and
//     message;
//   - discovery: the script ran and every action it offered is one of the
//     expected ones, all fields equal;
//   - action: with an expectedErrorMessage, the script failed with exactly
//     that message (as Argo CD words it, see ArgoMessage); otherwise it ran
//     and each resource it returned matches the expected one (see
//     RunTestDir).
func (r Result) OK() bool {
	switch r.Kind {
	case TestAction:
		if r.WantError != "" {
			return r.Err != nil && ArgoMessage(r.Err) == r.WantError
		}
		return r.Err == nil && len(r.Mismatches) == 0
	case TestDiscovery:
		return r.Err == nil && len(r.Mismatches) == 0
	}
	return r.Err == nil && r.Got == r.Want
}

// Problem is a file of the layout that could not be used.
type Problem struct {
	// Path is relative to the directory, with slashes.
	Path string
	Err  error
}

// healthTests is health_test.yaml. sigs.k8s.io/yaml is what Argo CD's
// tests read their files with, so field matching and unknown fields behave
// alike.
type healthTests struct {
	Tests []struct {
		InputPath    string `json:"inputPath"`
		HealthStatus Health `json:"healthStatus"`
	} `json:"tests"`
}

// actionTests is actions/action_test.yaml.
type actionTests struct {
	DiscoveryTests []struct {
		InputPath string   `json:"inputPath"`
		Result    []Action `json:"result"`
	} `json:"discoveryTests"`
	ActionTests []struct {
		Action               string            `json:"action"`
		InputPath            string            `json:"inputPath"`
		ExpectedOutputPath   string            `json:"expectedOutputPath"`
		ExpectedErrorMessage string            `json:"expectedErrorMessage"`
		Parameters           map[string]string `json:"parameters"`
	} `json:"actionTests"`
}

// RunTestDir runs every health_test.yaml and actions/action_test.yaml
// under dir, as Argo CD's own tests run its resource_customizations.
//
// Folders are <group>/<Kind> (<Kind> for the core group), holding
// health.lua beside health_test.yaml, and actions/ with discovery.lua,
// <action>/action.lua and action_test.yaml.
//
// Each test's inputPath is relative to the folder of its test file. A
// health test runs the health.lua Argo CD picks for the object's
// apiVersion and kind: the exact folder, else the first wildcard folder
// that matches (a "_" in a folder name matches any run of characters; in
// directory walk order), else — for objects no folder matches, such as dir
// being a single folder — the health.lua beside the test. Discovery and
// action tests run the scripts of the exact folder only, as Argo CD looks
// actions up, else those beside the test.
//
// A health test passes when status and message equal the expected ones. A
// discovery test passes when every action offered is among the expected
// ones. An action test with an expectedErrorMessage passes when the action
// fails with that message; otherwise each resource the action returns is
// matched with an expected one (expectedOutputPath: the object itself for
// an old-style action, or a list of {unstructuredObj: ...}) by apiVersion,
// kind, namespace and name — a Job created from a CronJob, or a Workflow
// from a CronWorkflow or WorkflowTemplate, by name prefix — and compared
// as Argo CD's harness compares them: timestamps masked, every field the
// expected object sets equal, fields it leaves out not compared.
//
// A dir that cannot be walked is an error; problems inside it are
// reported in the Report.
func RunTestDir(ctx context.Context, dir string) (*Report, error) {
	folders, err := findFolders(dir)
	if err != nil {
		return nil, err
	}
	// Compiled up front: a test may run another folder's script.
	for _, f := range folders {
		f.compile(dir)
	}
	r := &runner{dir: dir, all: folders, scripts: map[string]*compiled{}}
	rep := &Report{}
	for _, f := range folders {
		if err := r.healthFolder(ctx, f, rep); err != nil {
			return nil, err
		}
		if err := r.actionFolder(ctx, f, rep); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(rep.Results, func(i, j int) bool { return rep.Results[i].Name < rep.Results[j].Name })
	for _, r := range rep.Results {
		if r.OK() {
			rep.Passed++
		} else {
			rep.Failed++
		}
	}
	rep.Failed += len(rep.Problems)
	return rep, nil
}

type runner struct {
	dir string
	all []*folder
	// scripts caches the action and discovery scripts by path.
	scripts map[string]*compiled
}

type compiled struct {
	s   *Script
	err error
}

// script compiles the script at rel once.
func (r *runner) script(rel string) (*Script, error) {
	c, ok := r.scripts[rel]
	if !ok {
		c = &compiled{}
		c.s, c.err = compileFile(r.dir, rel)
		r.scripts[rel] = c
	}
	return c.s, c.err
}

// healthFolder runs the tests of one folder's health_test.yaml.
func (r *runner) healthFolder(ctx context.Context, f *folder, rep *Report) error {
	testPath := path.Join(f.rel, healthTestFile)
	switch {
	case !f.hasScript && !f.hasTest:
		return nil
	case !f.hasScript:
		rep.Problems = append(rep.Problems, Problem{testPath, fmt.Errorf("no %s beside it", healthFile)})
		return nil
	case !f.hasTest:
		// Argo CD's test fails on an untested script too.
		rep.Problems = append(rep.Problems, Problem{f.scriptPath(), fmt.Errorf("no %s beside it", healthTestFile)})
		return nil
	}
	var tf healthTests
	if !r.readTests(testPath, &tf, rep) {
		return nil
	}
	for _, t := range tf.Tests {
		if err := ctx.Err(); err != nil {
			return err
		}
		res := Result{Kind: TestHealth, Name: path.Join(f.rel, t.InputPath), Want: t.HealthStatus}
		res.Script, res.Got, res.Err = r.healthTest(ctx, f, t.InputPath)
		rep.Results = append(rep.Results, res)
	}
	return nil
}

// readTests reads and decodes a test file, or records why it cannot.
func (r *runner) readTests(rel string, into any, rep *Report) bool {
	data, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(rel)))
	if err != nil {
		rep.Problems = append(rep.Problems, Problem{rel, cleanPathError(err)})
		return false
	}
	// Syntax errors are reported as every reader of karta's inputs
	// reports them, at their line in the file.
	if _, err := yamlerr.Parse(data, rel); err != nil {
		rep.Problems = append(rep.Problems, Problem{rel, err})
		return false
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		rep.Problems = append(rep.Problems, Problem{rel, errors.New(yamlerr.Plain(err.Error()))})
		return false
	}
	return true
}

// healthTest runs the health script for one test input and returns the
// script's path with its verdict.
func (r *runner) healthTest(ctx context.Context, f *folder, inputPath string) (string, Health, error) {
	obj, err := r.input(f.rel, inputPath)
	if err != nil {
		return "", Health{}, err
	}
	group, kind := groupKind(obj)
	use := pick(r.all, group, kind)
	if use == nil {
		use = f
	}
	if use.err != nil {
		return use.scriptPath(), Health{}, use.err
	}
	h, err := use.script.Run(ctx, obj)
	return use.scriptPath(), h, err
}

// input reads a test's object, inputPath relative to the folder at rel.
func (r *runner) input(rel, inputPath string) (map[string]any, error) {
	if inputPath == "" {
		return nil, errors.New("the test has no inputPath")
	}
	return readInput(filepath.Join(r.dir, filepath.FromSlash(rel), filepath.FromSlash(inputPath)), inputPath)
}

// actionsFor is the actions folder whose scripts run for obj: the exact
// folder of its kind, else the one holding the test.
func (r *runner) actionsFor(f *folder, obj map[string]any) string {
	group, kind := groupKind(obj)
	if use := exact(r.all, group, kind); use != nil {
		return path.Join(use.rel, actionsDir)
	}
	return path.Join(f.rel, actionsDir)
}

// actionFolder runs the tests of one folder's actions/action_test.yaml.
func (r *runner) actionFolder(ctx context.Context, f *folder, rep *Report) error {
	if !f.hasActionTest {
		return nil
	}
	actions := path.Join(f.rel, actionsDir)
	var tf actionTests
	if !r.readTests(path.Join(actions, actionTestFile), &tf, rep) {
		return nil
	}
	for _, t := range tf.DiscoveryTests {
		if err := ctx.Err(); err != nil {
			return err
		}
		res := Result{Kind: TestDiscovery, Name: path.Join(actions, "discovery", t.InputPath), WantActions: t.Result}
		r.discoveryTest(ctx, f, t.InputPath, &res)
		rep.Results = append(rep.Results, res)
	}
	for _, t := range tf.ActionTests {
		if err := ctx.Err(); err != nil {
			return err
		}
		res := Result{Kind: TestAction, Name: path.Join(actions, t.Action, t.InputPath), WantError: t.ExpectedErrorMessage}
		r.actionTest(ctx, f, t.Action, t.InputPath, t.ExpectedOutputPath, t.Parameters, &res)
		rep.Results = append(rep.Results, res)
	}
	return nil
}

func (r *runner) discoveryTest(ctx context.Context, f *folder, inputPath string, res *Result) {
	obj, err := r.input(path.Join(f.rel, actionsDir), inputPath)
	if err != nil {
		res.Err = err
		return
	}
	res.Script = path.Join(r.actionsFor(f, obj), discoveryFile)
	s, err := r.script(res.Script)
	if err != nil {
		res.Err = err
		return
	}
	res.GotActions, res.Err = s.Discover(ctx, obj)
	for _, a := range res.GotActions {
		if !containsAction(res.WantActions, a) {
			res.Mismatches = append(res.Mismatches, fmt.Sprintf("action %s is not expected: %s", a.Name, jsonText(a)))
		}
	}
}

func containsAction(list []Action, a Action) bool {
	a = asHarnessReadsIt(a)
	for _, x := range list {
		// testify's Contains, which Argo CD's harness uses, compares with
		// reflect.DeepEqual.
		if reflect.DeepEqual(asHarnessReadsIt(x), a) {
			return true
		}
	}
	return false
}

// asHarnessReadsIt is an action as Argo CD's harness holds it: its
// ResourceActionParam has a name and nothing else (value, type and default
// are not read), so a discovery offering {name: replicas, default: "6"}
// matches an expected {name: replicas, default: "0"}.
func asHarnessReadsIt(a Action) Action {
	if a.Params == nil {
		return a
	}
	params := make([]ActionParam, len(a.Params))
	for i, p := range a.Params {
		params[i] = ActionParam{Name: p.Name}
	}
	a.Params = params
	return a
}

func (r *runner) actionTest(ctx context.Context, f *folder, action, inputPath, outputPath string, params map[string]string, res *Result) {
	actions := path.Join(f.rel, actionsDir)
	source, err := r.input(actions, inputPath)
	if err != nil {
		res.Err = err
		return
	}
	if action == "" {
		res.Err = errors.New("the test has no action")
		return
	}
	res.Script = path.Join(r.actionsFor(f, source), action, actionFile)
	s, err := r.script(res.Script)
	if err != nil {
		res.Err = err
		return
	}
	out, err := s.RunAction(ctx, source, params)
	if err != nil || res.WantError != "" {
		res.Err = err
		return
	}
	if outputPath == "" {
		res.Err = errors.New("the test has neither expectedOutputPath nor expectedErrorMessage")
		return
	}
	expected, err := readExpected(filepath.Join(r.dir, filepath.FromSlash(actions), filepath.FromSlash(outputPath)), outputPath)
	if err != nil {
		res.Err = err
		return
	}
	res.Mismatches = matchResources(source, out.Resources, expected)
}

// readExpected reads an action test's expected output: a list of
// {unstructuredObj: ...} when it starts with "-", else one object.
func readExpected(file, source string) ([]map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", source, cleanPathError(err))
	}
	if _, err := yamlerr.Parse(data, source); err != nil {
		return nil, err
	}
	if len(data) > 0 && data[0] == '-' {
		var list []map[string]any
		if err := yaml.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		var out []map[string]any
		for i, item := range list {
			o, ok := item["unstructuredObj"].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: item %d has no unstructuredObj object", source, i)
			}
			out = append(out, o)
		}
		return out, nil
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return []map[string]any{obj}, nil
}

// matchResources compares each returned resource with its expected one,
// as Argo CD's harness does.
func matchResources(source map[string]any, got []ImpactedResource, expected []map[string]any) []string {
	var out []string
	srcKindName, srcName, srcNS := identity(source)
	for _, r := range got {
		api, kind := r.Object["apiVersion"], r.Object["kind"]
		_, name, ns := identity(r.Object)
		byPrefix := (kind == "Job" && srcKindName == "CronJob") ||
			(kind == "Workflow" && (srcKindName == "CronWorkflow" || srcKindName == "WorkflowTemplate"))
		var want map[string]any
		for _, e := range expected {
			_, en, ens := identity(e)
			if e["apiVersion"] != api || e["kind"] != kind || ens != ns {
				continue
			}
			if (byPrefix && strings.HasPrefix(en, srcName)) || (!byPrefix && en == name) {
				want = e
				break
			}
		}
		label := fmt.Sprintf("%s %s %s", r.Operation, kind, qualified(ns, name))
		if want == nil {
			out = append(out, label+": no expected resource with its apiVersion, kind, namespace and name")
			continue
		}
		obj := r.Object
		switch r.Operation {
		case OperationPatch:
			if api != source["apiVersion"] || kind != source["kind"] || name != srcName || ns != srcNS {
				out = append(out, label+": an action patches only the object it runs on")
			}
		case OperationCreate:
			if kind == "Job" || kind == "Workflow" {
				obj = jsonCopy(obj).(map[string]any)
				_, en, _ := identity(want)
				meta, _ := obj["metadata"].(map[string]any)
				if meta == nil {
					meta = map[string]any{}
					obj["metadata"] = meta
				}
				meta["name"] = en
			}
		}
		for _, d := range differences(normalize(want), normalize(obj)) {
			out = append(out, label+": "+d)
		}
	}
	return out
}

// identity is an object's kind, name and namespace.
func identity(obj map[string]any) (kind, name, namespace string) {
	kind, _ = obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ = meta["name"].(string)
	namespace, _ = meta["namespace"].(string)
	return kind, name, namespace
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// readInput reads a test's object: one YAML or JSON document, numbers kept
// as their literals. What karta's own reader refuses but Argo CD's harness
// reads (sigs.k8s.io/yaml, where a duplicate key's last value wins, as in
// rabbitmq.com/User's unknown.yaml) is read as the harness reads it: the
// corpus is Argo CD's, and its tests must run as they run there. karta's
// own commands (argo health -f, status -f, ...) keep refusing duplicates.
func readInput(file, source string) (map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", cleanPathError(err))
	}
	docs, err := object.Decode(data, source)
	if err != nil {
		var obj map[string]any
		if yaml.Unmarshal(data, &obj) == nil && obj != nil {
			return obj, nil
		}
		return nil, err
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: want one object, found %d documents", source, len(docs))
	}
	return docs[0].Object, nil
}

// groupKind is the object's API group ("" for the core group) and kind.
func groupKind(obj map[string]any) (group, kind string) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ = obj["kind"].(string)
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		group = g
	}
	return group, kind
}

// cleanPathError drops the absolute or dir-relative path an *fs.PathError
// carries: reports name files relative to the directory already.
func cleanPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
