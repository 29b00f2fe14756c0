// Package jqvars carries the values of a call's jq variables (a Karta's
// resolved references) in its context, from the hook that resolved them
// to every back end that runs an expression with variables: gojq
// programs in Go, and through jqdirect.Scratch.Vars the direct evaluator.
package jqvars

import "context"

type key struct{}

// With returns ctx carrying vals, in the order of the variables the
// call's programs were compiled with.
func With(ctx context.Context, vals []any) context.Context {
	return context.WithValue(ctx, key{}, vals)
}

// From returns the values ctx carries, nil when none.
func From(ctx context.Context) []any {
	if ctx == nil {
		return nil
	}
	vals, _ := ctx.Value(key{}).([]any)
	return vals
}

// Fit returns the values ctx carries fitted to a program compiled with n
// variables (Pad).
func Fit(ctx context.Context, n int) []any { return Pad(From(ctx), n) }

// Pad returns vals cut or padded with nulls to n values.
func Pad(vals []any, n int) []any {
	if len(vals) == n {
		return vals
	}
	out := make([]any, n)
	copy(out, vals)
	return out
}
