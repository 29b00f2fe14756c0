package karmada

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// diffContext is how many unchanged lines a diff shows around a change.
const diffContext = 3

// lineDiff renders a unified diff from expected to actual ("-" lines are
// expected only, "+" lines actual only, diffContext shared lines around
// each change), without the file header: the failure names the case.
func lineDiff(expected, actual string) string {
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:       difflib.SplitLines(strings.TrimSuffix(expected, "\n")),
		B:       difflib.SplitLines(strings.TrimSuffix(actual, "\n")),
		Context: diffContext,
	})
	if err != nil {
		// Writing to a strings.Builder does not fail.
		return err.Error()
	}
	return text
}
