package karmada

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CustomizationsFile is the file name of a kind's customizations in
// Karmada's third-party layout.
const CustomizationsFile = "customizations.yaml"

// RunTestDir runs a directory in Karmada's third-party customization
// layout, <group>/<version>/<Kind>/customizations.yaml beside
// testdata/*-test.yaml (every file under testdata, multi-document), as
// Karmada's harness (thirdparty_test.go) does: for each customization of
// a kind, every case runs its operation through an Interpreter loaded
// with all that kind's customizations, and each output key is compared
// (compareOutput). Every expected key must be produced; produced keys the
// test leaves out are not checked.
//
// dir may be the layout's root, a folder above it (one holding several
// layouts, or Karmada's repository: every customizations.yaml below it
// runs, its kind read from the three folders above it), or a folder inside
// it (a group, version or kind).
//
// The error is for a dir that cannot be read; everything else (a
// customization that does not load or compile, a test file that does not
// parse, a directory out of layout) is reported as failures.
func RunTestDir(ctx context.Context, dir string) (*Report, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: dir, Err: errors.New("not a directory")}
	}
	var files []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Karmada skips any path containing "testdata"; only the part
		// below dir counts here, so that dir itself may be in a testdata.
		if !d.IsDir() && d.Name() == CustomizationsFile && !strings.Contains(relPath(dir, path), "testdata") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	report := &Report{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return report, err
		}
		runKind(ctx, dir, f, report)
	}
	return report, nil
}

// runKind runs the cases of one customizations.yaml.
func runKind(ctx context.Context, root, file string, report *Report) {
	kindDir := filepath.Dir(file)
	kind := relPath(root, kindDir)
	failAll := func(cases []*TestCase, customization, msg string) {
		if len(cases) == 0 {
			report.fail(&Failure{Kind: kind, File: relPath(root, file), Customization: customization, Message: msg})
			return
		}
		for _, tc := range cases {
			report.fail(&Failure{Kind: kind, File: relPath(root, tc.File), Customization: customization, Operation: tc.Operation, Case: tc.Name, Message: msg})
		}
	}
	cases, err := loadKindCases(filepath.Join(kindDir, "testdata"))
	if err != nil {
		failAll(nil, "", err.Error())
		return
	}
	data, err := os.ReadFile(file)
	if err != nil {
		failAll(cases, "", err.Error())
		return
	}
	custs, err := Load(data, relPath(root, file))
	if err == nil {
		err = checkLayout(layoutKind(root, kindDir), custs)
	}
	if err != nil {
		failAll(cases, "", err.Error())
		return
	}
	in, err := NewInterpreter(custs, Options{})
	if err != nil {
		for _, c := range custs {
			failAll(cases, c.Name, err.Error())
		}
		return
	}
	defer in.Close()
	for _, c := range custs {
		for _, tc := range cases {
			f := runCase(ctx, in, c, tc)
			if f == nil {
				report.pass()
				continue
			}
			f.Kind, f.File, f.Customization, f.Case = kind, relPath(root, tc.File), c.Name, tc.Name
			if f.Operation == "" {
				f.Operation = tc.Operation
			}
			report.fail(f)
		}
	}
}

// loadKindCases reads every file under testdata, in lexical order.
func loadKindCases(testdata string) ([]*TestCase, error) {
	var cases []*TestCase
	err := filepath.WalkDir(testdata, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		cs, err := LoadTestCases(path)
		if err != nil {
			return err
		}
		cases = append(cases, cs...)
		return nil
	})
	if os.IsNotExist(err) {
		return nil, nil // a kind without tests
	}
	return cases, err
}

// checkLayout requires each customization's target to match its
// directory, <group>/<version>/<Kind>, as the harness does.
func checkLayout(kind string, custs []*Customization) error {
	parts := strings.Split(filepath.ToSlash(kind), "/")
	if len(parts) != 3 {
		return fmt.Errorf("the directory format is incorrect: want <group>/<version>/<Kind>/%s, got %s/%s", CustomizationsFile, kind, CustomizationsFile)
	}
	for _, c := range custs {
		if want := parts[0] + "/" + parts[1]; c.Spec.Target.APIVersion != want {
			return fmt.Errorf("customization %q: target apiVersion %s does not match the directory (%s)", c.Name, c.Spec.Target.APIVersion, want)
		}
		if c.Spec.Target.Kind != parts[2] {
			return fmt.Errorf("customization %q: target kind %s does not match the directory (%s)", c.Name, c.Spec.Target.Kind, parts[2])
		}
	}
	return nil
}

// layoutKind is the <group>/<version>/<Kind> part of a customization's
// folder: its path below root when root is the layout's root; the last
// three parts of it when root is a folder above the layout's root (one
// holding several layouts, or a repository); and the last three parts of
// its absolute path when root is inside the layout (a group, version or
// kind folder).
func layoutKind(root, kindDir string) string {
	rel := relPath(root, kindDir)
	parts := strings.Split(rel, "/")
	if rel == "." {
		parts = nil
	}
	switch {
	case len(parts) > 3:
		return strings.Join(parts[len(parts)-3:], "/")
	case len(parts) < 3:
		if abs, err := filepath.Abs(kindDir); err == nil {
			if all := strings.Split(filepath.ToSlash(abs), "/"); len(all) >= 3 {
				return strings.Join(all[len(all)-3:], "/")
			}
		}
	}
	return rel
}

// relPath is path relative to root, with slashes, for stable messages.
func relPath(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(path)
}
