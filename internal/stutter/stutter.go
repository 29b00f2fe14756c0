// Package stutter finds what an error message says twice, such as
// `karta "x": ReviseReplica: karta "x": ReviseReplica is not defined`: the
// tests of every layer that wraps errors (interpreter, karmada, the CLI)
// run their error paths through Find, so that each error names each thing
// once.
package stutter

import (
	"regexp"
	"strings"
)

// A name segment of an error: `karta "x"`, `component "worker"`, or a bare
// identifier such as a hook's name (ReviseReplica).
var (
	named = regexp.MustCompile(`^[a-z]+ "[^"]*"$`)
	ident = regexp.MustCompile(`^[A-Z][A-Za-z]+$`)
	// An identifier that opens a sentence: "ReviseReplica is not defined".
	subject = regexp.MustCompile(`^([A-Z][A-Za-z]+) `)
)

// Find returns a name msg says twice ("" when none): a `kind "name"` or an
// identifier segment (the text between ": " separators) that comes again
// as a segment or as the subject that opens a later one, or two equal
// segments in a row.
func Find(msg string) string {
	seen := map[string]bool{}
	prev := ""
	for _, seg := range strings.Split(msg, ": ") {
		if seg == prev && seg != "" {
			return seg
		}
		prev = seg
		name := ""
		switch {
		case named.MatchString(seg), ident.MatchString(seg):
			name = seg
		default:
			if m := subject.FindStringSubmatch(seg); m != nil {
				name = m[1]
			}
		}
		if name == "" {
			continue
		}
		if seen[name] {
			return name
		}
		seen[name] = true
	}
	return ""
}
