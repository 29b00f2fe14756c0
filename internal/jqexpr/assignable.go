package jqexpr

import (
	"fmt"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Assignable reports whether q can be used as a write location, i.e. with
// jq path(). That holds when q is built only from:
//   - identity and field, index, slice and iteration steps, with or without
//     `?` (the key and bound expressions inside brackets are free);
//   - `|` and `,`;
//   - `//` with both sides assignable, and `if` whose branches are (the
//     conditions are free; a missing else is identity);
//   - `P // D` with P assignable and D a number, boolean or null literal (a
//     default), which reads P with a default and writes P (see WritePath);
//   - first(f) with f assignable, select(...), empty and getpath(...);
//   - parentheses.
//
// Anything else, even where jq's path() would cope, is reported: the list is
// what karta's writers support. When q is not assignable, the reason names
// the first offending construct, e.g. "literal 1 is not a path".
func Assignable(q *gojq.Query) (bool, string) {
	reason := pathQuery(q)
	return reason == "", reason
}

func pathQuery(q *gojq.Query) string {
	switch {
	case q == nil:
		return "an empty expression is not a path"
	case q.Meta != nil:
		return `"module" is not a path`
	case len(q.Imports) > 0:
		return `"import" is not a path`
	case len(q.FuncDefs) > 0:
		fd := q.FuncDefs[0]
		return fmt.Sprintf("function definition %q is not a path", funcKey(fd.Name, len(fd.Args)))
	case q.Term != nil:
		return pathTerm(q.Term)
	case len(q.Patterns) > 0:
		return `variable binding "as" is not a path`
	case q.Left == nil || q.Right == nil:
		// The empty program, which gojq runs as identity.
		return ""
	}
	if isDefault(q) {
		return pathQuery(q.Left)
	}
	switch q.Op {
	case gojq.OpPipe, gojq.OpComma, gojq.OpAlt:
		if r := pathQuery(q.Left); r != "" {
			return r
		}
		return pathQuery(q.Right)
	case gojq.OpAssign, gojq.OpModify, gojq.OpUpdateAdd, gojq.OpUpdateSub,
		gojq.OpUpdateMul, gojq.OpUpdateDiv, gojq.OpUpdateMod, gojq.OpUpdateAlt:
		return fmt.Sprintf("assignment %q is not a path", q.Op.String())
	default:
		return fmt.Sprintf("operator %q is not a path", q.Op.String())
	}
}

// pathTerm checks a term. Its suffixes (.a, [e], [a:b], [], ?) are all path
// steps, so only the term's own type matters.
func pathTerm(t *gojq.Term) string {
	switch t.Type {
	case gojq.TermTypeIdentity, gojq.TermTypeIndex:
		return ""
	case gojq.TermTypeQuery:
		return pathQuery(t.Query)
	case gojq.TermTypeFunc:
		return pathFunc(t.Func)
	case gojq.TermTypeIf:
		return pathIf(t.If)
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse,
		gojq.TermTypeNumber, gojq.TermTypeString:
		bare := *t
		bare.SuffixList = nil
		return fmt.Sprintf("literal %s is not a path", shorten(bare.String()))
	case gojq.TermTypeObject:
		return "object construction is not a path"
	case gojq.TermTypeArray:
		return "array construction is not a path"
	case gojq.TermTypeUnary:
		return fmt.Sprintf("unary %q is not a path", t.Unary.Op.String())
	case gojq.TermTypeFormat:
		return fmt.Sprintf("format %q is not a path", t.Format)
	case gojq.TermTypeRecurse:
		return `".." is not a path`
	case gojq.TermTypeTry:
		return `"try" is not a path`
	case gojq.TermTypeReduce:
		return `"reduce" is not a path`
	case gojq.TermTypeForeach:
		return `"foreach" is not a path`
	case gojq.TermTypeLabel:
		return `"label" is not a path`
	case gojq.TermTypeBreak:
		return `"break" is not a path`
	default:
		return "this expression is not a path"
	}
}

func pathFunc(f *gojq.Func) string {
	if f.Name != "" && f.Name[0] == '$' {
		return fmt.Sprintf("variable %q is not a path", f.Name)
	}
	switch key := funcKey(f.Name, len(f.Args)); key {
	case "empty/0", "select/1", "getpath/1":
		// select's condition and getpath's argument are values, not paths.
		return ""
	case "first/1":
		return pathQuery(f.Args[0])
	default:
		return fmt.Sprintf("function %q is not a path", key)
	}
}

func pathIf(i *gojq.If) string {
	if r := pathQuery(i.Then); r != "" {
		return r
	}
	for _, e := range i.Elif {
		if r := pathQuery(e.Then); r != "" {
			return r
		}
	}
	if i.Else == nil {
		return ""
	}
	return pathQuery(i.Else)
}

// shorten keeps reasons one line long for long literals.
func shorten(s string) string {
	const maxRunes = 40
	if r := []rune(s); len(r) > maxRunes {
		return string(r[:maxRunes-1]) + "…"
	}
	return s
}
