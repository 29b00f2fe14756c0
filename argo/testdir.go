package argo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/object"
)

// The files of a customization folder.
const (
	healthFile     = "health.lua"
	healthTestFile = "health_test.yaml"
)

// Report is what RunTestDir found. Failed counts failed tests and
// problems.
type Report struct {
	Passed, Failed int
	// Results has one entry per test, sorted by name.
	Results []Result
	// Problems are files that could not be tested at all: an unreadable
	// or invalid health_test.yaml, or either file without the other.
	Problems []Problem
}

// Result is one test of a health_test.yaml.
type Result struct {
	// Name is the test's folder joined with its inputPath, relative to
	// the directory, with slashes: Argo CD's name for the test.
	Name string
	// Script is the health.lua that ran, relative to the directory.
	Script string
	// Want is the test's healthStatus; Got what the script returned.
	Want, Got Health
	// Err is why the test could not run or the script failed.
	Err error
}

// OK reports whether the script ran and returned exactly the expected
// status and message, as Argo CD's test compares them.
func (r Result) OK() bool { return r.Err == nil && r.Got == r.Want }

// Problem is a file of the layout that could not be used.
type Problem struct {
	// Path is relative to the directory, with slashes.
	Path string
	Err  error
}

// testFile is health_test.yaml. sigs.k8s.io/yaml is what Argo CD's test
// reads it with, so field matching and unknown fields behave alike.
type testFile struct {
	Tests []struct {
		InputPath    string `json:"inputPath"`
		HealthStatus Health `json:"healthStatus"`
	} `json:"tests"`
}

// RunTestDir runs every health_test.yaml under dir, as Argo CD's own test
// runs its resource_customizations.
//
// Folders are <group>/<Kind> (<Kind> for the core group), holding
// health.lua beside health_test.yaml; a "_" in a folder name is a wildcard
// matching any run of characters in that name. Each test's inputPath is
// relative to its folder, and the test runs the script Argo CD would pick
// for the object's apiVersion and kind: the exact folder, else the first
// wildcard folder that matches (in directory walk order), else — for
// objects no folder matches, such as dir being a single folder — the
// health.lua beside the test. A test passes when the status and the
// message equal the expected ones exactly.
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
	rep := &Report{}
	for _, f := range folders {
		if err := runFolder(ctx, dir, f, folders, rep); err != nil {
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

// runFolder runs the tests of one folder's health_test.yaml.
func runFolder(ctx context.Context, dir string, f *folder, all []*folder, rep *Report) error {
	testPath := path.Join(f.rel, healthTestFile)
	switch {
	case !f.hasScript:
		rep.Problems = append(rep.Problems, Problem{testPath, fmt.Errorf("no %s beside it", healthFile)})
		return nil
	case !f.hasTest:
		// Argo CD's test fails on an untested script too.
		rep.Problems = append(rep.Problems, Problem{f.scriptPath(), fmt.Errorf("no %s beside it", healthTestFile)})
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(testPath)))
	if err != nil {
		rep.Problems = append(rep.Problems, Problem{testPath, cleanPathError(err)})
		return nil
	}
	var tf testFile
	if err := yaml.Unmarshal(data, &tf); err != nil {
		rep.Problems = append(rep.Problems, Problem{testPath, err})
		return nil
	}
	for _, t := range tf.Tests {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := Result{Name: path.Join(f.rel, t.InputPath), Want: t.HealthStatus}
		r.Script, r.Got, r.Err = runTest(ctx, dir, f, all, t.InputPath)
		rep.Results = append(rep.Results, r)
	}
	return nil
}

// runTest runs the script for one test input and returns the script's
// path with its verdict.
func runTest(ctx context.Context, dir string, f *folder, all []*folder, inputPath string) (string, Health, error) {
	if inputPath == "" {
		return "", Health{}, errors.New("the test has no inputPath")
	}
	obj, err := readInput(filepath.Join(dir, filepath.FromSlash(f.rel), filepath.FromSlash(inputPath)), inputPath)
	if err != nil {
		return "", Health{}, err
	}
	group, kind := groupKind(obj)
	use := pick(all, group, kind)
	if use == nil {
		use = f
	}
	if use.err != nil {
		return use.scriptPath(), Health{}, use.err
	}
	h, err := use.script.Run(ctx, obj)
	return use.scriptPath(), h, err
}

// readInput reads a test's object: one YAML or JSON document, numbers kept
// as their literals.
func readInput(file, source string) (map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", cleanPathError(err))
	}
	docs, err := object.Decode(data, source)
	if err != nil {
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
