package luaapi

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestGsubMatchesGopherLua runs each expression with the sandbox's gsub and
// with gopher-lua's own, which Karmada uses, and requires the same results
// or the same error.
func TestGsubMatchesGopherLua(t *testing.T) {
	for _, expr := range []string{
		`string.gsub("hello world", "o", "0")`,
		`string.gsub("hello world", "o", "0", 1)`,
		`string.gsub("hello world", "o", "0", 0)`,
		`string.gsub("hello world", "(o)", "[%1]")`,
		`string.gsub("hello world", "l+", "%0%0")`,
		`string.gsub("hello world", "(h)(e)", "%2%1")`,
		`string.gsub("hello", "", "-")`,
		`string.gsub("hello", "x*", "-")`,
		`string.gsub("abc", "%w", "%%")`,
		`string.gsub("abc", "%w", "%x%")`,
		`string.gsub("abc", "%w", "100%")`,
		`string.gsub("abc", "%w", "%%%1")`,
		`string.gsub("abc", "%w", "%1")`,
		`string.gsub("abc", "(%w)", "%2")`,
		`string.gsub("abc", "()b", "%1")`,
		`string.gsub("abc", "()b()", "%1-%2")`,
		`string.gsub("abc", "^a", "A")`,
		`string.gsub("abc", "c$", "C")`,
		`string.gsub("", "", "x")`,
		`string.gsub("a b c", "%s", "")`,
		`string.gsub("$name is $age", "%$(%w+)", {name = "bob", age = 7})`,
		`string.gsub("$name is $x", "%$(%w+)", {name = "bob", x = false})`,
		`string.gsub("$name is $x", "%$(%w+)", {name = {}, x = true})`,
		`string.gsub("abc", "()", {[1] = "one", [3] = 3})`,
		`string.gsub("abc", "%w", string.upper)`,
		`string.gsub("abc", "(%w)(%w)", function(a, b) return b .. a end)`,
		`string.gsub("abc", "%w", function(c) if c == "b" then return nil end return 1 end)`,
		`string.gsub("abc", "()(%w)", function(p, c) return p .. c end)`,
		`string.gsub(123, 2, 5)`,
		`string.gsub("abc", "[", "x")`,
		`string.gsub("abc", "%w", 1)`,
		`("x y"):gsub(" ", "_")`,
	} {
		want, wantErr := gopherEval(t, expr)
		got, gotErr := sandboxEval(t, expr)
		assert.Equal(t, wantErr, gotErr, expr)
		assert.Equal(t, want, got, expr)
	}
}

func gopherEval(t *testing.T, expr string) ([]string, string) {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	fn, err := L.LoadString("return " + expr)
	require.NoError(t, err)
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		_, _, msg := splitPosition(err.(*lua.ApiError).Object.String())
		return nil, msg
	}
	var out []string
	for i := 1; i <= L.GetTop(); i++ {
		out = append(out, L.Get(i).String())
	}
	return out, ""
}

func sandboxEval(t *testing.T, expr string) ([]string, string) {
	t.Helper()
	L := NewState(SandboxOptions{})
	defer L.Close()
	res, err := runIn(t, L, "return "+expr)
	if err != nil {
		return nil, err.(*LuaError).Msg
	}
	if len(res) == 0 {
		return nil, "" // as gopherEval reports no values
	}
	return luaStrings(res), ""
}

func TestGsubIsLinearAndCapped(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	proto, err := Compile(testChunk, `local s = string.rep("a ", 2^16) return #s:gsub(" ", "")`)
	require.NoError(t, err)
	// gopher-lua's own gsub copies 128 KiB per match here: about a minute
	// on an idle machine, so it would end on this deadline. One pass takes
	// milliseconds (a second under -race on a busy machine).
	res, err := CallProtected(context.Background(), L, 20*time.Second, Instantiate(L, proto, NewEnv(L)), 1)
	require.NoError(t, err)
	assert.Equal(t, lua.LNumber(1<<16), res[0])

	small := NewState(SandboxOptions{MaxStringSize: 1024})
	defer small.Close()
	for _, src := range []string{
		`return string.gsub(string.rep("a", 16), "a", string.rep("b", 100))`,
		`return string.gsub(string.rep("a", 16), "a", {a = string.rep("b", 100)})`,
		`return string.gsub(string.rep("a", 16), "a", function() return string.rep("b", 100) end)`,
		`return string.gsub(string.rep("a", 1000), "", "b")`,
		`return string.gsub(string.rep("a", 1000), "a", "%0%0")`,
	} {
		_, err := runIn(t, small, src)
		var le *LimitError
		require.ErrorAs(t, err, &le, src)
		assert.Equal(t, KindStringSize, le.Kind, src)
	}
	res = mustRun(t, small, `return #string.gsub(string.rep("a", 512), "a", "bb")`)
	assert.Equal(t, lua.LNumber(1024), res[0], "exactly the cap is allowed")
}
