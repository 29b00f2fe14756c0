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

	"github.com/kartalua/karta/luaapi"
)

// load builds a unit of exprs in a fresh state and returns the state and
// the accessors in Add order.
func load(t *testing.T, exprs ...string) (*lua.LState, *Unit, []lua.LValue) {
	t.Helper()
	L := newTestState(t)
	u := NewUnit()
	for _, e := range exprs {
		_, err := u.Add(e)
		require.NoError(t, err, e)
	}
	q, err := loadUnit(L, u)
	require.NoError(t, err)
	accs := make([]lua.LValue, len(u.accessors))
	for i := range accs {
		accs[i] = q.RawGetInt(i + 1)
	}
	return L, u, accs
}

func TestUnitSharesIdenticalExpressions(t *testing.T) {
	u := NewUnit()
	a, err := u.Add(".spec.replicas")
	require.NoError(t, err)
	b, err := u.Add(`test("x")`)
	require.NoError(t, err)
	c, err := u.Add(".spec.replicas")
	require.NoError(t, err)
	d, err := u.Add(`test("x")`)
	require.NoError(t, err)
	assert.Equal(t, "Q[1]", a)
	assert.Equal(t, "Q[2]", b)
	assert.Equal(t, a, c)
	assert.Equal(t, b, d)
	tr, fb := u.Stats()
	assert.Equal(t, 1, tr)
	assert.Equal(t, 1, fb)
	assert.Len(t, u.Fallbacks(), 1)
	assert.Equal(t, 1, strings.Count(u.Lua(), "J.gojq(FALLBACK, 0, v, out)"))
}

func TestUnitAddErrors(t *testing.T) {
	u := NewUnit()
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
	tr, fb := u.Stats()
	assert.Zero(t, tr+fb, "a failed Add adds nothing")
}

func TestLuaIsDeterministic(t *testing.T) {
	build := func() string {
		u := NewUnit()
		for _, s := range specSeeds {
			_, err := u.Add(s.expr)
			require.NoError(t, err)
		}
		_, err := u.Add(`.a | test("b")`)
		require.NoError(t, err)
		return u.Lua()
	}
	assert.Equal(t, build(), build())
}

func TestFallbackDetection(t *testing.T) {
	fallbacks := map[string]string{
		`test("a")`:                           "function test/1",
		`.b | test("x")`:                      "function test/1",
		`reduce .[] as $x (0; . + $x)`:        "reduce",
		`foreach .[] as $x (0; . + $x)`:       "foreach",
		`.a as $x | $x`:                       "variable binding (as)",
		`. as [$a] ?// $a | $a`:               "variable binding (as)",
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
	for expr, reason := range fallbacks {
		u := NewUnit()
		if _, err := u.Add(expr); err != nil {
			// gojq itself rejects a few of these spellings; nothing to detect.
			assert.Empty(t, reason, "%s: %v", expr, err)
			continue
		}
		tr, fb := u.Stats()
		assert.Equal(t, 0, tr, expr)
		assert.Equal(t, 1, fb, expr)
		assert.Equal(t, reason, u.accessors[0].reason, expr)
		assert.Contains(t, u.Lua(), "-- runs on gojq: "+reason, expr)
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
	}
	u := NewUnit()
	for _, expr := range translated {
		_, err := u.Add(expr)
		require.NoError(t, err, expr)
	}
	tr, fb := u.Stats()
	assert.Equal(t, len(translated), tr)
	assert.Zero(t, fb, u.Lua())
}

func TestTooBigFallsBackAndAgrees(t *testing.T) {
	// 300 elements need 300 locals in one Lua function: beyond Lua's 200.
	expr := "[" + strings.Repeat(".a + 1, ", 299) + ".a]"
	L, u, accs := load(t, expr)
	tr, fb := u.Stats()
	require.Equal(t, 0, tr)
	require.Equal(t, 1, fb)
	assert.Contains(t, u.accessors[0].reason, "its translation is too big")
	got, err := Eval(L, accs[0], luaapi.ToLuaView(L, map[string]any{"a": 1}))
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, 300, got[0].(*lua.LUserData).Value.(*luaapi.View).Len())

	// A translation past maxLines is also abandoned.
	huge := strings.Repeat("(.a // ", 1500) + "1" + strings.Repeat(")", 1500)
	u = NewUnit()
	_, err = u.Add(huge)
	require.NoError(t, err)
	assert.Contains(t, u.accessors[0].reason, "exceed 4000 lines")
}

func TestEvalAndCollect(t *testing.T) {
	L, _, accs := load(t, `.spec.replicatedJobs[]?.name`, `.a.b`, `2 * 4, 4 / 2, 3 / 2, 1e21`)
	jobs := luaapi.ToLuaView(L, map[string]any{"spec": map[string]any{
		"replicatedJobs": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{}},
	}})
	got, err := Eval(L, accs[0], jobs)
	require.NoError(t, err)
	assert.Equal(t, []lua.LValue{lua.LString("a"), lua.LString("b"), luaapi.Null(L)}, got)

	_, err = Eval(L, accs[1], luaapi.ToLuaView(L, map[string]any{"a": []any{}}))
	var je *Error
	require.ErrorAs(t, err, &je)
	assert.Equal(t, "expected an object but got: array ([])", je.Msg)
	assert.Nil(t, je.value, "Eval hands out no value of the state")

	got, err = Eval(L, accs[2], luaapi.Null(L))
	require.NoError(t, err)
	assert.Equal(t, []lua.LValue{lua.LNumber(8), lua.LNumber(2), lua.LNumber(1.5), lua.LNumber(1e21)}, got)

	// J.collect from Lua: an array of the outputs, marked as one.
	L.SetGlobal("J", Runtime(L))
	L.SetGlobal("acc", accs[0])
	L.SetGlobal("obj", jobs)
	require.NoError(t, L.DoString(`r = J.collect(acc, obj)`))
	r := L.GetGlobal("r").(*lua.LTable)
	assert.Equal(t, 3, r.Len())
	assert.Equal(t, luaapi.KindArray, luaapi.KindOf(L, r))
	assert.Same(t, Runtime(L), Runtime(L))
}

func TestErrorsInLua(t *testing.T) {
	L, _, accs := load(t, `error({"a": 1})`, `.a.b`)
	L.OpenLibs() // pcall and tostring
	L.SetGlobal("J", Runtime(L))
	L.SetGlobal("acc", accs[0])
	L.SetGlobal("bad", accs[1])
	require.NoError(t, L.DoString(`
		local ok, e = pcall(J.collect, acc, 1)
		msg = tostring(e)
		ok2, e2 = pcall(J.collect, bad, {a = "x"})
	`))
	assert.Equal(t, lua.LString(`error: {"a":1}`), L.GetGlobal("msg"))
	je, ok := errorOf(L.GetGlobal("e2"))
	require.True(t, ok)
	assert.Equal(t, `expected an object but got: string ("x")`, je.Msg)

	err := L.DoString(`J.collect(bad, 1)`)
	je, ok = AsError(err)
	require.True(t, ok)
	assert.Equal(t, "expected an object but got: number (1)", je.Msg)
	_, ok = AsError(errors.New("plain"))
	assert.False(t, ok)
	_, ok = AsError(L.DoString(`error("lua")`))
	assert.False(t, ok, "a Lua error is not a jq error")
}

func TestTryLetsLuaErrorsThrough(t *testing.T) {
	// A Lua function inside the input is no JSON: the conversion error is a
	// Lua error, which no try may swallow.
	L, _, accs := load(t, `try (.f | tostring) catch "caught"`, `(.f | tostring)?`)
	in := L.NewTable()
	in.RawSetString("f", L.NewFunction(func(*lua.LState) int { return 0 }))
	for _, acc := range accs {
		_, err := Eval(L, acc, in)
		require.Error(t, err)
		_, isJQ := AsError(err)
		assert.False(t, isJQ)
		assert.Contains(t, err.Error(), "Lua function is not a JSON value")
	}
}

func TestDeadlinesAreNotJQErrors(t *testing.T) {
	// Both accessors spend their time inside a try (translated) or inside
	// gojq (fallback) when the deadline passes: it must surface as the
	// caller's error, not as a jq error. (That try lets non-jq errors
	// through is TestTryLetsLuaErrorsThrough: a done context would be
	// raised again at the next instruction anyway.)
	L, _, accs := load(t,
		`try ([.[] | .[] | .[] | . + 1] | length) catch "caught"`,
		`try ([.[] | .[] | .[] | . + 1] | length) catch "caught" | test("x")`)
	arr := make([]any, 200)
	for i := range arr {
		row := make([]any, 200)
		for j := range row {
			row[j] = []any{1, 2, 3, 4, 5, 6, 7, 8}
		}
		arr[i] = row
	}
	for _, acc := range accs {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		L.SetContext(ctx)
		_, err := Eval(L, acc, luaapi.ToLuaView(L, arr))
		L.RemoveContext()
		cancel()
		require.Error(t, err)
		_, isJQ := AsError(err)
		assert.False(t, isJQ, "%v", err)
		assert.Contains(t, err.Error(), "context deadline exceeded")
	}
}

func TestFallbackArgumentChecks(t *testing.T) {
	L, u, accs := load(t, `test("a")`)
	_, err := Eval(L, accs[0], lua.LString("abc"))
	require.NoError(t, err)
	L.SetGlobal("J", Runtime(L))
	L.SetGlobal("F", FallbackValue(L, u.Fallbacks()))
	for _, src := range []string{`J.gojq(F, 1, "a", {})`, `J.gojq(F, -1, "a", {})`, `J.gojq(J, 0, "a", {})`} {
		err := L.DoString(src)
		require.Error(t, err, src)
		_, isJQ := AsError(err)
		assert.False(t, isJQ, src)
	}
}

func TestCaughtErrorsKeepCallersClosures(t *testing.T) {
	// A try inside an accessor must not detach the closures of the Lua
	// code that called it from their variables (gopher-lua issue #448).
	L, _, accs := load(t, `[.[] | try error(.) catch .]`)
	L.SetGlobal("J", Runtime(L))
	L.SetGlobal("acc", accs[0])
	require.NoError(t, L.DoString(`
		local n = 0
		local function inc() n = n + 1 end
		inc()
		caught = J.collect(acc, {"a", "b"})[1]
		inc()
		count = n
	`))
	assert.Equal(t, lua.LNumber(2), L.GetGlobal("count"))
	caught := L.GetGlobal("caught").(*lua.LTable)
	assert.Equal(t, []lua.LValue{lua.LString("a"), lua.LString("b")}, []lua.LValue{caught.RawGetInt(1), caught.RawGetInt(2)})
}
