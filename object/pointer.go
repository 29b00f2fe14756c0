package object

import "strings"

// RFC 6901 escapes of a JSON pointer's reference tokens: one pair of
// replacers for every package that writes or reads pointers (JSON Patch
// paths, revision locations).
var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// EscapePointerToken escapes a member name for a JSON pointer: "~" is
// "~0" and "/" is "~1".
func EscapePointerToken(s string) string { return pointerEscaper.Replace(s) }

// unescapePointerToken is EscapePointerToken's inverse.
func unescapePointerToken(s string) string { return pointerUnescaper.Replace(s) }
