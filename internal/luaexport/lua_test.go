package luaexport

import (
	"strings"

	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

func TestFieldChain(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string // nil: not a chain of constant fields
	}{
		{`.spec.replicas`, []string{"spec", "replicas"}},
		{`."spec".replicas`, []string{"spec", "replicas"}},
		{`.spec["run.ai/suspend"]`, []string{"spec", "run.ai/suspend"}},
		{`.["a"]["b"].c`, []string{"a", "b", "c"}},
		{`.a[0]`, nil},
		{`.a[]`, nil},
		{`.a?`, nil},
		{`.a["\(.x)"]`, nil},
		{`.a[1:]`, nil},
		{`.a | .b`, nil},
		{`.a // .b`, nil},
		{`.`, nil},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err, tc.expr)
		got, ok := FieldChain(q)
		assert.Equal(t, tc.want != nil, ok, tc.expr)
		assert.Equal(t, tc.want, got, tc.expr)
	}
}

func TestLiteral(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, "nil"},
		{true, "true"},
		{"a\"b\n", `"a\"b\n"`},
		{int64(3), "3"},
		{1.5, "1.5"},
		{json.Number("12"), "12"},
		{[]any{int64(1), "x"}, `{1, "x"}`},
		{map[string]any{"b": true, "a": nil}, `{["a"] = nil, ["b"] = true}`},
	} {
		got, err := Literal(tc.in)
		require.NoError(t, err, "%v", tc.in)
		assert.Equal(t, tc.want, got)
	}
	_, err := Literal(struct{}{})
	assert.Error(t, err)
}

// TestShakeHelpers: a chunk carries the helpers its body names and those
// they name, in their order, and nothing else.
func TestShakeHelpers(t *testing.T) {
	defined := func(code string) []string {
		var out []string
		for _, line := range strings.Split(shakeHelpers(code), "\n") {
			if name, ok := strings.CutPrefix(line, "local function "); ok {
				out = append(out, name[:strings.Index(name, "(")])
			} else if name, ok := strings.CutPrefix(line, "local "); ok {
				out = append(out, name[:strings.Index(name, " ")])
			}
		}
		return out
	}
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"health", "conds = conditionsOf(E[1]({W(obj)}), \"type\")\nif outputIs(E[2]({W(obj)}), \"true\") then end\nE[1] = function(ins) return run(Q[1], ins[1], \"x\") end\n",
			[]string{"W", "run", "conditionField", "conditionsOf", "outputIs"}},
		{"values", "conds = conditionsOf({V(Q[1], obj, \"conditionsDefinition.path\")}, \"type\")\nif J.tostring(V(Q[2], obj, \"x.expression\")) == \"true\" then end\n",
			[]string{"WHAT", "V", "conditionField", "conditionsOf"}},
		{"replicas and ranks", "local n = scaleValue(r[1], \"x\")\nlocal r = RANK[statusOf(member)]\n",
			[]string{"U", "tname", "scaleValue", "RANK"}},
		{"nothing", "return nil\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, defined(tc.body))
		})
	}
}
