package luaapi

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestPatternsMatchGopherLua: find, match and gmatch over the step-counting
// matcher give what gopher-lua's own give (Karmada's scripts run on them),
// results and errors alike.
func TestPatternsMatchGopherLua(t *testing.T) {
	for _, expr := range []string{
		`string.find("hello world", "o")`,
		`string.find("hello world", "o", 6)`,
		`string.find("hello world", "o", -3)`,
		`string.find("hello world", "o", 100)`,
		`string.find("hello world", "l+")`,
		`string.find("hello world", "(o)(r)")`,
		`string.find("hello world", "()o()")`,
		`string.find("hello world", "")`,
		`string.find("hello world", "^h")`,
		`string.find("hello world", "^e")`,
		`string.find("hello world", "d$")`,
		`string.find("a.b", ".", 1, true)`,
		`string.find("a+b", "+", 1, true)`,
		`string.find("x", "[")`,
		`string.find("key=value", "(%w+)=(%w+)")`,
		`string.find("f(a(b)c)", "%b()")`,
		`string.find("abcabc", "(abc)%1")`,
		`string.match("hello world", "o")`,
		`string.match("hello world", "(o)")`,
		`string.match("hello world", "x")`,
		`string.match("  trim  ", "^%s*(.-)%s*$")`,
		`string.match("nvidia.com/gpu: 8", "([%w%.]+/%w+):%s*(%d+)")`,
		`string.match("hello", "()ll()")`,
		`string.match("hello", "l", -2)`,
		`string.match("hello", "l", -100)`,
		`string.match("registry.io/img:v1.2", "^(.*):([^:]*)$")`,
		`string.match("abc", "%")`,
		`("1Gi"):match("^(%d+)(%a*)$")`,
	} {
		want, wantErr := gopherEval(t, expr)
		got, gotErr := sandboxEval(t, expr)
		assert.Equal(t, wantErr, gotErr, expr)
		assert.Equal(t, want, got, expr)
	}
	for _, loop := range []string{
		`local out = {} for w in string.gmatch("one two  three", "%a+") do out[#out+1] = w end return table.concat(out, ",")`,
		`local out = {} for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do out[#out+1] = k .. v end return table.concat(out, ",")`,
		`local out = {} for w in string.gmatch("abc", "") do out[#out+1] = "[" .. w .. "]" end return table.concat(out, ",")`,
		`local out = {} for w in string.gmatch("aaa", "^a") do out[#out+1] = w end return table.concat(out, ",")`,
		`local out = {} for p in string.gmatch("abc", "()") do out[#out+1] = p end return table.concat(out, ",")`,
		`local out = {} for w in ("x1y22z"):gmatch("%d+") do out[#out+1] = w end return table.concat(out, ",")`,
	} {
		want, wantErr := gopherEval(t, "(function() "+loop+" end)()")
		got, gotErr := sandboxEval(t, "(function() "+loop+" end)()")
		assert.Equal(t, wantErr, gotErr, loop)
		assert.Equal(t, want, got, loop)
	}
}

// TestPatternMatchingIsCharged: a pattern that backtracks for minutes in
// gopher-lua ends on the instruction budget (not on the deadline), and leaves the state
// usable; a subject beyond the string cap is refused before matching.
func TestPatternMatchingIsCharged(t *testing.T) {
	L := NewState(SandboxOptions{MaxInstructions: 1_000_000})
	defer L.Close()
	for _, src := range []string{
		`return string.find(string.rep("a", 500), ".-.-.-b")`,
		`return string.match(string.rep("a", 500), "(.-)(.-)(.-)b")`,
		`return string.gsub(string.rep("a", 500), ".-.-.-b", "")`,
		`for w in string.gmatch(string.rep("a", 500), ".-.-.-b") do end`,
		`return string.find(string.rep("(", 100000), "%b()")`,
		`local n = 0 while true do n = n + #(string.match("x", "x")) end`,
	} {
		_, err := runIn(t, L, src)
		var le *LimitError
		require.ErrorAs(t, err, &le, src)
		assert.Equal(t, KindInstructions, le.Kind, src, "the instruction budget ends it, long before the deadline")
		assertReusable(t, L)
	}

	small := NewState(SandboxOptions{MaxStringSize: 1024})
	defer small.Close()
	for _, src := range []string{
		`return string.find(string.rep("a", 1000) .. string.rep("b", 100), "b")`,
	} {
		_, err := runIn(t, small, src)
		var le *LimitError
		require.ErrorAs(t, err, &le, src)
		assert.Equal(t, KindStringSize, le.Kind, src)
	}
	// gopher-lua's plain find panics on a start past the end; Lua, and
	// the sandbox, return nil.
	res := mustRun(t, small, `return string.find("a.b", "b", 10, true)`)
	assert.Equal(t, lua.LNil, res[0])
	// Plain find does not match patterns: it is linear, and not capped.
	res = mustRun(t, small, `return string.find(string.rep("a", 1000), "b", 1, true)`)
	assert.Equal(t, lua.LNil, res[0])
}

// TestPatternRecursionIsBounded: gopher-lua's matcher recurses once per
// repetition of a single class; the recursion is capped so a long subject
// fails with an error rather than growing the goroutine stack without
// bound.
func TestPatternRecursionIsBounded(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	proto, err := Compile(testChunk, `return string.find(string.rep(" ", 2^20 - 1) .. "x", "^%s*$")`)
	require.NoError(t, err)
	_, err = CallProtected(context.Background(), L, 30*time.Second, Instantiate(L, proto, NewEnv(L)), 1)
	var le *LuaError
	require.ErrorAs(t, err, &le)
	assert.Contains(t, le.Msg, "pattern/input too complex")
	res := mustRun(t, L, `return string.find(string.rep(" ", 5000) .. "x", "^%s*x$")`)
	assert.Equal(t, lua.LNumber(1), res[0])
}
