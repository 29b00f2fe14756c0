package jqexpr

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kartalua/karta/internal/srcbound"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Analysis is the result of checking one expression: the checked form
// every back end starts from, so that no text is parsed twice.
type Analysis struct {
	// Text is the expression as written.
	Text string
	// Query is the parsed AST, nil when parsing failed. Back ends read it
	// and never change it.
	Query *gojq.Query
	// Vars are the variable names Code binds, "$"-prefixed, in order.
	Vars []string

	// code is Code's program: compiled by Check when it could fail, else
	// on the first call of Code.
	code func() *gojq.Code
}

// String is the expression's text: an Analysis is what karta.Checked hands
// out as a karta.Expr.
func (a *Analysis) String() string { return a.Text }

// Of is the Analysis behind a karta.Expr (which jqexpr cannot name: karta
// imports it); nil for nil or any other value.
func Of(e fmt.Stringer) *Analysis {
	a, _ := e.(*Analysis)
	return a
}

// OfChecked is Of for the checked form e of the expression text, which
// must be there: every expression a Karta holds is checked, so a missing
// one is a karta bug, reported as one.
func OfChecked(e fmt.Stringer, text string) (*Analysis, error) {
	a := Of(e)
	if a == nil || a.Query == nil {
		return nil, fmt.Errorf("jq %q: not among the checked Karta's expressions (a karta bug)", text)
	}
	return a, nil
}

// Code is gojq's compiled program of Query with Vars bound, nil when it
// did not compile. gojq's Code is immutable and safe for concurrent runs,
// so back ends reuse it rather than compile the query again. Check
// compiles it only when compiling could fail (to report why); otherwise
// the first call does, once, and a Karta whose expressions all run on the
// direct evaluator never does.
func (a *Analysis) Code() *gojq.Code {
	if a.code == nil {
		return nil
	}
	return a.code()
}

// Assignable reports whether the expression can be a write location (see
// the package function Assignable), and why not.
func (a *Analysis) Assignable() (bool, string) {
	if a.Query == nil {
		return false, "it does not parse"
	}
	return Assignable(a.Query)
}

// Check parses and compiles expr with gojq, so that syntax errors and
// undefined functions or variables (a bare word such as `gpu`, or `$x`)
// fail, and then runs the safety walk over the whole AST. vars names the
// variables the caller will bind when it runs the expression (e.g.
// "$value"); the leading "$" may be omitted.
//
// An expression larger or nested deeper than srcbound's defaults is refused
// before it is parsed, with a *srcbound.LimitError as the only problem.
// Otherwise it returns every problem found, each an *Error: a compile error first (gojq
// stops at its first one), then the safety findings in source order, each
// distinct message once. The Analysis is never nil; its Query is nil only when
// parsing failed, in which case the syntax error is the only problem.
func Check(expr string, vars ...string) (*Analysis, []error) {
	// gojq's parser and compiler and the safety walk recurse once per
	// level: a bounded text first (a *srcbound.LimitError).
	if err := srcbound.JQ(expr, 0, 0); err != nil {
		return &Analysis{Text: expr}, []error{err}
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		return &Analysis{Text: expr}, []error{&Error{Expr: expr, Msg: "syntax error: " + err.Error()}}
	}
	var errs []error
	a := &Analysis{Text: expr, Query: q, Vars: varNames(vars)}
	found := walk(expr, q)
	// gojq.Compile does not modify the query, so the walk sees the same
	// tree the caller gets back, and a later compilation the same tree
	// the walk saw.
	compile := func() (*gojq.Code, error) { return gojq.Compile(q, gojq.WithVariables(a.Vars)) }
	if len(found) == 0 && compilesSurely(q, a.Vars) {
		a.code = sync.OnceValue(func() *gojq.Code {
			code, err := compile()
			if err != nil { // compilesSurely was wrong: FuzzCheck's business
				return nil
			}
			return code
		})
		return a, nil
	}
	code, err := compile()
	if err != nil {
		errs = append(errs, &Error{Expr: expr, Msg: err.Error()})
	} else {
		a.code = func() *gojq.Code { return code }
	}
	return a, append(errs, found...)
}

func varNames(vars []string) []string {
	out := make([]string, len(vars))
	for i, v := range vars {
		if !strings.HasPrefix(v, "$") {
			v = "$" + v
		}
		out[i] = v
	}
	return out
}
