package jqexpr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kartalua/karta/internal/srcbound"
)

// FuzzCheck requires that Check and Assignable never panic, that every
// problem is an *Error — but a text past the source bounds, refused alone
// with a *srcbound.LimitError — and that a syntax error comes alone.
func FuzzCheck(f *testing.F) {
	for _, b := range bannedSnippets {
		for _, pos := range positions {
			f.Add(fmt.Sprintf(pos, b.snippet))
		}
	}
	for _, s := range seedExprs {
		f.Add(s)
	}
	for _, s := range surelyCases {
		f.Add(s.expr)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		a, errs := Check(expr, "$value")
		if a == nil {
			t.Fatal("nil Analysis")
		}
		sameAsEager(t, expr, []string{"$value"}, a, errs)
		// Check's contract: a text past srcbound's bounds is refused before
		// it is parsed, with a *srcbound.LimitError as the only problem;
		// every other problem is an *Error.
		var le *srcbound.LimitError
		if len(errs) == 1 && errors.As(errs[0], &le) {
			if a.Query != nil {
				t.Fatal("a text past the source bounds was parsed")
			}
			return
		}
		for _, err := range errs {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not an *Error", err)
			}
		}
		if a.Query == nil {
			if len(errs) != 1 {
				t.Fatalf("parse failure with %d errors", len(errs))
			}
			return
		}
		if ok, reason := Assignable(a.Query); ok != (reason == "") {
			t.Fatalf("Assignable = %v with reason %q", ok, reason)
		}
	})
}

// seedExprs are the remaining expressions of the table tests.
var seedExprs = []string{
	".paths", `."del"`, `.["range"]`, "{del: 1}", "{env, paths}", `"range"`, "$__loc__",
	"{$ENV}", ". as {$ENV} | 1", "gpu", "$x", "foo(1)", ".[", `"abc`, ".a | | .b",
	"def f: f; f", "def f: def g: f; g; f", "def f(x): x; def g: f(g); g",
	"def g(f): f; def f: g(f); f", `import "a" as a; .`, `include "a"; .`, "module {}; .",
	`.spec.predictor | first((.model | select(. != null)), (.[]? | select(type == "object" and has("storageUri"))), .model)`,
	".spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)",
	`select(.spec.mode == "cluster") | .spec.components.querynode.replicas`,
	".x // 1", ".a + 1", "to_entries[]", "keys[]", `getpath(["a","b"])`,
	"if .a then .b else .c end", "if .a then .b end", "empty", "-now", "@base64 \"x\\(.a)\"",
	"label $out | 1, break $out", "reduce .[] as [$a] ?// $a (0; .)", "", "def f: 1;",
}
