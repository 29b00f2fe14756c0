package jqlua

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"

	"github.com/kartalua/karta/luaapi"
)

// builtins are the functions translated to Lua, as name/arity, besides
// those translated as their definitions (desugar). Any other call
// (including a builtin at another arity) falls back to gojq.
var builtins = map[string]bool{
	"length/0": true, "keys/0": true, "to_entries/0": true, "add/0": true,
	"tostring/0": true, "tonumber/0": true, "type/0": true, "not/0": true, "empty/0": true,
	"min/0": true, "max/0": true, "tojson/0": true, "ascii_downcase/0": true, "ascii_upcase/0": true,
	"map/1": true, "first/1": true, "last/1": true, "select/1": true,
	"error/0": true, "error/1": true,
	// primitives of one argument: J.<name>(v, arg)
	"has/1": true, "join/1": true, "split/1": true, "startswith/1": true, "endswith/1": true,
	"ltrimstr/1": true, "rtrimstr/1": true,
}

// unaryPrimitives are the builtins of one argument computed by the
// primitive of the same name, and whether their result is a boolean.
var unaryPrimitives = map[string]bool{
	"has": true, "startswith": true, "endswith": true,
	"join": false, "split": false, "ltrimstr": false, "rtrimstr": false,
}

// isBuiltin reports whether f is translated.
func isBuiltin(f *gojq.Func) bool {
	if _, ok := desugar(f); ok {
		return true
	}
	return builtins[f.Name+"/"+strconv.Itoa(len(f.Args))]
}

// untranslatable returns why q is outside the translated subset, or "".
func untranslatable(q *gojq.Query) string {
	return (&scope{}).query(q)
}

// scope walks a query with the variables bound (by `as`) where each node
// is: a variable read is translated when one of them binds it, to its
// Lua local. The variables gojq binds of itself ($ENV) are not.
type scope struct {
	vars []string
	// reads, when not nil, collects the bound variables read (the
	// generator's helpers take them as parameters).
	reads map[string]bool
}

// bound reports whether name ("$x") is bound here.
func (s *scope) bound(name string) bool { return slices.Contains(s.vars, name) }

// variable is why a read of name is not translated, or "".
func (s *scope) variable(name string) string {
	if s.bound(name) {
		if s.reads != nil {
			s.reads[name] = true
		}
		return ""
	}
	return "variables (" + name + ")"
}

func (s *scope) query(q *gojq.Query) string {
	switch {
	case q == nil:
		return ""
	case q.Meta != nil || len(q.Imports) > 0:
		return "modules"
	case len(q.FuncDefs) > 0:
		return "function definitions (def)"
	case len(q.Patterns) > 0:
		return s.binding(q)
	case q.Term != nil:
		return s.term(q.Term)
	}
	switch q.Op {
	case gojq.OpPipe, gojq.OpComma, gojq.OpAlt, gojq.OpAnd, gojq.OpOr,
		gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpLe, gojq.OpGt, gojq.OpGe,
		gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod:
		return firstReason(s.query(q.Left), s.query(q.Right))
	case gojq.OpAssign, gojq.OpModify, gojq.OpUpdateAdd, gojq.OpUpdateSub,
		gojq.OpUpdateMul, gojq.OpUpdateDiv, gojq.OpUpdateMod, gojq.OpUpdateAlt:
		return "assignment (" + q.Op.String() + ")"
	}
	return "an empty query"
}

// binding is why `LEFT as $name | BODY` is not translated, or "": only
// one plain variable is (bindingName); LEFT is outside the binding's
// scope, BODY inside.
func (s *scope) binding(q *gojq.Query) string {
	name, why := bindingName(q.Patterns)
	if why != "" {
		return why
	}
	if r := s.query(q.Left); r != "" {
		return r
	}
	s.vars = append(s.vars, name)
	defer func() { s.vars = s.vars[:len(s.vars)-1] }()
	return s.query(q.Right)
}

// bindingName is the variable of a binding's patterns when they are one
// plain `$name`, else why they are not translated: a destructuring
// pattern binds from paths of its value, and `?//` retries the body with
// the next pattern on an error, neither of which the generator writes.
func bindingName(patterns []*gojq.Pattern) (string, string) {
	switch {
	case len(patterns) > 1:
		return "", "alternative patterns (?//)"
	case patterns[0].Name == "":
		return "", "destructuring patterns (as [...] or as {...})"
	}
	return patterns[0].Name, ""
}

func firstReason(reasons ...string) string {
	for _, r := range reasons {
		if r != "" {
			return r
		}
	}
	return ""
}

func (s *scope) term(t *gojq.Term) string {
	for _, x := range t.SuffixList {
		if x.Index != nil {
			if r := s.index(x.Index); r != "" {
				return r
			}
		}
	}
	switch t.Type {
	case gojq.TermTypeIdentity, gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse,
		gojq.TermTypeArray, gojq.TermTypeQuery:
	case gojq.TermTypeNumber:
		if _, ok := numberLiteral(t.Number); !ok {
			return "a number literal beyond ±2^53"
		}
	case gojq.TermTypeString:
		return s.string(t.Str)
	case gojq.TermTypeFormat:
		return "format strings (" + t.Format + ")"
	case gojq.TermTypeRecurse:
		return "recursive descent (..)"
	case gojq.TermTypeReduce:
		return "reduce"
	case gojq.TermTypeForeach:
		return "foreach"
	case gojq.TermTypeLabel, gojq.TermTypeBreak:
		return "label and break"
	case gojq.TermTypeIndex:
		return s.index(t.Index)
	case gojq.TermTypeFunc:
		if isVariable(t.Func.Name) {
			return s.variable(t.Func.Name)
		}
		if !isBuiltin(t.Func) {
			return "function " + t.Func.Name + "/" + strconv.Itoa(len(t.Func.Args))
		}
		for _, a := range t.Func.Args {
			if r := s.query(a); r != "" {
				return r
			}
		}
	case gojq.TermTypeObject:
		for _, kv := range t.Object.KeyVals {
			if isVariable(kv.Key) {
				// {$x} is {x: $x}; {$x: f} keys f by $x's value.
				if r := s.variable(kv.Key); r != "" {
					return r
				}
			}
			if kv.KeyString != nil {
				if r := s.string(kv.KeyString); r != "" {
					return r
				}
			}
			if r := firstReason(s.query(kv.KeyQuery), s.query(kv.Val)); r != "" {
				return r
			}
		}
	case gojq.TermTypeUnary:
		return s.term(t.Unary.Term)
	case gojq.TermTypeIf:
		r := firstReason(s.query(t.If.Cond), s.query(t.If.Then), s.query(t.If.Else))
		for _, e := range t.If.Elif {
			r = firstReason(r, s.query(e.Cond), s.query(e.Then))
		}
		return r
	case gojq.TermTypeTry:
		return firstReason(s.query(t.Try.Body), s.query(t.Try.Catch))
	default:
		return "term " + t.Type.GoString()
	}
	if t.Type == gojq.TermTypeArray && t.Array.Query != nil {
		return s.query(t.Array.Query)
	}
	if t.Type == gojq.TermTypeQuery {
		return s.query(t.Query)
	}
	return ""
}

// isVariable reports a variable's name ("$x") where gojq's AST holds a
// function's name or an object key.
func isVariable(name string) bool { return strings.HasPrefix(name, "$") }

func (s *scope) index(x *gojq.Index) string {
	if x.Str != nil {
		return s.string(x.Str)
	}
	return firstReason(s.query(x.Start), s.query(x.End))
}

func (s *scope) string(str *gojq.String) string {
	for _, q := range str.Queries {
		if r := s.query(q); r != "" {
			return r
		}
	}
	return ""
}

// numberLiteral is gojq's reading of a number literal (its parseNumber):
// an int when it parses as one, a float when it has a fraction or an
// exponent, ±Inf when it overflows. ok is false for an integer beyond
// ±2^53, which gojq keeps exact and a Lua number cannot.
func numberLiteral(s string) (f float64, ok bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return float64(i), i <= luaapi.MaxExactInt && i >= -luaapi.MaxExactInt
	}
	if strings.ContainsAny(s, ".eE") {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
	}
	if _, isBig := new(big.Int).SetString(s, 10); isBig {
		return 0, false
	}
	if strings.HasPrefix(s, "-") {
		return math.Inf(-1), true
	}
	return math.Inf(1), true
}

// literalNumber returns the constant value of a number term, or of a unary
// minus or plus applied directly to one: exactly the terms gojq folds at
// compile time (its Term.toNumber and Unary.toNumber). Negating the int 0
// gives 0, negating the float 0.0 gives -0.
func literalNumber(t *gojq.Term) (float64, bool) {
	if len(t.SuffixList) > 0 {
		return 0, false
	}
	switch t.Type {
	case gojq.TermTypeNumber:
		return numberLiteral(t.Number)
	case gojq.TermTypeUnary:
		u := t.Unary
		if u.Term.Type != gojq.TermTypeNumber || len(u.Term.SuffixList) > 0 {
			return 0, false
		}
		f, ok := numberLiteral(u.Term.Number)
		if !ok || u.Op != gojq.OpSub {
			return f, ok
		}
		if f == 0 && isIntLiteral(u.Term.Number) {
			return 0, true
		}
		return -f, true
	}
	return 0, false
}

// isIntLiteral reports whether gojq reads s as an int.
func isIntLiteral(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}
