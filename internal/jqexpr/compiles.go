package jqexpr

import (
	"slices"
	"strings"
	"sync"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// compilesSurely reports whether gojq.Compile(q, gojq.WithVariables(vars))
// cannot fail, so that Check may leave the compilation to the first back
// end that needs the program. Compiling is a third of what checking a
// Karta costs (gojq compiles the jq definitions of builtins such as select
// at every use), and when the direct evaluator runs every path, no call
// ever needs the program.
//
// The answer is conservative: true only for the constructs whose
// compilation can fail in just two ways, an undefined function and an
// undefined variable, both decided here the way gojq decides them. It is
// false for anything else — a def, a label or break, a format, a
// destructuring pattern or ?// alternatives, $__loc__, imports — and Check
// then compiles at once, as before. Which functions exist is not a list
// kept here: isBuiltin asks gojq's compiler itself. FuzzCheck holds the
// two ways equal (the same errors, and a program whenever there are none).
func compilesSurely(q *gojq.Query, vars []string) bool {
	s := &surety{vars: slices.Clone(vars)}
	return s.query(q)
}

// surety walks a query with the variables in scope at each node.
type surety struct {
	vars []string
}

func (s *surety) query(q *gojq.Query) bool {
	if q == nil {
		return true
	}
	if q.Meta != nil || len(q.Imports) > 0 || len(q.FuncDefs) > 0 {
		return false
	}
	if q.Term != nil {
		return s.term(q.Term)
	}
	if q.Op == 0 { // an empty query: "missing query"
		return false
	}
	if len(q.Patterns) > 0 { // LEFT as $x | RIGHT
		if !s.query(q.Left) {
			return false
		}
		return s.bound(q.Patterns, q.Right)
	}
	return s.query(q.Left) && s.query(q.Right)
}

// bound walks body with the variable of patterns in scope: one plain
// `$name` only.
func (s *surety) bound(patterns []*gojq.Pattern, body ...*gojq.Query) bool {
	if len(patterns) != 1 {
		return false
	}
	p := patterns[0]
	if p.Name == "" || p.Name[0] != '$' || len(p.Array) > 0 || len(p.Object) > 0 {
		return false
	}
	n := len(s.vars)
	s.vars = append(s.vars, p.Name)
	defer func() { s.vars = s.vars[:n] }()
	for _, b := range body {
		if !s.query(b) {
			return false
		}
	}
	return true
}

func (s *surety) term(t *gojq.Term) bool {
	ok := true
	switch t.Type {
	case gojq.TermTypeIdentity, gojq.TermTypeRecurse, gojq.TermTypeNull, gojq.TermTypeTrue,
		gojq.TermTypeFalse, gojq.TermTypeNumber:
	case gojq.TermTypeIndex:
		ok = s.index(t.Index)
	case gojq.TermTypeFunc:
		ok = s.call(t.Func)
	case gojq.TermTypeObject:
		ok = s.object(t.Object)
	case gojq.TermTypeArray:
		ok = t.Array == nil || s.query(t.Array.Query)
	case gojq.TermTypeUnary:
		ok = t.Unary != nil && s.term(t.Unary.Term)
	case gojq.TermTypeString:
		ok = s.str(t.Str)
	case gojq.TermTypeIf:
		ok = s.ifTerm(t.If)
	case gojq.TermTypeTry:
		ok = t.Try != nil && s.query(t.Try.Body) && s.query(t.Try.Catch)
	case gojq.TermTypeReduce:
		r := t.Reduce
		// The start is compiled before the variable is bound.
		ok = r != nil && s.query(r.Query) && s.query(r.Start) && s.bound(r.Patterns, r.Update)
	case gojq.TermTypeForeach:
		f := t.Foreach
		ok = f != nil && s.query(f.Query) && s.query(f.Start) && s.bound(f.Patterns, f.Update, f.Extract)
	case gojq.TermTypeQuery:
		ok = s.query(t.Query)
	default: // formats, labels, breaks
		return false
	}
	if !ok {
		return false
	}
	for _, x := range t.SuffixList {
		if !s.index(x.Index) {
			return false
		}
	}
	return true
}

func (s *surety) index(ix *gojq.Index) bool {
	return ix == nil || s.str(ix.Str) && s.query(ix.Start) && s.query(ix.End)
}

func (s *surety) str(x *gojq.String) bool {
	if x == nil {
		return true
	}
	for _, q := range x.Queries {
		if !s.query(q) {
			return false
		}
	}
	return true
}

func (s *surety) ifTerm(i *gojq.If) bool {
	if i == nil || !s.query(i.Cond) || !s.query(i.Then) || !s.query(i.Else) {
		return false
	}
	for _, e := range i.Elif {
		if !s.query(e.Cond) || !s.query(e.Then) {
			return false
		}
	}
	return true
}

func (s *surety) object(o *gojq.Object) bool {
	if o == nil {
		return true
	}
	for _, kv := range o.KeyVals {
		if kv.Key != "" && kv.Key[0] == '$' && !s.variable(kv.Key) {
			return false
		}
		if !s.str(kv.KeyString) || !s.query(kv.KeyQuery) || !s.query(kv.Val) {
			return false
		}
	}
	return true
}

func (s *surety) call(f *gojq.Func) bool {
	if f == nil {
		return false
	}
	if f.Name != "" && f.Name[0] == '$' {
		return len(f.Args) == 0 && s.variable(f.Name)
	}
	if !isBuiltin(f.Name, len(f.Args)) {
		return false
	}
	for _, a := range f.Args {
		if !s.query(a) {
			return false
		}
	}
	return true
}

// variable reports whether name is bound here. $ENV is bound by gojq but
// not allowed by the walk, whose error makes Check compile anyway;
// $__loc__ is left to gojq.
func (s *surety) variable(name string) bool {
	return slices.Contains(s.vars, name)
}

// builtins remembers the name/arity pairs gojq compiles as calls. Only
// successes are stored, so the map is bounded by gojq's own builtins
// whatever names untrusted expressions call.
var builtins sync.Map

// isBuiltin reports whether gojq compiles a call of name with arity
// arguments in an expression with no defs: it compiles `name(.; …)` once
// and remembers a success. An argument's own problems are its own; the
// call is compiled the same whatever its arguments are.
func isBuiltin(name string, arity int) bool {
	if name == "" || strings.HasPrefix(name, "$") {
		return false
	}
	key := funcKey(name, arity)
	if _, ok := builtins.Load(key); ok {
		return true
	}
	src := name
	if arity > 0 {
		src += "(" + strings.TrimSuffix(strings.Repeat(".;", arity), ";") + ")"
	}
	q, err := gojq.Parse(src)
	if err != nil || q.Term == nil || q.Term.Type != gojq.TermTypeFunc || q.Term.Func.Name != name {
		return false
	}
	if _, err := gojq.Compile(q); err != nil {
		return false
	}
	builtins.Store(key, true)
	return true
}
