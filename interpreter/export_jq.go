package interpreter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// The jq subset karta exports to self-contained Lua (SPEC §10.4 Export):
// the identity, field and index chains (`.a.b`, `.["k"]`, `.[0]`),
// iteration (`[]`, `[]?`), `|`, `,`, `//`, `*`, parentheses, literals
// (numbers, negative numbers, plain strings, null, true, false, [], {})
// and the functions length, select/1, not, keys, type, has/1 and first/1
// (a comma's alternatives tried in turn). Every expression becomes a
// Lua expression over a list of inputs that evaluates to the list of
// outputs, JSON null being the sentinel NULL; the helpers it calls are
// exportPrelude's. Anything else is an *ExportError naming the
// expression.

// ExportError is a Karta that cannot be exported to Karmada's runtime:
// an expression outside the exported jq subset, or a feature the export
// does not carry.
type ExportError struct {
	Karta string
	// Field names where the expression is, e.g. `component "w":
	// replicasPath`; empty for a feature.
	Field string
	// Expr is the untranslatable expression; empty for a feature.
	Expr   string
	Reason string
}

func (e *ExportError) Error() string {
	if e.Expr != "" {
		return fmt.Sprintf("karta %q: cannot export to Karmada: %s: jq %q: %s", e.Karta, e.Field, e.Expr, e.Reason)
	}
	return fmt.Sprintf("karta %q: cannot export to Karmada: %s", e.Karta, e.Reason)
}

// jqToLua translates expr; in is a Lua expression for the input list.
type jqToLua struct {
	n int // names the lambdas' parameters
}

func (t *jqToLua) translate(expr, in string) (string, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return "", err
	}
	return t.query(q, in)
}

func (t *jqToLua) query(q *gojq.Query, in string) (string, error) {
	if q.Meta != nil || len(q.Imports) > 0 || len(q.FuncDefs) > 0 || len(q.Patterns) > 0 {
		return "", fmt.Errorf("%q is outside the exported subset", q.String())
	}
	if q.Term != nil {
		return t.term(q.Term, in)
	}
	switch q.Op {
	case gojq.OpPipe:
		left, err := t.query(q.Left, in)
		if err != nil {
			return "", err
		}
		t.n++
		x := "_i" + strconv.Itoa(t.n)
		right, err := t.query(q.Right, x)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("PIPE(%s, function(%s) return %s end)", left, x, right), nil
	case gojq.OpComma, gojq.OpAlt, gojq.OpMul, gojq.OpAdd, gojq.OpSub, gojq.OpEq, gojq.OpNe, gojq.OpAnd, gojq.OpOr,
		gojq.OpGt, gojq.OpLt, gojq.OpGe, gojq.OpLe:
		left, err := t.lambda(q.Left, in)
		if err != nil {
			return "", err
		}
		right, err := t.lambda(q.Right, in)
		if err != nil {
			return "", err
		}
		fn := map[gojq.Operator]string{gojq.OpComma: "COMMA", gojq.OpAlt: "ALT", gojq.OpMul: "MUL",
			gojq.OpAdd: "ADD", gojq.OpSub: "SUB", gojq.OpEq: "EQ", gojq.OpNe: "NE", gojq.OpAnd: "AND", gojq.OpOr: "OR",
			gojq.OpGt: "GT", gojq.OpLt: "LT", gojq.OpGe: "GE", gojq.OpLe: "LE"}[q.Op]
		return fmt.Sprintf("%s(%s, %s)", fn, left, right), nil
	}
	return "", fmt.Errorf("the operator %q is outside the exported subset", q.Op.String())
}

// lambda is q as a Lua function of no arguments over in (so ALT can catch
// the errors of its left side).
func (t *jqToLua) lambda(q *gojq.Query, in string) (string, error) {
	body, err := t.query(q, in)
	if err != nil {
		return "", err
	}
	return "function() return " + body + " end", nil
}

func (t *jqToLua) term(term *gojq.Term, in string) (string, error) {
	var base string
	switch term.Type {
	case gojq.TermTypeIdentity:
		base = in
	case gojq.TermTypeIndex:
		s, err := t.index(term.Index, in, false)
		if err != nil {
			return "", err
		}
		base = s
	case gojq.TermTypeNull:
		base = "CONST(NULL)"
	case gojq.TermTypeTrue:
		base = "CONST(true)"
	case gojq.TermTypeFalse:
		base = "CONST(false)"
	case gojq.TermTypeNumber:
		f, err := strconv.ParseFloat(term.Number, 64)
		if err != nil {
			return "", fmt.Errorf("number %s: %v", term.Number, err)
		}
		base = "CONST(" + strconv.FormatFloat(f, 'g', -1, 64) + ")"
	case gojq.TermTypeString:
		if term.Str == nil || len(term.Str.Queries) > 0 {
			return "", fmt.Errorf("string interpolation is outside the exported subset")
		}
		base = "CONST(" + luaString(term.Str.Str) + ")"
	case gojq.TermTypeQuery:
		s, err := t.query(term.Query, in)
		if err != nil {
			return "", err
		}
		base = s
	case gojq.TermTypeArray:
		if term.Array.Query == nil {
			base = "CONST({})"
			break
		}
		s, err := t.query(term.Array.Query, in)
		if err != nil {
			return "", err
		}
		base = "COLLECT(" + s + ")"
	case gojq.TermTypeObject:
		if len(term.Object.KeyVals) > 0 {
			return "", fmt.Errorf("%q is outside the exported subset", term.String())
		}
		base = "CONST({})"
	case gojq.TermTypeUnary:
		u := term.Unary
		if u.Op != gojq.OpSub || u.Term.Type != gojq.TermTypeNumber || len(u.Term.SuffixList) > 0 {
			return "", fmt.Errorf("%q is outside the exported subset", term.String())
		}
		f, err := strconv.ParseFloat(u.Term.Number, 64)
		if err != nil {
			return "", fmt.Errorf("number %s: %v", u.Term.Number, err)
		}
		base = "CONST(" + strconv.FormatFloat(-f, 'g', -1, 64) + ")"
	case gojq.TermTypeIf:
		s, err := t.ifTerm(term.If.Cond, term.If.Then, term.If.Elif, term.If.Else, in)
		if err != nil {
			return "", err
		}
		base = s
	case gojq.TermTypeFunc:
		f := term.Func
		switch {
		case f.Name == "length" && len(f.Args) == 0:
			base = "LENGTH(" + in + ")"
		case f.Name == "select" && len(f.Args) == 1:
			t.n++
			x := "_i" + strconv.Itoa(t.n)
			cond, err := t.query(f.Args[0], x)
			if err != nil {
				return "", err
			}
			base = fmt.Sprintf("SELECT(%s, function(%s) return %s end)", in, x, cond)
		case f.Name == "not" && len(f.Args) == 0:
			base = "NOT(" + in + ")"
		case f.Name == "keys" && len(f.Args) == 0:
			base = "KEYS(" + in + ")"
		case f.Name == "type" && len(f.Args) == 0:
			base = "TYPE(" + in + ")"
		case f.Name == "has" && len(f.Args) == 1:
			t.n++
			x := "_i" + strconv.Itoa(t.n)
			k, err := t.query(f.Args[0], x)
			if err != nil {
				return "", err
			}
			base = fmt.Sprintf("HAS(%s, function(%s) return %s end)", in, x, k)
		case f.Name == "first" && len(f.Args) == 1:
			// first(a, b, ...) tries the alternatives of a comma in turn,
			// so that the ones after the first output are not evaluated.
			var alts []string
			t.n++
			x := "_i" + strconv.Itoa(t.n)
			var qs []*gojq.Query
			var walk func(q *gojq.Query)
			walk = func(q *gojq.Query) {
				if q.Term == nil && q.Op == gojq.OpComma && q.Meta == nil {
					walk(q.Left)
					walk(q.Right)
					return
				}
				qs = append(qs, q)
			}
			walk(f.Args[0])
			for _, q := range qs {
				s, err := t.query(q, x)
				if err != nil {
					return "", err
				}
				alts = append(alts, fmt.Sprintf("function(%s) return %s end", x, s))
			}
			base = fmt.Sprintf("FIRST(%s, {%s})", in, strings.Join(alts, ", "))
		default:
			return "", fmt.Errorf("the function %s/%d is outside the exported subset", f.Name, len(f.Args))
		}
	default:
		return "", fmt.Errorf("%q is outside the exported subset", term.String())
	}
	sufs := term.SuffixList
	for i, suf := range sufs {
		// A `?` suffix makes the step before it optional, and suppresses
		// the errors of the whole term so far (jq's try).
		opt := i+1 < len(sufs) && sufs[i+1].Optional && sufs[i+1].Index == nil && !sufs[i+1].Iter
		switch {
		case suf.Index != nil:
			s, err := t.index(suf.Index, base, opt)
			if err != nil {
				return "", err
			}
			base = s
		case suf.Iter:
			base = fmt.Sprintf("ITER(%s, %t)", base, opt)
		case suf.Optional:
			if i == 0 {
				return "", fmt.Errorf("`?` on %q is outside the exported subset", term.String())
			}
			base = "TRY(function() return " + base + " end)"
		default:
			return "", fmt.Errorf("%q is outside the exported subset", term.String())
		}
	}
	return base, nil
}

// ifTerm is if-elif-else: for each input, each output of the condition
// picks the branch (a missing else is the identity).
func (t *jqToLua) ifTerm(cond, then *gojq.Query, elifs []*gojq.IfElif, els *gojq.Query, in string) (string, error) {
	t.n++
	x := "_i" + strconv.Itoa(t.n)
	c, err := t.query(cond, x)
	if err != nil {
		return "", err
	}
	th, err := t.query(then, x)
	if err != nil {
		return "", err
	}
	var el string
	switch {
	case len(elifs) > 0:
		el, err = t.ifTerm(elifs[0].Cond, elifs[0].Then, elifs[1:], els, x)
	case els != nil:
		el, err = t.query(els, x)
	default:
		el = x
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("IF(%[1]s, function(%[2]s) return %[3]s end, function(%[2]s) return %[4]s end, function(%[2]s) return %[5]s end)", in, x, c, th, el), nil
}

func (t *jqToLua) index(ix *gojq.Index, in string, optional bool) (string, error) {
	switch {
	case ix.IsSlice || ix.End != nil:
		return "", fmt.Errorf("slices are outside the exported subset")
	case ix.Name != "":
		return fmt.Sprintf("FIELD(%s, %s, %t)", in, luaString(ix.Name), optional), nil
	case ix.Str != nil:
		if len(ix.Str.Queries) > 0 {
			return "", fmt.Errorf("string interpolation is outside the exported subset")
		}
		return fmt.Sprintf("FIELD(%s, %s, %t)", in, luaString(ix.Str.Str), optional), nil
	case ix.Start != nil && ix.Start.Term != nil && ix.Start.Term.Type == gojq.TermTypeString && len(ix.Start.Term.SuffixList) == 0:
		str := ix.Start.Term.Str
		if str == nil || len(str.Queries) > 0 {
			return "", fmt.Errorf("string interpolation is outside the exported subset")
		}
		return fmt.Sprintf("FIELD(%s, %s, %t)", in, luaString(str.Str), optional), nil
	case ix.Start != nil:
		st := ix.Start
		if st.Term == nil || st.Term.Type != gojq.TermTypeNumber || len(st.Term.SuffixList) > 0 {
			return "", fmt.Errorf("only literal array indices are in the exported subset")
		}
		n, err := strconv.Atoi(st.Term.Number)
		if err != nil || n < 0 {
			return "", fmt.Errorf("only non-negative integer indices are in the exported subset")
		}
		return fmt.Sprintf("INDEX(%s, %d, %t)", in, n, optional), nil
	}
	return "", fmt.Errorf("this index is outside the exported subset")
}
