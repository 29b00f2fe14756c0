package luaapi

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// snapshot describes everything a script could conceivably reach from the
// sandbox: its globals, the proxies with their raw contents and metatables,
// the library tables behind them, the string metatable and the per-call
// environment metatable, each table by identity and contents.
func snapshot(L *lua.LState) string {
	var b strings.Builder
	seen := map[*lua.LTable]bool{}
	var describe func(path string, v lua.LValue)
	describe = func(path string, v lua.LValue) {
		switch x := v.(type) {
		case *lua.LTable:
			fmt.Fprintf(&b, "%s = table %p\n", path, x)
			if seen[x] {
				return
			}
			seen[x] = true
			var keys []string
			vals := map[string]lua.LValue{}
			x.ForEach(func(k, v lua.LValue) {
				keys = append(keys, k.String())
				vals[k.String()] = v
			})
			sort.Strings(keys)
			for _, k := range keys {
				describe(path+"."+k, vals[k])
			}
			if x.Metatable != lua.LNil {
				describe(path+".<meta>", x.Metatable)
			}
		case *lua.LFunction:
			fmt.Fprintf(&b, "%s = function %p\n", path, x)
		default:
			fmt.Fprintf(&b, "%s = %s %s\n", path, v.Type(), v.String())
		}
	}
	describe("sandbox", sandboxTable(L))
	describe("<string meta>", L.G.Registry.RawGetString(stringMetaKey))
	describe("<env meta>", L.G.Registry.RawGetString(envMetaKey))
	return b.String()
}

// TestHostileScripts tries escapes from the sandbox. Each must fail (or find
// nothing), and leave the sandbox exactly as it was, so the next call on
// the state sees a clean sandbox.
func TestHostileScripts(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		// err is a substring of the error; empty means the script must
		// succeed and return true (the probe found nothing).
		err string
	}{
		{"load", `return load(function() return "return 1" end)`, "attempt to call a non-function object"},
		{"loadstring", `return loadstring("return 1")()`, "attempt to call a non-function object"},
		{"dofile", `return dofile("/etc/passwd")`, "attempt to call a non-function object"},
		{"loadfile", `return loadfile("/etc/passwd")`, "attempt to call a non-function object"},
		{"require io", `return require("io")`, `module "io" is not available in the karta sandbox`},
		{"require debug", `return require("debug")`, `module "debug" is not available in the karta sandbox`},
		{"os.execute", `return os.execute("true")`, "attempt to call a non-function object"},
		{"os.getenv", `return os.getenv("HOME")`, "attempt to call a non-function object"},
		{"os.exit", `os.exit(1)`, "attempt to call a non-function object"},
		{"io.open", `return io.open("/etc/passwd")`, "attempt to index a non-table object(nil) with key 'open'"},
		{"debug.getinfo", `return debug.getinfo(1)`, "attempt to index a non-table object(nil) with key 'getinfo'"},
		{"string.dump", `return string.dump(function() end)`, "attempt to call a non-function object"},
		{"dump method", `return ("x").dump(function() end)`, "attempt to call a non-function object"},
		{"getfenv", `return getfenv(1)`, "attempt to call a non-function object"},
		{"setfenv", `setfenv(1, {})`, "attempt to call a non-function object"},
		{"setmetatable string", `setmetatable("", {})`, "attempt to call a non-function object"},
		{"string metatable", `getmetatable("").__index.upper = nil`, "attempt to call a non-function object"},
		{"string.__index", `string.__index.upper = nil`, "attempt to index a non-table object(nil) with key 'upper'"},
		{"string.upper", `string.upper = nil`, `attempt to modify read-only table "string"`},
		{"rawset", `rawset(string, "upper", nil)`, "attempt to call a non-function object"},
		{"table.insert proxy", `table.insert(string, "evil")`, `attempt to modify read-only table "string"`},
		{"pairs state", `local f, s = pairs(string) s.upper = nil`, `attempt to modify read-only table "string"`},
		{"pairs iterator", `local f, s = pairs(string) local k, v = f(s, nil) return k ~= nil and s.upper ~= nil`, ""},
		{"coroutine", `return coroutine.create(function() end)`, "attempt to index a non-table object(nil) with key 'create'"},
		{"channel", `return channel.make()`, "attempt to index a non-table object(nil) with key 'make'"},
		{"package.loaded", `return package.loaded.io`, "attempt to index a non-table object(nil) with key 'loaded'"},
		{"collectgarbage", `collectgarbage("stop")`, "attempt to call a non-function object"},
		{"newproxy", `return newproxy(true)`, "attempt to call a non-function object"},
		{"module", `module("x")`, "attempt to call a non-function object"},
		{"print", `print("leak")`, "attempt to call a non-function object"},
		{"_G is the call env", `_G.x = 1; _G.string = {}; string = nil; tostring = nil; return _G.x == 1`, ""},
		{"shadow globals", `pairs = nil; string = {upper = 1}; require = nil; return string.upper == 1`, ""},
		{"sandbox not reachable via _G", `for k, v in pairs(_G) do if k ~= "_G" then return false end end return true`, ""},
		{"math.randomseed", `math.randomseed(42) return math.random(1, 10) >= 1`, ""},
		{"os.date", `return type(os.date("*t")) == "table" and type(os.clock()) == "number"`, ""},
		{"error with a library", `error(string)`, "(error object is a table value)"},
		{"pcall catches errors with libraries", `local ok, e = pcall(error, string) return not ok and e == string`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			L := NewState(SandboxOptions{Modules: map[string]func(*lua.LState) lua.LValue{
				"kube": func(L *lua.LState) lua.LValue {
					m := L.NewTable()
					m.RawSetString("f", L.NewFunction(func(*lua.LState) int { return 0 }))
					return m
				},
			}})
			defer L.Close()
			before := snapshot(L)
			res, err := runIn(t, L, tc.src)
			if tc.err == "" {
				require.NoError(t, err)
				require.NotEmpty(t, res)
				assert.Equal(t, lua.LTrue, res[0])
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
			}
			assert.Equal(t, before, snapshot(L), "the sandbox changed")
			// A later call on the state sees none of it.
			res = mustRun(t, L, `return ("x"):upper(), string.upper("y"), type(string.dump), type(x), type(tostring),
				type(pairs), type(require), #string, kube.f == require("kube").f`)
			assert.Equal(t, []string{"X", "Y", "nil", "nil", "function", "function", "function", "0", "true"}, luaStrings(res))
		})
	}
}

// TestStringMetatableIsTheRegisteredOne makes sure the snapshot looks at the
// metatable strings really use.
func TestStringMetatableIsTheRegisteredOne(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	meta := L.G.Registry.RawGetString(stringMetaKey).(*lua.LTable)
	assert.Equal(t, meta.RawGetString("__index"), L.GetMetaField(lua.LString(""), "__index"))
	assert.Equal(t, libraryOf(L, "string"), meta.RawGetString("__index"))
	assert.Equal(t, lua.LFalse, L.GetMetatable(lua.LString("")))
}

// TestSnapshotSeesChanges keeps TestHostileScripts honest: the snapshot
// notices a change anywhere a script could have made one.
func TestSnapshotSeesChanges(t *testing.T) {
	for name, change := range map[string]func(L *lua.LState){
		"global":    func(L *lua.LState) { sandboxTable(L).RawSetString("x", lua.LTrue) },
		"proxy raw": func(L *lua.LState) { sandboxTable(L).RawGetString("string").(*lua.LTable).Append(lua.LTrue) },
		"library":   func(L *lua.LState) { libraryOf(L, "string").RawSetString("upper", lua.LNil) },
		"string meta": func(L *lua.LState) {
			L.G.Registry.RawGetString(stringMetaKey).(*lua.LTable).RawSetString("x", lua.LTrue)
		},
		"env metatable": func(L *lua.LState) {
			L.G.Registry.RawGetString(envMetaKey).(*lua.LTable).RawSetString("__newindex", lua.LTrue)
		},
	} {
		L := NewState(SandboxOptions{})
		before := snapshot(L)
		change(L)
		assert.NotEqual(t, before, snapshot(L), name)
		L.Close()
	}
}

func libraryOf(L *lua.LState, name string) *lua.LTable {
	proxy := sandboxTable(L).RawGetString(name).(*lua.LTable)
	return proxy.Metatable.(*lua.LTable).RawGetString("__index").(*lua.LTable)
}
