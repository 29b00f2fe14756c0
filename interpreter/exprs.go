package interpreter

import (
	"fmt"
	"slices"

	"github.com/kartalua/karta/internal/jqdirect"
	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karta"
)

// exprTable is a checked Karta's jq expressions as the engine uses them:
// each text's checked form (karta.Check parsed and analysed it, once) and
// its gojq program, compiled here once. Every back end — the direct plans,
// the generated Lua, the Go-side algorithms — starts from the same checked
// form; no expression of the Karta is parsed again.
type exprTable struct {
	checked *karta.Checked
	progs   map[string]*jqProgram
}

func newExprTable(c *karta.Checked) *exprTable {
	return &exprTable{checked: c, progs: map[string]*jqProgram{}}
}

// analysis is the checked form of text. An expression the check did not
// see is a karta bug (every path of a Karta is validated).
func (x *exprTable) analysis(text string) (*jqexpr.Analysis, error) {
	return jqexpr.OfChecked(x.checked.Expr(text), text)
}

// compile is text's program, compiled on first use.
func (x *exprTable) compile(text string) (*jqProgram, error) {
	if p, ok := x.progs[text]; ok {
		return p, nil
	}
	a, err := x.analysis(text)
	if err != nil {
		return nil, err
	}
	// The Karta's expressions are checked with its references' variables
	// bound (a.Vars), and run with their values (jqvars).
	p, err := compileAnalysis(a, a.Vars...)
	if err != nil {
		return nil, err
	}
	x.progs[text] = p
	return p, nil
}

// compileAnalysis compiles a checked expression; vars are the variable
// names bound at evaluation, in order (e.g. "$value").
func compileAnalysis(a *jqexpr.Analysis, vars ...string) (*jqProgram, error) {
	p := &jqProgram{expr: a.Text, code: a.Code}
	if !slices.Equal(a.Vars, vars) {
		code, err := gojq.Compile(a.Query, gojq.WithVariables(vars))
		if err != nil {
			return nil, fmt.Errorf("jq %q: %w", a.Text, err)
		}
		p.code = func() *gojq.Code { return code }
	}
	// The direct form reads the same variables, from the values the
	// call bound (Program.callVars); any other variable leaves it nil.
	p.direct = jqdirect.Compile(a.Query, vars...)
	return p, nil
}
