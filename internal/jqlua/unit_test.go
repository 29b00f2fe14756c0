package jqlua

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// load builds a unit of exprs, loads it on the portable runtime in a
// fresh Karmada-like state, closed with the test, and returns the state
// and the accessors in Add order.
func load(t *testing.T, exprs ...string) (*portableState, []lua.LValue) {
	t.Helper()
	u := NewPortableUnit()
	for _, e := range exprs {
		_, err := u.Add(e)
		require.NoError(t, err, e)
	}
	p, err := loadPortable(context.Background(), u)
	require.NoError(t, err)
	t.Cleanup(p.L.Close)
	accs := make([]lua.LValue, len(u.accessors))
	for i := range accs {
		accs[i] = p.Q.RawGetInt(i + 1)
	}
	return p, accs
}

func TestUnitSharesIdenticalExpressions(t *testing.T) {
	u := NewPortableUnit()
	a, err := u.Add(".spec.replicas")
	require.NoError(t, err)
	b, err := u.Add(".spec.template")
	require.NoError(t, err)
	c, err := u.Add(".spec.replicas")
	require.NoError(t, err)
	assert.Equal(t, "Q[1]", a)
	assert.Equal(t, "Q[2]", b)
	assert.Equal(t, a, c)
	_, err = u.Add(`test("x")`)
	var np *NotPortableError
	require.ErrorAs(t, err, &np)
	assert.Len(t, u.accessors, 2, "a refused expression adds nothing")
	assert.Equal(t, 2, strings.Count(u.Lua(), " = function(v, out)"))
}

func TestUnitAddErrors(t *testing.T) {
	u := NewPortableUnit()
	for expr, want := range map[string]string{
		`.[`:        "unexpected EOF",
		`foo`:       "function not defined: foo/0",
		`$x`:        "variable not defined: $x",
		`map`:       "function not defined: map/0",
		`.a | ]`:    `unexpected token "]"`,
		`length(1)`: "function not defined: length/1",
	} {
		_, err := u.Add(expr)
		require.Error(t, err, expr)
		assert.Contains(t, err.Error(), want, expr)
	}
	assert.Empty(t, u.accessors, "a failed Add adds nothing")
}

func TestLuaIsDeterministic(t *testing.T) {
	build := func() string {
		u := NewPortableUnit()
		for _, s := range specSeeds {
			_, err := u.Add(s.expr)
			require.NoError(t, err)
		}
		return u.Lua()
	}
	assert.Equal(t, build(), build())
}

func TestUntranslatableDetection(t *testing.T) {
	untranslatable := map[string]string{
		`test("a")`:                           "function test/1",
		`.b | test("x")`:                      "function test/1",
		`reduce .[] as $x (0; . + $x)`:        "reduce",
		`foreach .[] as $x (0; . + $x)`:       "foreach",
		`. as [$a] ?// $a | $a`:               "alternative patterns (?//)",
		`. as [$a] | $a`:                      "destructuring patterns (as [...] or as {...})",
		`. as {a: $x} | $x`:                   "destructuring patterns (as [...] or as {...})",
		`.a as $x | $ENV`:                     "variables ($ENV)",
		`.a as $x | {$ENV}`:                   "variables ($ENV)",
		`$ENV as $x | $x`:                     "variables ($ENV)",
		`. as $x | test($x)`:                  "function test/1",
		`@base64`:                             "format strings (@base64)",
		`@text "\(.a)"`:                       "format strings (@text)",
		`@base32d`:                            "format strings (@base32d)",
		`splits(", ")`:                        "function splits/1",
		`any(.[]; test("a"))`:                 "function test/1",
		`join(",\(.[] | @base64)")`:           "format strings (@base64)",
		`..`:                                  "recursive descent (..)",
		`def f: 1; f`:                         "function definitions (def)",
		`label $out | 1, break $out`:          "label and break",
		`isempty(.[])`:                        "function isempty/1",
		`add(.[])`:                            "function add/1",
		`limit(1; .[])`:                       "function limit/2",
		`.a = 1`:                              "assignment (=)",
		`.a |= 1`:                             "assignment (|=)",
		`12345678901234567890`:                "a number literal beyond ±2^53",
		`"\(.a | implode)"`:                   "function implode/0",
		`{(.a | fromjson): 1}`:                "function fromjson/0",
		`.[.a | tostring | trimstr("x")]`:     "function trimstr/1",
		`if .a then keys_unsorted else . end`: "",
		`try error catch test("a")`:           "function test/1",
		`[.[] | select(. | IN(1, 2))]`:        "function IN/1",
		`{$__loc__}`:                          "",
		`getpath(["a"])`:                      "function getpath/1",
	}
	for expr, reason := range untranslatable {
		u := NewPortableUnit()
		_, err := u.Add(expr)
		var np *NotPortableError
		if !errors.As(err, &np) {
			// gojq itself rejects a few of these spellings; nothing to detect.
			assert.Empty(t, reason, "%s: %v", expr, err)
			continue
		}
		assert.Equal(t, reason, np.Reason, expr)
		assert.Empty(t, u.accessors, expr)
	}

	translated := []string{
		`.`, `.a`, `."a"`, `.["a"]`, `.[0]`, `.[-1]`, `.[1:2]`, `.[]`, `.a?`, `.[]?`, `.[0]?`,
		`.a | .b`, `.a, .b`, `.a // .b`, `(.a)`, `null`, `true`, `false`, `1.5`, `"s"`,
		`"x\(.a)y"`, `.a == 1`, `.a != 1`, `.a < 1`, `.a <= 1`, `.a > 1`, `.a >= 1`,
		`.a and .b`, `.a or .b`, `not`, `.a + 1`, `.a - 1`, `.a * 1`, `.a / 1`, `.a % 1`, `-.a`,
		`if .a then 1 elif .b then 2 else 3 end`, `if .a then 1 end`, `select(.a)`, `empty`,
		`error`, `error("x")`, `length`, `keys`, `has("a")`, `to_entries`, `map(.a)`,
		`first(.[])`, `add`, `tostring`, `tonumber`, `type`, `[.a, .b]`, `[]`, `{}`,
		`{a: 1, "b": 2, (.c): 3, d, "e"}`, `try .a catch .`, `(.a | .b)?`, `try error`,
		`any`, `all`, `any(.a)`, `all(.[]; . > 1)`, `first`, `last`, `last(.[])`, `values`, `nulls`,
		`strings`, `scalars`, `iterables`, `min`, `max`, `tojson`, `ascii_downcase`, `ascii_upcase`,
		`join(",")`, `split(",")`, `startswith("a")`, `endswith(.a)`, `ltrimstr("x")`, `rtrimstr("x")`,
		`.a as $x | $x`, `. as $x | {$x, $x: 1}`, `.a as $ENV | $ENV`, `.a as $x | "\($x)"`,
	}
	u := NewPortableUnit()
	for _, expr := range translated {
		_, err := u.Add(expr)
		require.NoError(t, err, expr)
	}
	assert.Len(t, u.accessors, len(translated))
}

// TestTooBigIsRefused: a translation that breaks a limit of the Lua
// compiler (here, 300 locals in one function: beyond Lua's 200) or
// outgrows maxLines is refused as not portable.
func TestTooBigIsRefused(t *testing.T) {
	for expr, reason := range map[string]string{
		"[" + strings.Repeat(".a + 1, ", 299) + ".a]":                     "its translation is too big",
		strings.Repeat("(.a // ", 1500) + "1" + strings.Repeat(")", 1500): "exceed 4000 lines",
	} {
		u := NewPortableUnit()
		_, err := u.Add(expr)
		var np *NotPortableError
		require.ErrorAs(t, err, &np)
		assert.Contains(t, np.Reason, reason)
		assert.Empty(t, u.accessors)
	}
}

// TestOutputsAndErrors: an accessor's outputs in order, and a jq error's
// gojq message, error(v) included.
func TestOutputsAndErrors(t *testing.T) {
	ctx := context.Background()
	p, accs := load(t, `.spec.replicatedJobs[]?.name`, `.a.b`, `2 * 4, 4 / 2, 3 / 2, 1e21`, `error({"a": 1})`)
	jobs := p.value(map[string]any{"spec": map[string]any{
		"replicatedJobs": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{}},
	}})
	assert.Equal(t, outcome{outputs: []string{`"a"`, `"b"`, "null"}}, p.outcome(ctx, accs[0], jobs, false))
	assert.Equal(t, outcome{err: "expected an object but got: array ([])"}, p.outcome(ctx, accs[1], p.value(map[string]any{"a": []any{}}), false))
	assert.Equal(t, outcome{err: `expected an object but got: string ("x")`}, p.outcome(ctx, accs[1], p.value(map[string]any{"a": "x"}), false))
	assert.Equal(t, outcome{outputs: []string{"8", "2", "1.5", "1e+21"}}, p.outcome(ctx, accs[2], p.value(nil), false))
	assert.Equal(t, outcome{err: `error: {"a":1}`}, p.outcome(ctx, accs[3], p.value(nil), false))
}

// TestDeadlinesAreNotJQErrors: an accessor that spends its time inside a
// try when the deadline passes ends with the call's deadline, not with a
// jq error the try could catch.
func TestDeadlinesAreNotJQErrors(t *testing.T) {
	p, accs := load(t, `try ([.[] | .[] | .[] | . + 1] | length) catch "caught"`)
	arr := make([]any, 200)
	for i := range arr {
		row := make([]any, 200)
		for j := range row {
			row[j] = []any{1, 2, 3, 4, 5, 6, 7, 8}
		}
		arr[i] = row
	}
	in := p.value(arr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	o := p.outcome(ctx, accs[0], in, false)
	assert.True(t, o.timedOut, "%v", o)
	assert.Empty(t, o.outputs)
	assert.Contains(t, o.err, "LUA ERROR")
}

// TestCaughtErrorsKeepCallersClosures: a try inside an accessor does not
// detach the closures of the Lua code that called it from their variables
// (gopher-lua issue #448).
func TestCaughtErrorsKeepCallersClosures(t *testing.T) {
	p, accs := load(t, `[.[] | try error(.) catch .]`)
	L := p.L
	fn, err := L.LoadString(`
		local J, acc = ...
		local n = 0
		local function inc() n = n + 1 end
		inc()
		local in_ = J.array()
		in_[1], in_[2] = "a", "b"
		local caught = J.collect(acc, in_)[1]
		inc()
		return n, caught
	`)
	require.NoError(t, err)
	require.NoError(t, L.CallByParam(lua.P{Fn: fn, NRet: 2, Protect: true}, p.J, accs[0]))
	count, caught := L.Get(-2), L.Get(-1)
	L.Pop(2)
	assert.Equal(t, lua.LNumber(2), count)
	v, err := p.goValue(caught)
	require.NoError(t, err)
	assert.Equal(t, []any{"a", "b"}, v)
}
