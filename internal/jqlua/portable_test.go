package jqlua

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// functionsOf lists the names of a table's function members, sorted.
func functionsOf(tb *lua.LTable) []string {
	var names []string
	tb.ForEach(func(k, v lua.LValue) {
		if _, ok := v.(*lua.LFunction); ok {
			names = append(names, k.String())
		}
	})
	sort.Strings(names)
	return names
}

// TestRuntimeDefinesThePrimitives: the portable runtime defines exactly
// Primitives, the functions the translator may call.
func TestRuntimeDefinesThePrimitives(t *testing.T) {
	want := append([]string(nil), Primitives...)
	sort.Strings(want)

	p, err := loadPortable(context.Background(), NewPortableUnit())
	require.NoError(t, err)
	defer p.L.Close()
	assert.Equal(t, want, functionsOf(p.J), "the portable runtime")
	assert.Equal(t, []string{"kind", "message", "number", "plain"}, functionsOf(p.JX))
	for _, name := range []string{"null", "negzero"} {
		assert.NotEqual(t, lua.LNil, p.J.RawGetString(name), name)
	}
	assert.Equal(t, "-Inf", (1 / p.J.RawGetString("negzero").(lua.LNumber)).String(), "negzero is -0")
}

// TestPortableRuntimeIsPlainLua: the runtime uses nothing Karmada's
// sandbox lacks or karta's export bans.
func TestPortableRuntimeIsPlainLua(t *testing.T) {
	var code strings.Builder
	for _, line := range strings.Split(PortableRuntime, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		code.WriteString(line + "\n")
	}
	for _, banned := range []string{"setmetatable", "getmetatable", "rawset", "rawget", "gsub", "rep(", "jq(", "karta", "require", "load", "debug"} {
		assert.False(t, strings.Contains(code.String(), banned), "the portable runtime uses %s", banned)
	}
}

func TestPortableUnitRefusesWhatNeedsGojq(t *testing.T) {
	u := NewPortableUnit()
	ref, err := u.Add(`.a | ascii_downcase`)
	require.NoError(t, err)
	assert.Equal(t, "Q[1]", ref)
	for expr, reason := range map[string]string{
		`.a | test("x")`:                              "function test/1",
		`.a as [$x] | $x`:                             "destructuring patterns",
		`reduce .[] as $x (0; .)`:                     "reduce",
		`"[" + (.[] | @base64)`:                       "format strings (@base64)",
		"[" + strings.Repeat(".a + 1, ", 299) + ".a]": "its translation is too big",
	} {
		_, err := u.Add(expr)
		var np *NotPortableError
		require.ErrorAs(t, err, &np, expr)
		assert.Equal(t, expr, np.Expr)
		assert.Contains(t, np.Reason, reason, expr)
		assert.Contains(t, err.Error(), "outside the jq subset that runs without gojq")
	}
	_, err = u.Add(`.a |`)
	require.Error(t, err, "a parse error")
	assert.Len(t, u.accessors, 1)
}

// TestPortableBoundary: JX.plain leaves out nulls as Karmada's decoding
// does, and an empty table Karmada decoded reads as [] or {} as needed.
func TestPortableBoundary(t *testing.T) {
	ctx := context.Background()
	u := NewPortableUnit()
	for _, expr := range []string{`{a: null, b: [1, null, 2], c: {d: null}}`, `.[0]`, `.a`, `. + [1]`, `length`, `type`, `has(0)`} {
		_, err := u.Add(expr)
		require.NoError(t, err)
	}
	p, err := loadPortable(ctx, u)
	require.NoError(t, err)
	defer p.L.Close()

	empty := p.L.NewTable() // Karmada's [] or {}
	for i, want := range []string{"null", "null", "[1]", "0", `"object"`, "false"} {
		o := p.outcome(ctx, p.Q.RawGetInt(i+2), empty, false)
		assert.Empty(t, o.err, "accessor %d", i+2)
		assert.Equal(t, []string{want}, o.outputs, "accessor %d", i+2)
	}

	o := p.outcome(ctx, p.Q.RawGetInt(1), p.value(nil), false)
	require.Empty(t, o.err)
	assert.Equal(t, []string{`{"a":null,"b":[1,null,2],"c":{"d":null}}`}, o.outputs)
	collected := p.call(p.J.RawGetString("collect"), p.Q.RawGetInt(1), p.value(nil)).(*lua.LTable)
	plain := p.call(p.JX.RawGetString("plain"), collected.RawGetInt(1)).(*lua.LTable)
	assert.Equal(t, lua.LNil, plain.RawGetString("a"))
	b := plain.RawGetString("b").(*lua.LTable)
	assert.Equal(t, 2, b.Len(), "the null element is left out")
	assert.Equal(t, lua.LNumber(2), b.RawGetInt(2))
	assert.Equal(t, lua.LNil, plain.RawGetString("c").(*lua.LTable).RawGetString("d"))
}

// TestPortableEncodesAsGojq: the portable runtime's JSON encoder and
// gojq's Preview (what every type error shows) write what gojq writes, on
// the values where they are easiest to get wrong: floats at the bounds of
// 'e' notation and of Go's %g, which it reads the digits from; control
// bytes, DEL and quotes; and multi-byte runes where a preview is cut.
func TestPortableEncodesAsGojq(t *testing.T) {
	exprs := []string{`tojson`, `tostring`, `try ({} - .) catch .`, `try error catch .`, `[.] | tojson`}
	inputs := []string{
		`0.1`, `1e20`, `1e21`, `-1e21`, `1.5e300`, `1e-7`, `1.5e-6`, `1e-6`, `-9.99e-7`, `0.000012345`,
		`123456789.5`, `590295810358705651712`, `1e17`, `-1e17`, `5e-324`, `1.7976931348623157e308`,
		`-0.0`, `-2.5e-10`, `1e100`, `12345678.125`, `0.5`, `100`, `-7`,
		`"\u0000\u001f\u007f\"\\\b\f\n\r\t"`, `"ééééééééééééééééééééé"`, `"aaaaaaaaaaaaaaaaaaaaaaaaa€€€€€"`,
		`"aaaaaaaaaaaaaaaaaaaaaaaa😀😀😀😀"`, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"`, `"short"`, `""`,
		`["ééééééééééééé", {"b\n": 1.5e-9, "a": [true, false, null]}]`, `[[], {}, [[]]]`,
		`{"zz": 1, "a\u0001": "x", "é": {"€": 0.001}}`, `[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]`,
		`{"aaaaaaaaaaaaaaaaaaaaaaaaaaa": 1}`, `true`, `false`, `null`,
	}
	for _, expr := range exprs {
		for _, in := range inputs {
			diff, skipped, err := differ(context.Background(), expr, []byte(in))
			require.NoError(t, err, "%s on %s", expr, in)
			assert.False(t, skipped, "%s on %s", expr, in)
			assert.Empty(t, diff)
		}
	}
}
