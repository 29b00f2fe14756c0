package karmada

import (
	"fmt"
	"strings"
)

// Report is the outcome of RunTestDir.
type Report struct {
	Passed, Failed int
	// Failures are the failed cases, in the order they ran.
	Failures []*Failure
}

// Failure is one case that failed: its operation errored, a result
// differs from the expected output, or an expected key was not produced.
// A problem with a whole kind (its customizations do not load) fails each
// of its cases.
type Failure struct {
	// Kind is the kind directory, relative to the test directory
	// (apps.kruise.io/v1alpha1/CloneSet); File the test file, relative too.
	Kind, File    string
	Customization string
	Operation     string
	Case          string
	// Message says what failed; Diff, when a result differs, is a line
	// diff from the expected to the actual value ("-" expected, "+" got).
	Message string
	Diff    string
}

// String prints the failure: a heading line, the message, then the diff,
// indented.
func (f *Failure) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "FAIL %s [%s/%s] %q", f.Kind, f.Customization, f.Operation, f.Case)
	if f.File != "" {
		fmt.Fprintf(&sb, " (%s)", f.File)
	}
	sb.WriteByte('\n')
	for _, line := range strings.Split(strings.TrimRight(f.Message, "\n"), "\n") {
		sb.WriteString("    " + line + "\n")
	}
	if f.Diff != "" {
		for _, line := range strings.Split(strings.TrimRight(f.Diff, "\n"), "\n") {
			sb.WriteString("    " + line + "\n")
		}
	}
	return sb.String()
}

// Summary is the closing line: "N passed, M failed".
func (r *Report) Summary() string { return fmt.Sprintf("%d passed, %d failed", r.Passed, r.Failed) }

func (r *Report) pass() { r.Passed++ }

func (r *Report) fail(f *Failure) {
	r.Failed++
	r.Failures = append(r.Failures, f)
}
