package jqlua

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kartalua/karta/luaapi"
)

// intLike reports whether f counts as a gojq int: integral, within ±2^53,
// and not -0 (the runtime's numbers, portable.lua's intLike).
func intLike(f float64) bool {
	return f == math.Trunc(f) && math.Abs(f) <= luaapi.MaxExactInt && (f != 0 || !math.Signbit(f))
}

// writer accumulates the lines of one Lua function, indented two spaces per
// level.
type writer struct {
	sb     strings.Builder
	indent int
	lines  int
}

func (w *writer) line(s string) {
	for range w.indent {
		w.sb.WriteString("  ")
	}
	w.sb.WriteString(s)
	w.sb.WriteByte('\n')
	w.lines++
}

func (w *writer) linef(format string, args ...any) { w.line(fmt.Sprintf(format, args...)) }

// open writes a line that starts a block (`if … then`, `for … do`).
func (w *writer) open(format string, args ...any) {
	w.linef(format, args...)
	w.indent++
}

// middle writes a line between two parts of a block (`else`).
func (w *writer) middle(s string) {
	w.indent--
	w.line(s)
	w.indent++
}

// close ends a block.
func (w *writer) close() {
	w.indent--
	w.line("end")
}

// luaKeywords cannot name a local or a field in dot notation.
var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true,
	"false": true, "for": true, "function": true, "goto": true, "if": true, "in": true,
	"local": true, "nil": true, "not": true, "or": true, "repeat": true, "return": true,
	"then": true, "true": true, "until": true, "while": true,
}

// shadowedNames are bound by the prelude or the accessor signature, or are
// Lua globals a reader would not expect to see redefined.
var shadowedNames = map[string]bool{
	"v": true, "out": true, "J": true, "JX": true, "NULL": true, "FALLBACK": true, "Q": true, "_": true, "self": true,
	"type": true, "tostring": true, "tonumber": true, "error": true, "select": true, "pairs": true,
	"ipairs": true, "next": true, "pcall": true, "unpack": true, "string": true, "table": true,
	"math": true, "os": true, "require": true, "print": true, "kube": true, "karta": true, "jq": true,
}

func isLuaIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// maxNameLen keeps temporaries named after long keys readable.
const maxNameLen = 24

// names hands out the local names of one accessor (its function and its
// helpers): each name once, so no local ever shadows another and a reader
// can search for a name. Temporaries are named after the key they read
// when it is a plain identifier ("replicas"), else after their role.
type names struct {
	used  map[string]bool
	order []string // the names handed out, in order (rollback)
}

// rollback forgets the names handed out after the first k, for code that
// was not written after all.
func (n *names) rollback(k int) {
	for _, name := range n.order[k:] {
		delete(n.used, name)
	}
	n.order = n.order[:k]
}

func (n *names) fresh(base string) string {
	switch {
	case !isLuaIdent(base) || len(base) > maxNameLen:
		base = "t"
	case luaKeywords[base] || shadowedNames[base]:
		base += "_"
	}
	if !n.used[base] {
		n.used[base] = true
		n.order = append(n.order, base)
		return base
	}
	for i := 2; ; i++ {
		name := base + "_" + strconv.Itoa(i)
		if !n.used[name] {
			n.used[name] = true
			n.order = append(n.order, name)
			return name
		}
	}
}

// LuaString quotes s as a Lua string literal. Printable text (UTF-8
// included) stays as it is; other bytes become decimal escapes.
func LuaString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			sb.WriteString(`\"`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == utf8.RuneError && size == 1, !unicode.IsPrint(r):
			for j := 0; j < size; j++ {
				fmt.Fprintf(&sb, `\%03d`, s[i+j])
			}
		default:
			sb.WriteString(s[i : i+size])
		}
		i += size
	}
	sb.WriteByte('"')
	return sb.String()
}

// luaNumber renders a number literal that Lua reads back to the same
// float64, int-like numbers as plain integers (and -0 as J.negzero).
func luaNumber(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "(1/0)"
	case math.IsInf(f, -1):
		return "(-1/0)"
	case math.IsNaN(f):
		return "(0/0)"
	case f == 0 && math.Signbit(f):
		// gopher-lua pools equal constants of a function, and 0 == -0: a
		// literal -0 would turn the function's 0s into -0, or itself into 0.
		return "J.negzero"
	case intLike(f):
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// LuaComment is luaComment, for an exported chunk's own comments.
func LuaComment(text string) string { return luaComment(text) }

// luaComment renders text as Lua line comments, one per line of text.
// Control characters are escaped: a carriage return would end the comment
// and let the rest of the line be read as code.
func luaComment(text string) string {
	var sb strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		sb.WriteString("--")
		if l = strings.TrimRight(l, " \t"); l != "" {
			sb.WriteByte(' ')
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; c < 0x20 && c != '\t' || c == 0x7f {
				fmt.Fprintf(&sb, "\\x%02x", c)
			} else {
				sb.WriteByte(c)
			}
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
