package jqexpr

// Error is a problem in a jq expression.
type Error struct {
	// Expr is the expression that was checked.
	Expr string
	// Construct names the disallowed construct ("del", "..", "$ENV", "|=",
	// "f/1", "import", ...). It is empty for syntax and compile errors, which
	// gojq reports and which carry gojq's own wording.
	Construct string
	// Msg is the human-readable problem, e.g. `"del" is not allowed`.
	Msg string
}

// Error returns Msg. The expression is left out because callers already
// name the field that holds it.
func (e *Error) Error() string { return e.Msg }

// IsDisallowed reports whether the error is a safety-walk finding, as
// opposed to a syntax or compile error from gojq.
func (e *Error) IsDisallowed() bool { return e.Construct != "" }
