package jqexpr

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bannedSnippets are one use of each banned construct, with the Construct
// and message Check must report for it.
var bannedSnippets = []struct{ snippet, construct string }{
	{"del(.a)", "del"},
	{`setpath(["a"]; 1)`, "setpath"},
	{`delpaths([["a"]])`, "delpaths"},
	{"paths", "paths"},
	{"paths(type == \"number\")", "paths"},
	{"leaf_paths", "leaf_paths"},
	{"recurse", "recurse"},
	{"recurse(.[]?)", "recurse"},
	{"recurse(.[]?; . != null)", "recurse"},
	{"recurse_down", "recurse_down"},
	{"walk(.)", "walk"},
	{"repeat(.)", "repeat"},
	{"range(1)", "range"},
	{"range(0; 1)", "range"},
	{"range(0; 9; 2)", "range"},
	{"until(. > 1; . + 1)", "until"},
	{"while(. < 1; . + 1)", "while"},
	{"limit(1; .[])", "limit"},
	{"input", "input"},
	{"inputs", "inputs"},
	{"env", "env"},
	{"$ENV", "$ENV"},
	{"halt", "halt"},
	{"halt_error", "halt_error"},
	{"halt_error(1)", "halt_error"},
	{"debug", "debug"},
	{`debug("x")`, "debug"},
	{"stderr", "stderr"},
	{"input_filename", "input_filename"},
	{"now", "now"},
	{"tostream", "tostream"},
	{"combinations", "combinations"},
	{"combinations(2)", "combinations"},
	{"..", ".."},
	{"_range(0; 1; 1)", "_range"},
	{"_modify(.a; 1)", "_modify"},
	{"(.a = 1)", "="},
	{"(.a |= 1)", "|="},
	{"(.a += 1)", "+="},
	{"(.a -= 1)", "-="},
	{"(.a *= 1)", "*="},
	{"(.a /= 1)", "/="},
	{"(.a %= 1)", "%="},
	{"(.a //= 1)", "//="},
}

// positions put a snippet (%[1]s) at every kind of AST position the walk
// must reach.
var positions = []string{
	"%[1]s",
	". | %[1]s",
	"%[1]s | .",
	"., %[1]s",
	"1 + %[1]s",
	".a // %[1]s",
	"%[1]s and true",
	"[%[1]s]",
	"[.[] | %[1]s]",
	"{a: %[1]s}",
	"{(%[1]s | tostring): 1}",
	`{"k\(%[1]s)": 1}`,
	"(%[1]s)",
	"((%[1]s))",
	"if %[1]s then 1 else 2 end",
	"if . then %[1]s else 2 end",
	"if . then 1 elif %[1]s then 2 else 3 end",
	"if . then 1 elif . then %[1]s else 3 end",
	"if . then 1 else %[1]s end",
	"if . then %[1]s end",
	"try %[1]s",
	"try . catch %[1]s",
	"reduce %[1]s as $x (0; .)",
	"reduce .[] as $x (%[1]s; .)",
	"reduce .[] as $x (0; %[1]s)",
	"reduce .[] as {(%[1]s | tostring): $v} (0; .)",
	"foreach %[1]s as $x (0; .)",
	"foreach .[] as $x (%[1]s; .)",
	"foreach .[] as $x (0; %[1]s)",
	"foreach .[] as $x (0; .; %[1]s)",
	"foreach .[] as [$a] ?// {(%[1]s | tostring): $a} (0; .)",
	"def f: %[1]s; f",
	"def f: def g: %[1]s; g; f",
	"def f(x): x; f(%[1]s)",
	"map(%[1]s)",
	"select(%[1]s)",
	"first(%[1]s)",
	".[%[1]s]",
	".a[%[1]s]",
	".a.b[%[1]s]?",
	".[%[1]s:]",
	".[1:%[1]s]",
	".a[%[1]s:2]",
	".a[1:%[1]s]",
	`."\(%[1]s)"`,
	`.a."\(%[1]s)"`,
	`"\(%[1]s)"`,
	`"x\(1)y\(%[1]s)z"`,
	`@text "\(%[1]s)"`,
	`@base64 "x\(%[1]s)"`,
	"label $out | %[1]s",
	"label $out | 1, %[1]s, break $out",
	"-(%[1]s)",
	"(%[1]s)?",
	"%[1]s?",
	"try (%[1]s)?",
	". as $x | %[1]s",
	"%[1]s as $x | $x",
	". as [$a] ?// $a | %[1]s",
	". as {(%[1]s | tostring): $a} ?// $a | $a",
	`. as [$a] ?// {"\(%[1]s)": $a} | $a`,
	`. as {a: {(%[1]s | tostring): $b}} | $b`,
	". as [$a] | [$a, %[1]s]",
}

func TestCheckBannedEverywhere(t *testing.T) {
	for _, b := range bannedSnippets {
		want := fmt.Sprintf("%q is not allowed", b.construct)
		if strings.HasSuffix(b.construct, "=") {
			want = fmt.Sprintf("assignment %q is not allowed", b.construct)
		}
		for _, pos := range positions {
			expr := fmt.Sprintf(pos, b.snippet)
			t.Run(expr, func(t *testing.T) {
				a, errs := Check(expr)
				require.NotNil(t, a.Query, "expression must parse: %v", errs)
				var found *Error
				for _, err := range errs {
					var e *Error
					require.True(t, errors.As(err, &e))
					assert.Equal(t, expr, e.Expr)
					if e.Construct == b.construct {
						found = e
					}
				}
				require.NotNil(t, found, "no error for %q in %v", b.construct, errs)
				assert.Equal(t, want, found.Msg)
				assert.Equal(t, want, found.Error())
				assert.True(t, found.IsDisallowed())
			})
		}
	}
}

// TestCheckUnaryMinusOnFunc covers `-f`, where the unary operand is the
// function term itself rather than a parenthesised query.
func TestCheckUnaryMinusOnFunc(t *testing.T) {
	_, errs := Check("-now")
	assert.Equal(t, []string{`"now" is not allowed`}, messages(errs))
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		expr string
		vars []string
		want []string
	}{
		// Look-alikes that must pass.
		{name: "field named like a banned function", expr: ".paths"},
		{name: "quoted field", expr: `."del"`},
		{name: "bracketed field", expr: `.["range"]`},
		{name: "object key", expr: "{del: 1}"},
		{name: "object key shorthand is a field", expr: "{env, paths}"},
		{name: "keyword object key", expr: "{if: 1, reduce: 2}"},
		{name: "string literal", expr: `"range"`},
		{name: "string mentioning a call", expr: `"del(.a) | env"`},
		{name: "nested field", expr: ".spec.env.now"},
		{name: "pattern binding named $ENV is not a read", expr: ". as {$ENV} | 1"},
		{name: "$__loc__ when bound", expr: "$__loc__", vars: []string{"$__loc__"}},
		{name: "local helper starting with underscore", expr: "def _helper: 1; _helper"},
		{name: "local parameter starting with underscore", expr: "def f(_g): _g; f(.)"},

		// Ordinary expressions: the built-in Kartas' and other allowed jq.
		{name: "byExpression", expr: `[.status.conditions[]? | select(.status == "True" and .type != "Created")] | length`},
		{name: "kserve container", expr: `.spec.predictor | first((.model | select(. != null)), (.[]? | select(type == "object" and has("storageUri"))), .model)`},
		{name: "jobset replicas", expr: "(.replicas // 1) * (.template.spec.parallelism // 1)"},
		{name: "dynamo ids", expr: ".spec.services // {} | keys[]"},
		{name: "reduce", expr: "reduce .[] as $x (0; . + $x)"},
		{name: "foreach", expr: "foreach .[] as $x (0; . + $x; [$x, .])"},
		{name: "label and break", expr: "label $out | 1, break $out"},
		{name: "format", expr: `@base64 "x\(.a)"`},
		{name: "try catch", expr: `try error("x") catch .`},
		{name: "non-recursive defs", expr: "def f: 1; def g: f + 1; g"},
		{name: "closure parameter", expr: "def f(g): g | g; f(.a)"},
		{name: "value parameter", expr: "def f($a): $a + a; f(1)"},
		{name: "different arity is not recursion", expr: "def f: 1; def f(x): f + x; f(1)"},
		{name: "parameter shadows def", expr: "def f: 1; def g(f): f; g(f)"},
		{name: "alternative destructuring", expr: ". as [$a] ?// $a | $a"},
		{name: "bound variable", expr: "$value == 1", vars: []string{"$value"}},
		{name: "bound variable without dollar", expr: "$value == 1", vars: []string{"value"}},
		{name: "several bound variables", expr: "[$a, $b]", vars: []string{"$a", "$b"}},

		// Compile and syntax errors, in gojq's words.
		{name: "undefined function", expr: "gpu", want: []string{"function not defined: gpu/0"}},
		{name: "undefined variable", expr: "$x", want: []string{"variable not defined: $x"}},
		{name: "undefined function with args", expr: "foo(1)", want: []string{"function not defined: foo/1"}},
		{name: "unbound variable without vars", expr: "$value == 1", want: []string{"variable not defined: $value"}},
		{name: "only the bound variables", expr: "[$a, $b]", vars: []string{"$a"}, want: []string{"variable not defined: $b"}},
		{name: "$__loc__ is not a gojq variable", expr: "$__loc__", want: []string{"variable not defined: $__loc__"}},
		{name: "unexpected EOF", expr: ".[", want: []string{"syntax error: unexpected EOF"}},
		{name: "unexpected token", expr: ".a | | .b", want: []string{`syntax error: unexpected token "|"`}},
		{name: "unterminated string", expr: `"abc`, want: []string{"syntax error: unterminated string literal"}},

		// Several problems at once, in source order, each message once.
		{
			name: "many problems",
			expr: "del(.a) | .. | env | (.b |= 1) | $ENV | gpu",
			want: []string{
				"function not defined: gpu/0",
				`"del" is not allowed`, `".." is not allowed`, `"env" is not allowed`,
				`assignment "|=" is not allowed`, `"$ENV" is not allowed`,
			},
		},
		{name: "same construct twice", expr: "del(.a), del(.b)", want: []string{`"del" is not allowed`}},
		{name: "compile error and ban", expr: "input", want: []string{"input(s)/0 is not allowed", `"input" is not allowed`}},
		{name: "object shorthand reads $ENV", expr: "{$ENV}", want: []string{`"$ENV" is not allowed`}},

		// Shadowing a banned name does not make it safe.
		{name: "def named like a banned function", expr: "def del: 1; .", want: []string{`"del" is not allowed`}},
		{name: "calling a def named like a banned function", expr: "def range: 1; range", want: []string{`"range" is not allowed`}},
		{name: "parameter named like a banned function", expr: "def f(env): env; f(1)", want: []string{`"env" is not allowed`}},

		// Recursion.
		{name: "direct recursion", expr: "def f: f; f", want: []string{`recursive function "f/0" is not allowed`}},
		{name: "recursion with argument", expr: "def f(x): x | f(x); f(.)", want: []string{`recursive function "f/1" is not allowed`}},
		{name: "recursion in a def that is never called", expr: "def f: f; 1", want: []string{`recursive function "f/0" is not allowed`}},
		{name: "recursion in a condition", expr: "def f: if . then f else 1 end; f", want: []string{`recursive function "f/0" is not allowed`}},
		{
			name: "mutual recursion through a nested def",
			expr: "def f: def g: f; g; f",
			want: []string{`recursive function "f/0" is not allowed (it calls itself through "g/0")`},
		},
		{name: "recursion through a closure", expr: "def f(x): x; def g: f(g); g", want: []string{`recursive function "g/0" is not allowed`}},
		{name: "a redefinition sees itself", expr: "def f: 1; def f: f + 1; f", want: []string{`recursive function "f/0" is not allowed`}},
		{name: "closure argument named like the def", expr: "def g(f): f; def f: g(f); f", want: []string{`recursive function "f/0" is not allowed`}},
		{
			name: "two recursive defs",
			expr: "def f: f; def g: g; f, g",
			want: []string{`recursive function "f/0" is not allowed`, `recursive function "g/0" is not allowed`},
		},
		{name: "recursion inside a def's body def", expr: "def f: def g: g; g; f", want: []string{`recursive function "g/0" is not allowed`}},

		// Modules.
		{name: "import", expr: `import "a" as a; .`, want: []string{`cannot load module: "a"`, `"import" is not allowed`}},
		{name: "include", expr: `include "a"; .`, want: []string{`cannot load module: "a"`, `"include" is not allowed`}},
		{name: "module directive", expr: "module {}; .", want: []string{`"module" is not allowed`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, errs := Check(tt.expr, tt.vars...)
			require.NotNil(t, a)
			assert.Equal(t, tt.want, messages(errs))
			if len(tt.want) == 0 || !strings.HasPrefix(tt.want[0], "syntax error") {
				assert.NotNil(t, a.Query)
			} else {
				assert.Nil(t, a.Query)
			}
		})
	}
}

func TestCheckErrorFields(t *testing.T) {
	_, errs := Check("gpu | del(.a)")
	require.Len(t, errs, 2)
	compile, banned := errs[0].(*Error), errs[1].(*Error)
	assert.Equal(t, &Error{Expr: "gpu | del(.a)", Msg: "function not defined: gpu/0"}, compile)
	assert.False(t, compile.IsDisallowed())
	assert.Equal(t, &Error{Expr: "gpu | del(.a)", Construct: "del", Msg: `"del" is not allowed`}, banned)

	_, errs = Check("def f: f; f | (.a |= 1)")
	require.Len(t, errs, 2)
	assert.Equal(t, "|=", errs[0].(*Error).Construct)
	assert.Equal(t, "f/0", errs[1].(*Error).Construct)
}

func messages(errs []error) []string {
	var out []string
	for _, err := range errs {
		out = append(out, err.Error())
	}
	return out
}
