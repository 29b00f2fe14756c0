package jqexpr

import (
	"reflect"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Constant reports whether q is a jq constant: literals (null, booleans,
// numbers, strings without interpolation), arrays and objects of
// constants with literal keys, and operators over them — nothing that
// reads its input, calls a function or binds a variable. Its value is the
// same wherever it runs, so it can stand in place of a variable
// (SubstituteVariables). The reason says what is not constant.
func Constant(q *gojq.Query) (bool, string) {
	why := ""
	eachNode(reflect.ValueOf(q), func(v reflect.Value) {
		if why != "" {
			return
		}
		switch n := v.Interface().(type) {
		case *gojq.Query:
			if len(n.FuncDefs) > 0 || len(n.Patterns) > 0 {
				why = "it defines a function or binds a variable"
			}
		case *gojq.Term:
			switch n.Type {
			case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber,
				gojq.TermTypeString, gojq.TermTypeArray, gojq.TermTypeObject, gojq.TermTypeUnary, gojq.TermTypeQuery:
				if len(n.SuffixList) > 0 {
					why = "it indexes a value"
				}
			default:
				why = "it reads its input or calls a function (" + n.String() + ")"
			}
		case *gojq.String:
			if len(n.Queries) > 0 {
				why = "it interpolates a string"
			}
		case *gojq.ObjectKeyVal:
			if n.Val == nil || n.KeyQuery != nil || (n.KeyString != nil && len(n.KeyString.Queries) > 0) {
				why = "an object key or value is computed"
			}
		}
	})
	return why == "", why
}

// SubstituteVariables replaces, in q, every read of a variable in vars
// ("$name", with no arguments, and {$name}) by the parenthesised query it
// maps to, keeping the read's suffixes ($x.a → (Q).a), and returns q. A
// read of a variable the expression binds itself (`E as $name`, reduce,
// foreach, a def's `$param`) where that binding is in scope is its own,
// and stays. It changes q: callers pass a tree of their own (gojq.Parse of
// the text), never a checked Analysis's. A replacement is exact only for a
// constant query (Constant), whose value does not depend on where it runs.
func SubstituteVariables(q *gojq.Query, vars map[string]*gojq.Query) *gojq.Query {
	substitute(reflect.ValueOf(q), vars)
	return q
}

// substitute is SubstituteVariables on the nodes reachable from v, with
// vars the variables not shadowed there: a binding walks its scope with
// the names it binds left out.
func substitute(v reflect.Value, vars map[string]*gojq.Query) {
	walk := func(n any) { substitute(reflect.ValueOf(n), vars) }
	walkNodes(v, func(v reflect.Value) bool {
		switch n := v.Interface().(type) {
		case *gojq.Query:
			for _, fd := range n.FuncDefs {
				substitute(reflect.ValueOf(fd.Body), shadowed(vars, fd.Args...))
			}
			if len(n.Patterns) > 0 { // LEFT as PATTERNS | BODY
				walk(n.Left)
				walk(n.Patterns)
				substitute(reflect.ValueOf(n.Right), shadowed(vars, patternNames(n.Patterns)...))
				return false
			}
			walk(n.Term)
			walk(n.Left)
			walk(n.Right)
			return false
		case *gojq.Term:
			if n.Type == gojq.TermTypeFunc && n.Func != nil && len(n.Func.Args) == 0 {
				if r, ok := vars[n.Func.Name]; ok {
					n.Type, n.Func, n.Query = gojq.TermTypeQuery, nil, r
				}
			}
			if r := n.Reduce; r != nil { // reduce SOURCE as $x (INIT; UPDATE)
				walk(r.Query)
				walk(r.Patterns)
				walk(r.Start)
				substitute(reflect.ValueOf(r.Update), shadowed(vars, patternNames(r.Patterns)...))
				walk(n.SuffixList)
				return false
			}
			if f := n.Foreach; f != nil { // foreach SOURCE as $x (INIT; UPDATE; EXTRACT)
				walk(f.Query)
				walk(f.Patterns)
				walk(f.Start)
				inner := shadowed(vars, patternNames(f.Patterns)...)
				substitute(reflect.ValueOf(f.Update), inner)
				substitute(reflect.ValueOf(f.Extract), inner)
				walk(n.SuffixList)
				return false
			}
		case *gojq.ObjectKeyVal:
			if r, ok := vars[n.Key]; ok {
				if n.Val == nil { // {$x} is {x: $x}
					n.Key, n.Val = n.Key[1:], &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeQuery, Query: r}}
				} else { // {$x: f} keys f by $x
					n.Key, n.KeyQuery = "", r
				}
			}
		}
		return true
	})
}

// shadowed is vars without names, a copy only when one of them is there.
func shadowed(vars map[string]*gojq.Query, names ...string) map[string]*gojq.Query {
	var out map[string]*gojq.Query
	for _, name := range names {
		if _, ok := vars[name]; !ok {
			continue
		}
		if out == nil {
			out = make(map[string]*gojq.Query, len(vars))
			for k, q := range vars {
				out[k] = q
			}
		}
		delete(out, name)
	}
	if out == nil {
		return vars
	}
	return out
}

// patternNames are the variables patterns bind: `$x`, and those of a
// destructuring pattern's elements and entries ({$a}, {a: $b}, [$c]).
func patternNames(patterns []*gojq.Pattern) []string {
	var names []string
	var add func(p *gojq.Pattern)
	add = func(p *gojq.Pattern) {
		if p == nil {
			return
		}
		if p.Name != "" {
			names = append(names, p.Name)
		}
		for _, e := range p.Array {
			add(e)
		}
		for _, kv := range p.Object {
			if strings.HasPrefix(kv.Key, "$") {
				names = append(names, kv.Key)
			}
			add(kv.Val)
		}
	}
	for _, p := range patterns {
		add(p)
	}
	return names
}

// eachNode calls f with every non-nil pointer to a struct of gojq's AST
// reachable from v, parents before children (a reflective walk: it
// reaches every kind of node gojq has, including those added later).
func eachNode(v reflect.Value, f func(reflect.Value)) {
	walkNodes(v, func(v reflect.Value) bool { f(v); return true })
}

// walkNodes is eachNode where f also says whether to go on into the
// node's children (false: f has seen to them itself).
func walkNodes(v reflect.Value, f func(reflect.Value) bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct {
			return
		}
		if f(v) {
			walkNodes(v.Elem(), f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			walkNodes(v.Field(i), f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkNodes(v.Index(i), f)
		}
	}
}

// ReadsInput reports whether q may read its input: an identity or field
// step, a recursion, a format, an object shorthand ({a} is {a: .a}) or
// any function call (a function receives its input). It answers true
// whenever it cannot tell; false means q's outputs are the same on every
// input. A read through a term's suffixes ((null).a) is of the term, not
// of the input.
func ReadsInput(q *gojq.Query) bool {
	reads := false
	eachNode(reflect.ValueOf(q), func(v reflect.Value) {
		switch n := v.Interface().(type) {
		case *gojq.Term:
			switch n.Type {
			case gojq.TermTypeIdentity, gojq.TermTypeRecurse, gojq.TermTypeIndex, gojq.TermTypeFormat:
				reads = true
			case gojq.TermTypeFunc:
				if n.Func == nil || !strings.HasPrefix(n.Func.Name, "$") {
					reads = true
				}
			}
		case *gojq.ObjectKeyVal:
			if n.Val == nil {
				reads = true
			}
		}
	})
	return reads
}
