package luaapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestGuardRewriteKeepsSemantics runs scripts through the guard rewrite
// and through plain gopher-lua: the same results, or the same error.
func TestGuardRewriteKeepsSemantics(t *testing.T) {
	for _, body := range []string{
		// concatenation
		`return "a" .. "b" .. "c"`,
		`return 1 .. 2`,
		`return "x" .. 1.5 .. -0 .. 1e100`,
		`local a, b = "p", "q" return a .. (b .. a) .. b`,
		`return "n=" .. nil`,
		`return {} .. "x"`,
		`return "x" .. {}`,
		`local s = "" for i = 1, 10 do s = s .. i .. "," end return s`,
		// stores
		`local t = {} t[1] = "a" t[#t + 1] = "b" t[3] = "c" return table.concat(t, ",")`,
		`local t = {} local k = "key" t[k] = 1 t.x = 2 t["y"] = 3 return t.key + t.x + t.y`,
		`local t = {} t[100] = 1 return #t, t[100]`,
		`local t = {1, 2, 3} t[2] = nil return t[1], t[2], t[3]`,
		`local a, b = 1, 2 a, b = b, a return a, b`,
		`local t = {} local i = 1 i, t[i] = i + 1, 20 return i, t[1], t[2]`,
		`local t = {} t[1], t[2], t[3] = (function() return 1, 2, 3 end)() return t[1], t[2], t[3]`,
		`local t = {} t[1], t[2] = 1 return t[1], t[2]`,
		`local t = {} t[0.5] = "half" t[-1] = "neg" return t[0.5], t[-1]`,
		`local t = nil t[1] = 2`,
		`local t = {} t[nil] = 2`,
		`local t = {{}} t[1][2] = 3 return t[1][2]`,
		// constructors
		`local function f() return 1, 2, 3 end local t = {f()} return #t`,
		`local function f() return 1, 2, 3 end local t = {f(), f()} return #t`,
		`local t = {a = 1, [2] = "two", "one", n = {x = {}}} return t.a, t[1], t[2], type(t.n.x)`,
		`local function f(...) local t = {...} return #t end return f(1, nil, 3)`,
		`return #{}`,
		// functions
		`local function fact(n) if n <= 1 then return 1 end return n * fact(n - 1) end return fact(10)`,
		`local fib = function(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end return fib(10)`,
		`local o = {v = 5} function o:get() return self.v end function o.twice(x) return 2 * x end return o:get(), o.twice(4)`,
		`function G(x) return x + 1 end return G(1)`,
		`local n = 0 local function inc() n = n + 1 return n end inc() inc() return n`,
		`local fs = {} for i = 1, 3 do fs[i] = function() return i end end return fs[1]() + fs[2]() + fs[3]()`,
		`return (function(...) return select("#", ...) end)(1, 2, 3)`,
		`local t = {} local function k() return 1 end t[k()], t[k() + 1] = "a", "b" return t[1], t[2]`,
		`local t = {} t.x, t[1] = 1, 2 return t.x, t[1]`,
		`local t = {"one", n = tostring(2)} return t[1], t[2], t.n`,
	} {
		src := "(function() " + body + " end)()"
		want, wantErr := gopherEval(t, src)
		got, gotErr := sandboxEval(t, src)
		assert.Equal(t, wantErr, gotErr, body)
		assert.Equal(t, want, got, body)
	}
}

// TestMemoryGuard: allocations in a script's own code are charged before
// they happen, and end the call with a memory LimitError; the state stays
// usable.
func TestMemoryGuard(t *testing.T) {
	L := NewState(SandboxOptions{MaxMemory: 4 << 20, MaxInstructions: -1})
	defer L.Close()
	for _, src := range []string{
		`local t = {} t[60000000] = true`,
		`local t = {} local k = 60000000 t[k] = true`,
		`local T = {} for i = 1, 1e7 do T[i] = {} end`,
		`local T = {} for i = 1, 1e7 do T[i] = function() end end`,
		`local T = {} for i = 1, 1e7 do T["k" .. i] = true end`,
		`local T = {} for i = 1, 1e7 do local t = {} t[1000] = 1 T[#T + 1] = t end`,
		`local T = {} for i = 1, 1e7 do T[i] = string.rep("x", 1000) end`,
		`local T = {} local s = string.rep("x", 1000) for i = 1, 1e7 do T[i] = s:upper() end`,
		`local T = {} for i = 1, 1e7 do T[i] = string.format("%s-%d", "x", i) end`,
		`local T = {} for i = 1, 1e7 do T[i] = ("x"):rep(100) .. i end`,
		`local T = {} for i = 1, 1e7 do local a, b = i, {} T[i] = b end`,
	} {
		_, err := runIn(t, L, src)
		var le *LimitError
		require.ErrorAs(t, err, &le, src)
		assert.Equal(t, KindMemory, le.Kind, src)
		assert.Equal(t, "memory limit 4 MiB exceeded", le.Error(), src)
		assertReusable(t, L)
	}
	// The account is per call: the same work fits again and again.
	for range 3 {
		res := mustRun(t, L, `local T = {} for i = 1, 1000 do T[i] = {i} end return #T`)
		assert.Equal(t, lua.LNumber(1000), res[0])
	}
}

// TestConcatIsCapped: .. obeys the string size limit, before allocating.
func TestConcatIsCapped(t *testing.T) {
	L := NewState(SandboxOptions{MaxStringSize: 1024, MaxInstructions: -1})
	defer L.Close()
	for _, src := range []string{
		`local s = "x" for i = 1, 30 do s = s .. s end`,
		`local s = string.rep("x", 1000) return s .. s`,
		`local s = string.rep("x", 600) return "a" .. s .. "b" .. s`,
	} {
		_, err := runIn(t, L, src)
		var le *LimitError
		require.ErrorAs(t, err, &le, src)
		assert.Equal(t, KindStringSize, le.Kind, src)
	}
	res := mustRun(t, L, `local s = string.rep("x", 512) return #(s .. s)`)
	assert.Equal(t, lua.LNumber(1024), res[0], "exactly the cap is allowed")
}

// TestGuardNamesAreNotReachable: the guard functions' names are not Lua
// identifiers, so a script cannot replace them to escape the guard.
func TestGuardNamesAreNotReachable(t *testing.T) {
	L := NewState(SandboxOptions{MaxStringSize: 1024})
	defer L.Close()
	_, err := Compile(testChunk, `local __karta_concat = function(a) return a end`)
	require.NoError(t, err, "ordinary names stay ordinary")
	_, err = runIn(t, L, `_G["(karta concat)"] = function(a) return a end local s = "x" for i = 1, 30 do s = s .. s end`)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, KindStringSize, le.Kind)
}
