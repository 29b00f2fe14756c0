package luaapi

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

const testChunk = "karta:test/luaScript"

// testTimeout is generous: tests share slow machines and run with -race;
// only the deadline tests depend on timing.
// testTimeout is long enough that only the limit a test is about can end
// its call, even on a loaded machine under the race detector; tests of the
// deadline set their own.
const testTimeout = 2 * time.Minute

// runIn compiles src and runs it once in a fresh environment of L, as the
// interpreter does, returning all its results.
func runIn(t *testing.T, L *lua.LState, src string) ([]lua.LValue, error) {
	t.Helper()
	proto, err := Compile(testChunk, src)
	require.NoError(t, err)
	fn := Instantiate(L, proto, NewEnv(L))
	return CallProtected(context.Background(), L, testTimeout, fn, lua.MultRet)
}

// mustRun is runIn for code that must succeed.
func mustRun(t *testing.T, L *lua.LState, src string) []lua.LValue {
	t.Helper()
	res, err := runIn(t, L, src)
	require.NoError(t, err, src)
	return res
}

func luaStrings(vs []lua.LValue) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

func TestSandboxGlobalsAreExactlySpec(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	var names []string
	sandboxTable(L).ForEach(func(k, _ lua.LValue) { names = append(names, k.String()) })
	sort.Strings(names)
	// The guard functions (guard_rewrite.go) are there too, under names
	// that are not identifiers: no script can name them.
	assert.Equal(t, []string{
		"(karta closure)", "(karta concat)", "(karta key)", "(karta set)", "(karta table)",
		"assert", "error", "ipairs", "math", "next", "os", "pairs", "pcall", "require",
		"select", "string", "table", "tonumber", "tostring", "type", "unpack", "xpcall",
	}, names)
}

func TestSandboxAbsentGlobals(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	for _, name := range []string{
		"load", "loadstring", "dofile", "loadfile", "getfenv", "setfenv", "rawget", "rawset",
		"rawequal", "getmetatable", "setmetatable", "collectgarbage", "module", "newproxy", "print",
		"io", "debug", "coroutine", "channel", "package", "_VERSION", "_GOPHER_LUA_VERSION",
	} {
		res := mustRun(t, L, "return "+name+" == nil")
		assert.Equal(t, lua.LTrue, res[0], name)
	}
}

// libraryKeys lists a library's names as a script sees them through pairs.
func libraryKeys(t *testing.T, L *lua.LState, lib string) string {
	t.Helper()
	res := mustRun(t, L, `local ks = {} for k in pairs(`+lib+`) do ks[#ks+1] = k end table.sort(ks) return table.concat(ks, " ")`)
	return res[0].String()
}

func TestSandboxLibraries(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	assert.Equal(t, "concat getn insert maxn remove sort", libraryKeys(t, L, "table"))
	assert.Equal(t, "byte char find format gfind gmatch gsub len lower match rep reverse sub upper", libraryKeys(t, L, "string"))
	assert.Equal(t, "clock date time", libraryKeys(t, L, "os"))
	assert.Contains(t, libraryKeys(t, L, "math"), "floor")
	assert.Contains(t, libraryKeys(t, L, "math"), "random")

	res := mustRun(t, L, `return ("x"):upper(), ("%d-%s"):format(3, "a"), ("ab"):rep(2), #("abc"), ("a,b"):gsub(",", ";"),
		math.floor(2.5), math.pi > 3, type(os.time()), os.date("!%Y", 0), next(string), ("x").dump, string.__index`)
	assert.Equal(t, []string{"X", "3-a", "abab", "3", "a;b", "2", "true", "number", "1970", "nil", "nil", "nil"}, luaStrings(res))
}

func TestSandboxRequire(t *testing.T) {
	L := NewState(SandboxOptions{Modules: map[string]func(*lua.LState) lua.LValue{
		"kube": func(L *lua.LState) lua.LValue {
			m := L.NewTable()
			m.RawSetString("answer", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(42)); return 1 }))
			return m
		},
		"jq": func(L *lua.LState) lua.LValue {
			return L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("jq")); return 1 })
		},
	}})
	defer L.Close()
	res := mustRun(t, L, `return require("string") == string, require("table") == table, require("math") == math,
		require("os") == os, require("kube") == kube, kube.answer(), require("kube").answer(), jq(), require("jq") == jq`)
	assert.Equal(t, []string{"true", "true", "true", "true", "true", "42", "42", "jq", "true"}, luaStrings(res))

	for _, name := range []string{"io", "debug", "coroutine", "package", "karta"} {
		_, err := runIn(t, L, `return require("`+name+`")`)
		require.Error(t, err)
		assert.Equal(t, testChunk+`:1: module "`+name+`" is not available in the karta sandbox`, err.Error())
	}
	_, err := runIn(t, L, `kube.answer = nil`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `attempt to modify read-only table "kube"`)
}

func TestSandboxModuleCollisionPanics(t *testing.T) {
	for _, name := range []string{"string", "pairs", "require", "_G"} {
		assert.PanicsWithValue(t, fmt.Sprintf("luaapi: module %q collides with a sandbox global", name), func() {
			NewState(SandboxOptions{Modules: map[string]func(*lua.LState) lua.LValue{
				name: func(L *lua.LState) lua.LValue { return L.NewTable() },
			}})
		}, name)
	}
}

func TestSandboxLibrariesAreReadOnly(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	for _, tc := range []struct{ src, lib string }{
		{`string.x = 1`, "string"},
		{`table.insert = nil`, "table"},
		{`math.pi = 3`, "math"},
		{`os.time = nil`, "os"},
		{`table.insert(string, "x")`, "string"},
		{`table.remove(math)`, "math"},
		{`table.sort(os)`, "os"},
		{`for k in pairs(string) do string[k] = nil end`, "string"},
	} {
		_, err := runIn(t, L, tc.src)
		require.Error(t, err, tc.src)
		assert.Equal(t, testChunk+`:1: attempt to modify read-only table "`+tc.lib+`"`, err.Error(), tc.src)
	}
}

func TestSandboxGlobalsDieWithTheCall(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	mustRun(t, L, `x = 1; _G.y = 2; function F() end; string = nil; tostring = nil`)
	res := mustRun(t, L, `return x, y, F, type(string), type(tostring), _G.x`)
	assert.Equal(t, []string{"nil", "nil", "nil", "table", "function", "nil"}, luaStrings(res))
	// _G is the call's own environment.
	res = mustRun(t, L, `z = 3; local n = 0; for k in pairs(_G) do n = n + 1 end; return _G.z, _G._G == _G, n, _G.string == string`)
	assert.Equal(t, []string{"3", "true", "2", "true"}, luaStrings(res))
}

func TestCompileAndErrorsNameTheChunk(t *testing.T) {
	_, err := Compile("karta:jobset/luaScript", "local x = \nfunction(")
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "karta:jobset/luaScript", se.Chunk)
	assert.Equal(t, "karta:jobset/luaScript: at EOF: syntax error", err.Error())

	L := NewState(SandboxOptions{})
	defer L.Close()
	proto, err := Compile("karta:jobset/luaScript", "local a = 1\n\nlocal b = a.x.y\n")
	require.NoError(t, err)
	_, err = CallProtected(context.Background(), L, time.Second, Instantiate(L, proto, NewEnv(L)), 0)
	var le *LuaError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "karta:jobset/luaScript", le.Chunk)
	assert.Equal(t, 3, le.Line)
	assert.True(t, strings.HasPrefix(err.Error(), "karta:jobset/luaScript:3: attempt to index"), err.Error())
}

func TestInstantiateSharesProtoAcrossStates(t *testing.T) {
	proto, err := Compile(testChunk, `function Hook(n) return n * 2 end`)
	require.NoError(t, err)
	done := make(chan error)
	for i := range 4 {
		go func() {
			L := NewState(SandboxOptions{})
			defer L.Close()
			for j := range 50 {
				env := NewEnv(L)
				if _, err := CallProtected(context.Background(), L, time.Second, Instantiate(L, proto, env), 0); err != nil {
					done <- err
					return
				}
				res, err := CallProtected(context.Background(), L, time.Second, env.RawGetString("Hook"), 1, lua.LNumber(i*100+j))
				if err == nil && res[0] != lua.LNumber(2*(i*100+j)) {
					err = fmt.Errorf("Hook(%d) = %v", i*100+j, res[0])
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-done)
	}
}

func TestPcallAndXpcall(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	res := mustRun(t, L, `
		local ok1, e1 = pcall(error, "boom", 0)
		local ok2, a, b = pcall(function(x, y) return x + y, "r" end, 1, 2)
		local ok3, e3 = xpcall(function() error("bad") end, function(e) return "handled: " .. e end)
		local ok4, e4 = xpcall(function() error("bad") end, function(e) error("worse", 0) end)
		local ok5, v5 = xpcall(function() return "fine" end, function(e) return e end)
		local ok6, e6 = pcall(nil)
		return ok1, e1, ok2, a, b, ok3, e3, ok4, e4, ok5, v5, ok6, e6`)
	assert.Equal(t, []string{
		"false", "boom", "true", "3", "r", "false", "handled: " + testChunk + ":4: bad",
		"false", "worse", "true", "fine", "false", "attempt to call a nil value",
	}, luaStrings(res))
}

func TestPcallDoesNotCatchLimits(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	for _, tc := range []struct {
		src  string
		kind LimitKind
	}{
		{`local ok = pcall(string.rep, "x", 2^28) return "caught"`, KindStringSize},
		{`local function f() return 1 + f() end local ok = pcall(f) return "caught"`, KindCallDepth},
		{`local ok = xpcall(function() return ("x"):rep(2^28) end, function(e) return "swallowed" end) return "caught"`, KindStringSize},
		{`local ok = pcall(pcall, pcall, unpack, {}, 1, 1e7) return "caught"`, KindStackSize},
	} {
		res, err := runIn(t, L, tc.src)
		var le *LimitError
		require.ErrorAs(t, err, &le, "%s: %v", tc.src, res)
		assert.Equal(t, tc.kind, le.Kind, tc.src)
	}
}

func TestPcallDoesNotCatchGoPanics(t *testing.T) {
	L := NewState(SandboxOptions{Modules: map[string]func(*lua.LState) lua.LValue{
		"bug": func(L *lua.LState) lua.LValue {
			return L.NewFunction(func(L *lua.LState) int { var m map[string]int; m["x"] = 1; return 0 })
		},
	}})
	defer L.Close()
	_, err := runIn(t, L, `local ok = pcall(bug) return ok`)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, pe.Msg, "assignment to entry in nil map")
}

func TestNewReadOnlyReflectsTargetChanges(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	target := L.NewTable()
	ro := NewReadOnly(L, "gen", target)
	name, ok := readOnlyName(ro)
	assert.True(t, ok)
	assert.Equal(t, "gen", name)
	_, ok = readOnlyName(target)
	assert.False(t, ok)

	target.RawSetString("a", lua.LNumber(1))
	env := NewEnv(L)
	env.RawSetString("gen", ro)
	proto, err := Compile(testChunk, `local n = 0 for k, v in pairs(gen) do n = n + v end return gen.a, n, pcall(function() gen.b = 1 end)`)
	require.NoError(t, err)
	res, err := CallProtected(context.Background(), L, time.Second, Instantiate(L, proto, env), lua.MultRet)
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "1", "false", testChunk + `:1: attempt to modify read-only table "gen"`}, luaStrings(res))
	assert.Equal(t, lua.LNil, target.RawGetString("b"))
}

func TestPairsHonoursPairsMetamethod(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	ud := L.NewUserData()
	mt := L.NewTable()
	mt.RawSetString("__pairs", L.NewFunction(func(L *lua.LState) int {
		L.Push(L.NewFunction(func(L *lua.LState) int {
			if L.Get(2) == lua.LNil {
				L.Push(lua.LString("k"))
				L.Push(lua.LString("v"))
				return 2
			}
			L.Push(lua.LNil)
			return 1
		}))
		L.Push(L.Get(1))
		L.Push(lua.LNil)
		return 3
	}))
	ud.Metatable = mt
	env := NewEnv(L)
	env.RawSetString("view", ud)
	proto, err := Compile(testChunk, `local s = "" for k, v in pairs(view) do s = s .. k .. "=" .. v end return s, pcall(pairs, 1)`)
	require.NoError(t, err)
	res, err := CallProtected(context.Background(), L, time.Second, Instantiate(L, proto, env), lua.MultRet)
	require.NoError(t, err)
	assert.Equal(t, "k=v", res[0].String())
	assert.Equal(t, lua.LFalse, res[1])
}

func TestStringCaps(t *testing.T) {
	L := NewState(SandboxOptions{MaxStringSize: 1024})
	defer L.Close()
	res := mustRun(t, L, `return #string.rep("ab", 512), #string.format("%0999d", 1), #table.concat({string.rep("x", 1000), 1, 2}, ",")`)
	assert.Equal(t, []string{"1024", "999", "1004"}, luaStrings(res))
	for _, src := range []string{
		`return string.rep("ab", 513)`,
		`return ("x"):rep(2^28)`,
		`return string.format("%01025d", 1)`,
		`return string.format("%0600d%0600d", 1, 2)`,
		`return string.format("%s%s", string.rep("x", 600), string.rep("x", 600))`,
		`return table.concat({string.rep("x", 600), string.rep("x", 600)})`,
		`return table.concat({1, 2, 3}, string.rep(",", 600))`,
	} {
		_, err := runIn(t, L, src)
		var le *LimitError
		require.ErrorAs(t, err, &le, src)
		assert.Equal(t, KindStringSize, le.Kind, src)
		assert.Equal(t, "string size limit 1 KiB exceeded", le.Error(), src)
	}
	// concat's own errors are untouched.
	_, err := runIn(t, L, `return table.concat({{}})`)
	var lerr *LuaError
	require.ErrorAs(t, err, &lerr)
	assert.Contains(t, lerr.Msg, "invalid value (table) at index 1 in table for concat")
}

func TestFormatBound(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	big := lua.LString(strings.Repeat("x", 1000))
	for _, tc := range []struct {
		args []lua.LValue
		want int
	}{
		{[]lua.LValue{lua.LString("")}, 0},
		{[]lua.LValue{lua.LString("100%")}, 4},
		{[]lua.LValue{lua.LString("%5d"), lua.LNumber(1)}, 3 + 320},
		{[]lua.LValue{lua.LString("%0999d"), lua.LNumber(1)}, 6 + 999},
		{[]lua.LValue{lua.LString("%.12f"), lua.LNumber(1)}, 5 + 12 + 320},
		{[]lua.LValue{lua.LString("%s%%%s"), big, big}, 6 + 2000},
		{[]lua.LValue{lua.LString("%q"), big}, 2 + 4002},
		{[]lua.LValue{lua.LString("%99999999999s"), lua.LString("x")}, 13 + 1e6 + 1},
		{[]lua.LValue{lua.LString("%s"), lua.LTrue}, 2 + 64},
	} {
		L.SetTop(0)
		for _, a := range tc.args {
			L.Push(a)
		}
		assert.Equal(t, tc.want, formatBound(L, 1<<30), "%v", tc.args[0])
	}
}

// TestFormatTotalSize: the arguments count, not only the widths — 200 %s
// of a 1 MiB string is refused before anything is formatted.
func TestFormatTotalSize(t *testing.T) {
	L := NewState(SandboxOptions{MaxInstructions: -1})
	defer L.Close()
	_, err := runIn(t, L, `local s, t = string.rep("x", 2^20 - 1), {}
for i = 1, 200 do t[i] = s end
return string.format(string.rep("%s", 200), unpack(t))`)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, KindStringSize, le.Kind)
}

func TestLuaErrorValues(t *testing.T) {
	goErr := errors.New("jq: cannot index number")
	L := NewState(SandboxOptions{Modules: map[string]func(*lua.LState) lua.LValue{
		"jq": func(L *lua.LState) lua.LValue {
			return L.NewFunction(func(L *lua.LState) int {
				ud := L.NewUserData()
				ud.Value = goErr
				L.Error(ud, 0)
				return 0
			})
		},
	}})
	defer L.Close()

	_, err := runIn(t, L, "\nerror('boom')")
	var le *LuaError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LuaError{Chunk: testChunk, Line: 2, Msg: "boom", Value: lua.LString(testChunk + ":2: boom"), Traceback: le.Traceback}, *le)
	assert.Contains(t, le.Traceback, "stack traceback:")

	_, err = runIn(t, L, "local t = {code = 7}\n\nerror(t)")
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "(error object is a table value)", le.Msg)
	assert.Equal(t, testChunk, le.Chunk)
	assert.Equal(t, 3, le.Line)
	assert.Equal(t, lua.LNumber(7), le.Value.(*lua.LTable).RawGetString("code"))

	_, err = runIn(t, L, "\n\n\njq()")
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, goErr)
	assert.Equal(t, testChunk+":4: jq: cannot index number", err.Error())

	_, err = runIn(t, L, "error('no position', 0)")
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "no position", le.Msg)
	assert.Equal(t, 1, le.Line)
}

func TestSplitPosition(t *testing.T) {
	for in, want := range map[string][3]string{
		"karta:jobset/generated:12: attempt to x": {"karta:jobset/generated", "12", "attempt to x"},
		"script:fix.lua:3: a:1: b":                {"script:fix.lua", "3", "a:1: b"},
		"no position":                             {"", "0", "no position"},
		":3: odd":                                 {"", "0", ":3: odd"},
		"x:12:no space":                           {"", "0", "x:12:no space"},
	} {
		c, l, m := splitPosition(in)
		assert.Equal(t, want, [3]string{c, fmt.Sprint(l), m}, in)
	}
}
