// Package textdiff renders the differences between an expected and an
// actual text, as the test runners (karmada test, karta test) print them.
package textdiff

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Context is how many unchanged lines a diff shows around a change.
const Context = 3

// Unified renders a unified diff from expected to actual ("-" lines are
// expected only, "+" lines actual only, Context shared lines around each
// change), without the file header: the failure names the case.
func Unified(expected, actual string) string {
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:       difflib.SplitLines(strings.TrimSuffix(expected, "\n")),
		B:       difflib.SplitLines(strings.TrimSuffix(actual, "\n")),
		Context: Context,
	})
	if err != nil {
		// Writing to a strings.Builder does not fail.
		return err.Error()
	}
	return text
}
