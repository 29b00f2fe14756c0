package jqlua

import (
	"regexp"
	"strings"
)

// rewrite is the text rewrites of an accessor, in their order: the and and
// or of locals folded first are expressions, which may fold in turn.
func rewrite(code string) string {
	return indexRuns(shortIfs(elseIfs(inlineLocals(andOrLocals(inlineLocals(unreadObjects(code)))))))
}

// indexRead is a local declared as an element of another local read by a
// literal index, what `.a[.s[1]][.s[2]]` reads its keys with.
var indexRead = regexp.MustCompile(`^local ([A-Za-z_][A-Za-z0-9_]*) = J\.index\(([A-Za-z_][A-Za-z0-9_]*), (-?[0-9]+)\)$`)

// indexRuns declares a run of such locals of one local, on consecutive
// lines of a block, in one statement: `local a, b = J.index(s, 2),
// J.index(s, 1)`. Every value is evaluated before any name is declared,
// and none reads a name of the run (their base is another local); an
// index of one value by a number raises, if at all, by that value's kind
// alone, so whatever order the values are evaluated in, the reads and the
// error are the same. A chain of computed keys (AppWrapper's podSet
// paths, up to nine keys in each of ten branches) takes a line instead of
// a line per key.
func indexRuns(code string) string {
	lines := strings.Split(code, "\n")
	var out []string
	for i := 0; i < len(lines); {
		indent, l := splitIndent(lines[i])
		m := indexRead.FindStringSubmatch(l)
		j := i + 1
		var names, values []string
		if m != nil {
			names, values = []string{m[1]}, []string{l[len("local "+m[1]+" = "):]}
			for ; j < len(lines); j++ {
				ind, next := splitIndent(lines[j])
				n := indexRead.FindStringSubmatch(next)
				if ind != indent || n == nil || n[2] != m[2] {
					break
				}
				names, values = append(names, n[1]), append(values, next[len("local "+n[1]+" = "):])
			}
		}
		if len(names) < 2 {
			out = append(out, lines[i])
			i++
			continue
		}
		out = append(out, indent+"local "+strings.Join(names, ", ")+" = "+strings.Join(values, ", "))
		i = j
	}
	return strings.Join(out, "\n")
}

// newObject is the translator's declaration of an object it builds, and
// objectStore the store of a plain value, a local or a literal, into one.
var (
	newObject   = regexp.MustCompile(`^local (obj(?:_[0-9]+)?) = J\.object\(\)$`)
	objectStore = regexp.MustCompile(`^(obj(?:_[0-9]+)?)(?:\.[A-Za-z_][A-Za-z0-9_]*|\["(?:[^"\\]|\\.)*"\]) = ([A-Za-z_][A-Za-z0-9_]*|-?[0-9][0-9.e+-]*|"(?:[^"\\]|\\.)*")$`)
	// plainObject is an object built by one constructor of plain values
	// (buildObject), plainField one of its fields and the comma after it.
	plainObject = regexp.MustCompile(`^local (obj(?:_[0-9]+)?) = J\.object_of\(\{(.*)\}\)$`)
	plainField  = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_]*|\["(?:[^"\\]|\\.)*"\]) = (?:[A-Za-z_][A-Za-z0-9_]*|-?[0-9][0-9.e+-]*|"(?:[^"\\]|\\.)*")(?:, |$)`)
)

// plainFields reports whether fields, a constructor's, are all of plain
// values: locals or literals, whose evaluation does nothing.
func plainFields(fields string) bool {
	for fields != "" {
		loc := plainField.FindStringIndex(fields)
		if loc == nil {
			return false
		}
		fields = fields[loc[1]:]
	}
	return true
}

// unreadObjects drops the objects an accessor builds and never reads:
// their declaration and their stores, when every store (or every field of
// the constructor that builds one) is of a local or a literal, whose
// evaluation does nothing. The translator builds one for
// each {…} of jq, but a later .key of it reads the value stored (the
// translator's reads), so an object that only carries values from one
// pipe to the next, {r: ., i: …} | {c: .r.spec[.i]}, is built for
// nothing: without it the accessor computes the same values and raises
// the same errors, for fewer lines and a table fewer per output.
func unreadObjects(code string) string {
	lines := strings.Split(code, "\n")
	uses := nameCounts(code)
	stores := map[string][]int{}
	decls := map[string]int{}
	for i, l := range lines {
		_, t := splitIndent(l)
		if m := newObject.FindStringSubmatch(t); m != nil {
			decls[m[1]] = i
		} else if m := plainObject.FindStringSubmatch(t); m != nil && plainFields(m[2]) {
			decls[m[1]] = i
		} else if m := objectStore.FindStringSubmatch(t); m != nil && m[2] != m[1] {
			stores[m[1]] = append(stores[m[1]], i)
		}
	}
	drop := map[int]bool{}
	for name, at := range decls {
		if uses[name] != 1+len(stores[name]) {
			continue // read, returned or emitted somewhere
		}
		drop[at] = true
		for _, i := range stores[name] {
			drop[i] = true
		}
	}
	if len(drop) == 0 {
		return code
	}
	kept := lines[:0]
	for i, l := range lines {
		if !drop[i] {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// shortIf is the longest if statement, without its indentation, that
// shortIfs writes on one line.
const shortIf = 100

// shortIfs writes an if of one simple statement, without else, on one
// line, as a `//` default is: `if x == NULL or x == false then x = 1 end`.
func shortIfs(code string) string {
	lines := strings.Split(code, "\n")
	for i := 0; i+2 < len(lines); i++ {
		indent, l := splitIndent(lines[i])
		if !strings.HasPrefix(l, "if ") || !strings.HasSuffix(l, " then") || lines[i+2] != indent+"end" {
			continue
		}
		body, ok := strings.CutPrefix(lines[i+1], indent+"  ")
		if !ok || body == "" || body[0] == ' ' || len(l)+len(body)+5 > shortIf || !simpleStatement(body) {
			continue
		}
		lines[i] = indent + l + " " + body + " end"
		lines = append(lines[:i+1], lines[i+3:]...)
	}
	return strings.Join(lines, "\n")
}

// simpleStatement reports whether a line is a statement that opens no
// block and is not a comment.
func simpleStatement(l string) bool {
	first, _, _ := strings.Cut(l, " ")
	switch first {
	case "if", "for", "while", "repeat", "do", "function", "local", "else", "elseif", "end", "--":
		return false
	}
	return !strings.HasPrefix(l, "--") && !strings.Contains(l, "function(")
}

// inlineLocals rewrites an accessor's Lua (its function and helpers) so
// that a local holding a call's result, declared on one line and named
// once, on the next line of the same block, is that call itself there:
//
//	local spec = J.field(v, "spec")
//	local replicas = J.field(spec, "replicas")
//
// becomes `local replicas = J.field(J.field(v, "spec"), "replicas")`.
// The call is evaluated at the same point, before anything else of its
// new line that could raise or change anything: what comes before it
// there is only the line's head (an assignment's target, `return`, `if`)
// and the callees and atoms (locals, literals) of the calls it is an
// argument of, whose evaluation does nothing. So the outputs and which
// error wins are unchanged, for the bytes and the register of a local:
// an exported chunk carries hundreds of such locals.
//
// The translator names every local of an accessor once (names.fresh), so
// counting a name's occurrences outside string literals and field names
// finds all its uses.
func inlineLocals(code string) string {
	lines := strings.Split(code, "\n")
	uses := nameCounts(code)
	for i := 0; i+1 < len(lines); i++ {
		indent, decl := splitIndent(lines[i])
		m := localCall.FindStringSubmatch(decl)
		if m == nil || uses[m[1]] != 2 {
			continue
		}
		nextIndent, next := splitIndent(lines[i+1])
		if nextIndent != indent {
			continue
		}
		at, ok := soleUse(next, m[1])
		if !ok || !pureHead(next[:at]) {
			continue
		}
		// An operand must be a call (its own parentheses); a whole right
		// side or condition may be any expression.
		whole := next[at+len(m[1]):] == "" && wholeHead.MatchString(next[:at]) ||
			next[:at] == "if " && next[at+len(m[1]):] == " then" ||
			fieldSlot.MatchString(next[:at]) && fieldRest.MatchString(next[at+len(m[1]):])
		if !whole && !wholeCall(m[2]) {
			continue
		}
		lines[i+1] = nextIndent + next[:at] + m[2] + next[at+len(m[1]):]
		lines = append(lines[:i], lines[i+1:]...)
		i-- // the merged line may go into the next in turn
		if i < -1 {
			i = -1
		}
	}
	return strings.Join(lines, "\n")
}

// elseIfs rewrites each else whose block is one if statement alone,
//
//	else
//	  if c then
//	    …
//	  end
//	end
//
// as the elseif it is (`elseif c then`, its block one level shallower):
// the same statements, evaluated in the same order, with one end and a
// level of indentation fewer. An else whose block is `-- empty` (jq's
// empty: nothing) is left out. The translator writes an if's else (an elif,
// or the other branch of //) as a nested block.
func elseIfs(code string) string {
	lines := strings.Split(code, "\n")
	for i := 0; i+1 < len(lines); i++ {
		indent, l := splitIndent(lines[i])
		if l != "else" {
			continue
		}
		inner := indent + "  "
		if i+2 < len(lines) && lines[i+1] == inner+"-- empty" && lines[i+2] == indent+"end" {
			// An else that outputs nothing (jq's empty) is no else.
			lines = append(lines[:i], lines[i+2:]...)
			continue
		}
		nextIndent, next := splitIndent(lines[i+1])
		if nextIndent != inner || !strings.HasPrefix(next, "if ") || !strings.HasSuffix(next, " then") {
			continue
		}
		// The inner if's end, at its indent: nothing but its own elseif
		// and else may come there before it.
		end := -1
		for j := i + 2; j < len(lines); j++ {
			ji, jl := splitIndent(lines[j])
			if len(ji) > len(inner) {
				continue
			}
			if ji == inner && (jl == "else" || strings.HasPrefix(jl, "elseif ")) {
				continue
			}
			if ji == inner && jl == "end" {
				end = j
			}
			break
		}
		if end < 0 || end+1 >= len(lines) || lines[end+1] != indent+"end" {
			continue
		}
		lines[i] = indent + "else" + next
		for j := i + 2; j < end; j++ {
			lines[j] = lines[j][2:]
		}
		lines = append(lines[:end], lines[end+1:]...)
		lines = append(lines[:i+1], lines[i+2:]...)
		i-- // the new elseif's own else may be one in turn
		if i < -1 {
			i = -1
		}
	}
	return strings.Join(lines, "\n")
}

// andOrLocals writes the boolean a jq and or or computes into a local,
//
//	local b = false        local b = true
//	if c then              if f then
//	  b = e                  b = e
//	end                    end
//
// as the one expression it is: `local b = c and e`, `local b = not f or
// e`. The translator writes and and or so when e takes statements; once
// they are folded into e (inlineLocals), Lua's and and or, on the boolean
// conditions the translator writes, evaluate e exactly when the if did
// and give the same boolean.
func andOrLocals(code string) string {
	lines := strings.Split(code, "\n")
	for i := 0; i+3 < len(lines); i++ {
		indent, decl := splitIndent(lines[i])
		m := boolLocal.FindStringSubmatch(decl)
		if m == nil {
			continue
		}
		cond, ok1 := strings.CutPrefix(lines[i+1], indent+"if ")
		e, ok2 := strings.CutPrefix(lines[i+2], indent+"  "+m[1]+" = ")
		if !ok1 || !ok2 || !strings.HasSuffix(cond, " then") || lines[i+3] != indent+"end" {
			continue
		}
		cond = strings.TrimSuffix(cond, " then")
		var expr string
		if m[2] == "false" {
			expr = orOperand(cond) + " and " + orOperand(e)
		} else {
			expr = negation(cond) + " or " + e
		}
		lines[i] = indent + "local " + m[1] + " = " + expr
		lines = append(lines[:i+1], lines[i+4:]...)
	}
	return strings.Join(lines, "\n")
}

// boolLocal is a local declared true or false.
var boolLocal = regexp.MustCompile(`^local ([A-Za-z_][A-Za-z0-9_]*) = (true|false)$`)

// orOperand parenthesizes an operand of and that holds an or.
func orOperand(e string) string {
	if strings.Contains(e, " or ") {
		return "(" + e + ")"
	}
	return e
}

// negation is `not c` as an operand of or: c's own operand when c is a
// negation (not x, not (…)).
func negation(c string) string {
	if rest, ok := strings.CutPrefix(c, "not "); ok {
		if isLuaIdent(rest) {
			return rest
		}
		if strings.HasPrefix(rest, "(") && wholeCall("f"+rest) {
			return rest[1 : len(rest)-1]
		}
	}
	return "not (" + c + ")"
}

// localCall is the declaration of one local holding an expression.
var localCall = regexp.MustCompile(`^local ([A-Za-z_][A-Za-z0-9_]*) = (.+)$`)

// callee is what wholeCall accepts before the call's parenthesis: a
// runtime function (J.split) or a local one, never a keyword (`function`).
var callee = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// wholeCall reports whether e is one call, f(...), whose parentheses span
// it to the end: an operand of any operator without parentheses of its
// own.
func wholeCall(e string) bool {
	open := strings.IndexByte(e, '(')
	if open <= 0 || !callee.MatchString(e[:open]) || luaKeywords[e[:open]] || !strings.HasSuffix(e, ")") {
		return false
	}
	depth := 0
	for i := open; i < len(e); i++ {
		switch c := e[i]; c {
		case '"':
			j, ok := stringEnd(e, i)
			if !ok {
				return false
			}
			i = j
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i == len(e)-1
			}
		}
	}
	return false
}

// headPattern is what may come before an inlined call on its line: an
// optional head (a local's or a field's assignment, an append to an
// array, return, if), atoms concatenated before it (`"a" .. s .. f(x)`:
// Lua evaluates the operands in order, then concatenates), then calls
// opened with atom arguments before it,
// the last maybe a constructor's (buildObject's J.object_of({…})) with
// atom fields before it.
var headPattern = regexp.MustCompile(`^(` + assignHead + `|return |if )?` +
	`(` + atomPattern + ` \.\. )*` +
	`([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?\((` + atomPattern + `, )*)*` +
	`(` + fieldsOpen + `)?$`)

// assignHead is an assignment's left side: a local's declaration, a
// local or one of its fields, or an array's next element
// (`arr[#arr + 1] = `, whose index reads a length, which does nothing).
const assignHead = `local [A-Za-z_][A-Za-z0-9_]* = |[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*|\["(?:[^"\\]|\\.)*"\])? = |` +
	`([A-Za-z_][A-Za-z0-9_]*)\[#[A-Za-z_][A-Za-z0-9_]* \+ 1\] = `

// fieldsOpen is a table constructor's opening up to a field's value:
// the fields before it of atoms, then the field's name (none in an
// array's, J.array_of({a, b})).
const fieldsOpen = `\{((` + fieldName + ` = )?` + atomPattern + `, )*(` + fieldName + ` = )?`

// fieldName is a constructor's field name: a Lua name or a string key.
const fieldName = `(?:[A-Za-z_][A-Za-z0-9_]*|\["(?:[^"\\]|\\.)*"\])`

// fieldSlot is a head that ends at a constructor field's value, and
// fieldRest what follows the value there: the slot takes any expression.
var (
	fieldSlot = regexp.MustCompile(fieldsOpen + `$`)
	fieldRest = regexp.MustCompile(`^(, |\}\))`)
)

// atomPattern is an argument whose evaluation does nothing: a local, a
// string, a number, NULL, true or false.
const atomPattern = `(?:[A-Za-z_][A-Za-z0-9_]*|"(?:[^"\\]|\\.)*"|-?[0-9][0-9.e+-]*)`

// wholeHead is the head of a line whose rest is one expression: an
// assignment's right side or a return's value.
var wholeHead = regexp.MustCompile(`^(` + assignHead + `|return )$`)

// headCallee finds the callees of a head's open calls.
var headCallee = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*)\(`)

// pureHead reports whether head, what precedes a use of a local on its
// line, evaluates nothing that could raise or change anything.
func pureHead(head string) bool {
	m := headPattern.FindStringSubmatch(head)
	if m == nil {
		return false
	}
	// The head's calls are callees, not keywords (`if not (`).
	for _, f := range headCallee.FindAllStringSubmatch(head, -1) {
		if luaKeywords[f[1]] {
			return false
		}
	}
	return true
}

// soleUse is where name occurs in line, outside strings and field names,
// when it occurs there once and not as an assignment's target.
func soleUse(line, name string) (int, bool) {
	at := -1
	ok := scanNames(line, func(i int, n string) bool {
		if n != name {
			return true
		}
		if at >= 0 {
			return false
		}
		at = i
		return true
	})
	if !ok || at < 0 {
		return 0, false
	}
	rest := strings.TrimLeft(line[at+len(name):], " ")
	if strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "==") {
		return 0, false
	}
	return at, true
}

// nameCounts counts the names of Lua source outside strings, comments and
// field names (obj.name).
func nameCounts(src string) map[string]int {
	counts := map[string]int{}
	scanNames(src, func(_ int, n string) bool { counts[n]++; return true })
	return counts
}

// scanNames calls f with each name of src and its offset, outside string
// literals, comments and field names, until f returns false; false when
// f did, or src has a string it cannot read (then nothing is inlined).
func scanNames(src string, f func(i int, name string) bool) bool {
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"' || c == '\'':
			j, ok := stringEnd(src, i)
			if !ok {
				return false
			}
			i = j
		case c == '[' && i+1 < len(src) && (src[i+1] == '[' || src[i+1] == '='):
			return false // a long string: not what the translator writes
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			if strings.HasPrefix(src[i:], "--[") {
				return false
			}
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || 'a' <= src[j] && src[j] <= 'z' || 'A' <= src[j] && src[j] <= 'Z' || '0' <= src[j] && src[j] <= '9') {
				j++
			}
			field := i > 0 && (src[i-1] == '.' || src[i-1] == ':') && !(i > 1 && src[i-2] == '.')
			if !field && !f(i, src[i:j]) {
				return false
			}
			i = j - 1
		case '0' <= c && c <= '9':
			for i+1 < len(src) && (src[i+1] == '.' || src[i+1] == '_' || 'a' <= src[i+1] && src[i+1] <= 'z' || 'A' <= src[i+1] && src[i+1] <= 'Z' || '0' <= src[i+1] && src[i+1] <= '9') {
				i++
			}
		}
	}
	return true
}

// stringEnd is the offset of the quote that closes the string literal
// opening at i.
func stringEnd(s string, i int) (int, bool) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j, true
		case '\n':
			return 0, false
		}
	}
	return 0, false
}

func splitIndent(l string) (string, string) {
	t := strings.TrimLeft(l, " ")
	return l[:len(l)-len(t)], t
}
