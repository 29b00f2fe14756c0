package jqexpr

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// surelyCases are expressions at the edges of compilesSurely: scopes,
// undefined names, and the constructs it leaves to gojq.
var surelyCases = []struct {
	expr   string
	surely bool
}{
	{".spec.replicas // 1", true},
	{`.status.conditions[]? | select(.type == "Ready") | .status`, true},
	{`{a: .x, "b\(.y)": [.z[1:2]], (.k): 1, c}`, true},
	{". as $x | $x", true},
	{". as $x | $y", false},       // undefined: gojq says why
	{"(. as $x | 1) | $x", false}, // out of scope
	{"reduce .[] as $i (0; . + $i)", true},
	{"reduce .[] as $i ($i; .)", false}, // the start is outside the binding
	{"foreach .[] as $i (0; . + $i; [$i, .])", true},
	{"foreach .[] as $i ($i; .; .)", false},
	{"{$value}", true},
	{"{$other}", false},
	{"$value + 1", true},
	{"$__loc__", false},
	{"$ENV", false},
	{"nosuchfunction", false},
	{"select(.a; .b)", false}, // wrong arity
	{"input", false},          // defined, but gojq refuses it without inputs
	{"def f: 1; f", false},
	{"label $out | 1, break $out", false},
	{"@base64", false},
	{`@json "x\(.)"`, false},
	{". as [$a] | $a", false},
	{". as $a ?// [$a] | $a", false},
	{"try error(\"x\") catch .", true},
	{"if .a then .b elif .c then .d else .e end", true},
	{"-(.a)", true},
	{"[.[] | tostring] | join(\",\")", true},
	{"path(.a.b)", true},
	{"first(.a, .b)", true},
	{"getpath([\"a\"]) | ascii_downcase", true},
	{"..", true},
	{"", false}, // "missing query"
}

func TestCompilesSurely(t *testing.T) {
	for _, c := range surelyCases {
		t.Run(c.expr, func(t *testing.T) {
			q, err := gojq.Parse(c.expr)
			require.NoError(t, err)
			assert.Equal(t, c.surely, compilesSurely(q, []string{"$value"}))
			a, errs := Check(c.expr, "$value")
			sameAsEager(t, c.expr, []string{"$value"}, a, errs)
		})
	}
}

// An undefined name is never remembered as a builtin, whatever is asked.
func TestIsBuiltinRemembersOnlyBuiltins(t *testing.T) {
	assert.True(t, isBuiltin("select", 1))
	assert.False(t, isBuiltin("select", 2))
	assert.False(t, isBuiltin("input", 0))
	for i := range 100 {
		assert.False(t, isBuiltin(fmt.Sprintf("undefined%d", i), 0))
	}
	n := 0
	builtins.Range(func(k, _ any) bool {
		n++
		assert.NotContains(t, k, "undefined")
		return true
	})
	assert.Positive(t, n)
}

// sameAsEager requires Check's answer for expr (a, errs) to be what
// compiling at once gives: the same problems, and a program exactly when
// there are none or only the walk's.
func sameAsEager(t *testing.T, expr string, vars []string, a *Analysis, errs []error) {
	t.Helper()
	q, perr := gojq.Parse(expr)
	if perr != nil {
		return // parse errors do not reach the compiler
	}
	var want []string
	code, cerr := gojq.Compile(q, gojq.WithVariables(varNames(vars)))
	if cerr != nil {
		want = append(want, cerr.Error())
	}
	for _, e := range walk(expr, q) {
		want = append(want, e.Error())
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("%q: Check gave %q, compiling at once %q", expr, got, want)
	}
	if (code != nil) != (a.Code() != nil) {
		t.Fatalf("%q: Check's program %v, compiling at once %v", expr, a.Code() != nil, code != nil)
	}
}
