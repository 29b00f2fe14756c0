package interpreter

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kartalua/karta/internal/jqdirect"
	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karta"
)

// exprTable is a checked Karta's jq expressions as the engine uses them:
// each text's checked form (karta.Check parsed and analysed it, once) and
// its gojq program, compiled here once. Every back end — the direct
// forms, the gojq programs, the exports' Lua (internal/luaexport) — starts
// from the same checked form; no expression of the Karta is parsed again.
type exprTable struct {
	checked *karta.Checked
	progs   map[string]*jqProgram
	// segs memoizes segments while the Karta compiles: the components'
	// guards (guardedByIDs) and the prefix sharing read the same
	// expressions' chains. sharePrefixes, the last reader, drops it, so
	// that a compiled Program does not keep it.
	segs map[string][]jqdirect.Segment
}

func newExprTable(c *karta.Checked) *exprTable {
	return &exprTable{checked: c, progs: map[string]*jqProgram{}}
}

// segments is the pipe chain of the checked expression text
// (jqdirect.Segments), computed once per expression.
func (x *exprTable) segments(text string) ([]jqdirect.Segment, *jqexpr.Analysis, error) {
	a, err := x.analysis(text)
	if err != nil {
		return nil, nil, err
	}
	segs, ok := x.segs[text]
	if !ok {
		segs = jqdirect.Segments(a.Query)
		if x.segs == nil {
			x.segs = map[string][]jqdirect.Segment{}
		}
		x.segs[text] = segs
	}
	return segs, a, nil
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

// sharePrefixes splits the direct form of each program whose first pipe
// segments another program of the Karta begins with too, after the
// longest such prefix, so that a direct call evaluates the prefix once per
// object (jqdirect.Program.Share, on the form compiled already):
// AppWrapper's ids, templates and replicas derive the same podSets, Milvus' paths share their component's
// mode guard and the walk to the component's spec. A cut inside a path
// (jqdirect.Segment.Inner) saves only the walk to it, which is worth a
// shared entry when a component's worth of programs begin with it
// (minInnerShare): Milvus' thirteen fragment and scale paths below
// `.spec.components.proxy` are, two affinity paths below its `.affinity`
// are not.
func (x *exprTable) sharePrefixes() {
	type chain struct {
		p    *jqProgram
		a    *jqexpr.Analysis
		segs []jqdirect.Segment
	}
	key := func(segs []jqdirect.Segment) string {
		var b strings.Builder
		for _, sg := range segs {
			b.WriteString(sg.Text)
			b.WriteByte(0)
		}
		return b.String()
	}
	var chains []chain
	begins := map[string]int{} // how many programs begin with a prefix
	for text, p := range x.progs {
		if p.direct == nil {
			continue
		}
		segs, a, err := x.segments(text)
		if err != nil {
			continue
		}
		chains = append(chains, chain{p, a, segs})
		for k := 1; k < len(segs); k++ {
			begins[key(segs[:k])]++
		}
	}
	for _, ch := range chains {
		for k := len(ch.segs) - 1; k >= 1; k-- {
			n := begins[key(ch.segs[:k])]
			if n >= 2 && (!ch.segs[k-1].Inner || n >= minInnerShare) {
				ch.p.direct = ch.p.direct.Share(ch.a.Query, k, ch.a.Vars...)
				break
			}
		}
	}
	x.segs = nil // the last reader (see segs)
}

// minInnerShare is how many programs must begin with a prefix cut inside
// a path for them to share it (sharePrefixes): below it, looking the
// prefix up costs about what walking its keys again does.
const minInnerShare = 8

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
