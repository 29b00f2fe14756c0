package luaexport

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/jqlua"
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

// TestChunkCarriesTheHelpersItNames: a chunk carries the helpers its
// body names and those they name, in their order, and nothing else
// (Chunk's walk over helperText and the body).
func TestChunkCarriesTheHelpersItNames(t *testing.T) {
	names := map[string]bool{}
	for _, h := range helpers {
		names[h.name] = true
	}
	defined := func(body string) []string {
		var out []string
		chunk := helperText() + "function Hook()\n" + body + "end\n"
		for _, line := range strings.Split(jqlua.ShakeChunk(chunk, []string{"Hook"}), "\n") {
			name, ok := strings.CutPrefix(line, "local function ")
			if ok {
				name = name[:strings.Index(name, "(")]
			} else if name, ok = strings.CutPrefix(line, "local "); ok {
				name = name[:strings.Index(name, " ")]
			}
			if ok {
				assert.True(t, names[name] || name == "WHAT", "%s is a helper", name)
				out = append(out, name)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"health", "  conds = conditionsOf(E[1]({W(obj)}), \"type\")\n  if outputIs(E[2]({W(obj)}), \"true\") then end\n  return run(Q[1], obj, \"x\")\n",
			[]string{"W", "run", "conditionField", "conditionsOf", "outputIs"}},
		{"values", "  conds = conditionsOf({V(Q[1], obj, \"conditionsDefinition.path\")}, \"type\")\n  if J.tostring(V(Q[2], obj, \"x.expression\")) == \"true\" then end\n",
			[]string{"WHAT", "V", "conditionField", "conditionsOf"}},
		{"replicas and ranks", "  local n = scaleValue(r[1], \"x\")\n  local r = RANK[statusOf(member)]\n",
			[]string{"U", "tname", "scaleValue", "RANK"}},
		{"nothing", "  return nil\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, defined(tc.body))
		})
	}
}
