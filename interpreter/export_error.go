package interpreter

import "fmt"

// ExportError is a Karta that cannot be exported as self-contained Lua
// to another runtime (Karmada's: package karmada; Argo CD's: package
// argo): an expression outside the exported jq subset — what only gojq
// could run, see docs/jq.md — or a feature the export does not carry.
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
