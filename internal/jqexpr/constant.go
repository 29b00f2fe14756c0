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
// ("$name", with no arguments) by the parenthesised query it maps to,
// keeping the read's suffixes ($x.a → (Q).a), and returns q. It changes q:
// callers pass a tree of their own (gojq.Parse of the text), never a
// checked Analysis's. A replacement is exact only for a constant query
// (Constant), whose value does not depend on where it runs.
func SubstituteVariables(q *gojq.Query, vars map[string]*gojq.Query) *gojq.Query {
	eachNode(reflect.ValueOf(q), func(v reflect.Value) {
		t, ok := v.Interface().(*gojq.Term)
		if !ok || t.Type != gojq.TermTypeFunc || t.Func == nil || len(t.Func.Args) > 0 {
			return
		}
		if r, ok := vars[t.Func.Name]; ok {
			t.Type, t.Func, t.Query = gojq.TermTypeQuery, nil, r
		}
	})
	return q
}

// eachNode calls f with every non-nil pointer to a struct of gojq's AST
// reachable from v, parents before children (a reflective walk: it
// reaches every kind of node gojq has, including those added later).
func eachNode(v reflect.Value, f func(reflect.Value)) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct {
			return
		}
		f(v)
		eachNode(v.Elem(), f)
	case reflect.Struct:
		for i := range v.NumField() {
			eachNode(v.Field(i), f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			eachNode(v.Index(i), f)
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
