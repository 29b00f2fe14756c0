package interpreter

import (
	"fmt"

	"github.com/kartalua/karta/internal/jqlua"

	"github.com/kartalua/karta/internal/jqexpr"
)

// The Karmada export translates every jq expression of a Karta with
// jqlua's translator into accessors for jqlua's portable runtime, which
// the exported chunk carries (docs/jq.md, "the jq subset and its back
// ends"). An expression outside the translated subset, which only gojq
// could run, is an *ExportError naming the expression.

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
	// Target is what the export is for; empty means Karmada.
	Target string
}

func (e *ExportError) Error() string {
	target := e.Target
	if target == "" {
		target = "Karmada"
	}
	if e.Expr != "" {
		return fmt.Sprintf("karta %q: cannot export to %s: %s: jq %q: %s", e.Karta, target, e.Field, e.Expr, e.Reason)
	}
	return fmt.Sprintf("karta %q: cannot export to %s: %s", e.Karta, target, e.Reason)
}

// KarmadaExportCheck is a karta.ValidateOptions.CheckExpr that reports an
// expression the Karmada export cannot carry, and why: the same
// translation the export runs.
func KarmadaExportCheck(a *jqexpr.Analysis) string {
	if _, err := jqlua.NewPortableUnit().AddQuery(a.Text, a.Query); err != nil {
		return fmt.Sprintf("cannot be exported to Karmada: jq %q: %v", a.Text, err)
	}
	return ""
}
