package karta

import (
	"errors"

	"github.com/kartalua/karta/internal/jqexpr"
)

// ErrNoKarta is the error of an entry point given a nil Karta (or a nil
// Checked) instead of one: a caller's bug, reported rather than a panic.
var ErrNoKarta = errors.New("no Karta (nil)")

// Checked is a Karta that passed validation, in the form compilation
// starts from: every jq expression it holds parsed and analysed once, and
// the warnings validation found. Nothing after Check parses an expression
// of the Karta again (cel-go's Env.Compile → Ast → Program has the same
// shape: Check is the Ast step).
// +kubebuilder:object:generate=false
type Checked struct {
	// Karta is the checked Karta. It must not be changed afterwards.
	Karta *Karta
	// Warnings are validation's warnings; a Checked has no errors.
	Warnings Problems
	exprs    map[string]*jqexpr.Analysis
	// refExprs are the references' own expressions, checked without
	// variables (they run before any reference is resolved).
	refExprs map[string]*jqexpr.Analysis
}

// Check validates k with opts and returns its checked form, or a
// *ValidationError listing every error (warnings included). A nil k is
// ErrNoKarta.
func Check(k *Karta, opts ValidateOptions) (*Checked, error) {
	if k == nil {
		return nil, ErrNoKarta
	}
	c, problems := Analyze(k, opts)
	if err := problems.ErrFor(k.Name); err != nil {
		return nil, err
	}
	return c, nil
}

// Analyze is Check for a Karta that may be broken (tools that show what
// they can of it, and tests of the parts): it returns the checked form and
// every problem, errors too. An expression with a problem is absent from
// the checked form. A nil Karta has no checked form.
func Analyze(k *Karta, opts ValidateOptions) (*Checked, Problems) {
	if k == nil {
		return nil, Problems{{Severity: SeverityError, Message: "no Karta to validate"}}
	}
	v := newValidator(k, opts)
	v.run()
	c := &Checked{Karta: k, Warnings: v.problems.Warnings(), exprs: map[string]*jqexpr.Analysis{}, refExprs: v.refExprs}
	for text, r := range v.exprs {
		if r.analysis != nil {
			c.exprs[text] = r.analysis
		}
	}
	return c, v.problems
}

// Expr is the checked form of one jq expression of a Karta: parsed,
// bounded by the source limits and analysed once, by Check; String is its
// text. Package interpreter compiles it and karta/schemacheck walks it over
// a CRD's schema (they read the analysis behind it, internal/jqexpr's);
// to anyone else it is the expression as checked.
//
// +kubebuilder:object:generate=false
type Expr interface {
	String() string
}

// Expr returns the checked form of one of the Karta's expressions, by its
// text; nil when the Karta holds no such expression (or c is nil).
func (c *Checked) Expr(text string) Expr {
	if c == nil {
		return nil
	}
	if a, ok := c.exprs[text]; ok {
		return a
	}
	return nil
}

// ReferenceExpr returns the checked form of one of the references' own
// expressions (spec.references[*].lookup.name, …), bound to no variable;
// nil when no reference holds it.
func (c *Checked) ReferenceExpr(text string) Expr {
	if c == nil {
		return nil
	}
	if a, ok := c.refExprs[text]; ok {
		return a
	}
	return nil
}
