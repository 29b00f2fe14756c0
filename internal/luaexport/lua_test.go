package luaexport

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/luaapi"
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

// TestTextIs: textIs, the matcher's test without the encoder, answers
// what J.tostring(v) == want answers, for values of every kind (-0, NaN
// and the infinities included) against wants that are and are not some
// value's text.
func TestTextIs(t *testing.T) {
	values := []string{
		`0`, `-J.negzero`, `J.negzero`, `1`, `-1`, `1.5`, `1e21`, `1e-7`, `0.1`, `2^53`, `2^53 + 2`,
		`1/0`, `-1/0`, `0/0`, `true`, `false`, `NULL`, `nil`, `""`, `"0"`, `"true"`, `"null"`, `"1.0"`,
		`J.array()`, `{}`, `{1, 2}`, `{a = 1}`,
	}
	wants := []string{
		"0", "-0", "1", "-1", "1.5", "1.0", "1e+21", "1e-07", "1e-7", "0.1", "9007199254740992",
		"9007199254740994", "1.7976931348623157e+308", "-1.7976931348623157e+308", "true", "false",
		"null", "", "x", "NaN", "Inf", "[]", "{}", "[1,2]", `{"a":1}`,
	}
	var b strings.Builder
	b.WriteString(jqlua.PortablePrelude)
	for _, h := range helpers {
		if h.name == "textIs" {
			b.WriteString(h.text)
		}
	}
	b.WriteString("local out = {}\n")
	for _, v := range values {
		for _, w := range wants {
			fmt.Fprintf(&b, "do local v = %s; out[#out + 1] = tostring(J.tostring(v) == %s) .. \" \" .. tostring(%s) end\n",
				v, jqlua.LuaString(w), TextIs("v", w))
		}
	}
	b.WriteString("return table.concat(out, \"\\n\")\n")
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	proto, err := luaapi.Compile("textIs", b.String())
	require.NoError(t, err)
	res, err := luaapi.CallProtected(context.Background(), L, 10*time.Second, luaapi.Instantiate(L, proto, luaapi.NewEnv(L)), 1)
	require.NoError(t, err)
	lines := strings.Split(res[0].String(), "\n")
	require.Len(t, lines, len(values)*len(wants))
	matched := 0
	for i, l := range lines {
		v, w := values[i/len(wants)], wants[i%len(wants)]
		jq, got, _ := strings.Cut(l, " ")
		assert.Equal(t, jq, got, "J.tostring(%s) == %q", v, w)
		if jq == "true" {
			matched++
		}
	}
	assert.Greater(t, matched, len(values)/2, "most values match one of the wants")
	// Wants that only an array or object (or an infinity, or -0) has for
	// its text keep J.tostring; no other does.
	assert.Equal(t, `J.tostring(v) == "[]"`, TextIs("v", "[]"))
	assert.Equal(t, `J.tostring(v) == "-0"`, TextIs("v", "-0"))
	assert.Equal(t, `textIs(v, "1.5", 1.5)`, TextIs("v", "1.5"))
	assert.Equal(t, `textIs(v, "1.0", nil)`, TextIs("v", "1.0"))
}

// TestNumberIsToString: JX.number, which names a number instance id
// without the JSON encoder, is J.tostring of every number, the
// boundaries of gojq's encoding included.
func TestNumberIsToString(t *testing.T) {
	numbers := []string{
		`0`, `J.negzero`, `1`, `-1`, `1.5`, `-2.25`, `1e21`, `1e-7`, `1e-6`, `0.1`, `123456789.125`,
		`2^53`, `2^53 + 2`, `-(2^53)`, `1/0`, `-1/0`, `0/0`, `5e-324`, `1.7976931348623157e308`,
	}
	var b strings.Builder
	b.WriteString(jqlua.PortablePrelude)
	b.WriteString("local out = {}\n")
	for _, n := range numbers {
		fmt.Fprintf(&b, "do local v = %s; out[#out + 1] = J.tostring(v) .. \" \" .. JX.number(v) end\n", n)
	}
	b.WriteString("return table.concat(out, \"\\n\")\n")
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	proto, err := luaapi.Compile("number", b.String())
	require.NoError(t, err)
	res, err := luaapi.CallProtected(context.Background(), L, 10*time.Second, luaapi.Instantiate(L, proto, luaapi.NewEnv(L)), 1)
	require.NoError(t, err)
	lines := strings.Split(res[0].String(), "\n")
	require.Len(t, lines, len(numbers))
	for i, l := range lines {
		want, got, _ := strings.Cut(l, " ")
		assert.Equal(t, want, got, "JX.number(%s)", numbers[i])
	}
}
