package interpreter

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"

	"github.com/kartalua/karta/internal/heapwatch"
)

// The hostile-script suite (issue "Hardening"): a control plane runs
// scripts written by other teams, so no script may take it down, leak into
// another call or another Karta, or hang it. Each script runs as the
// luaScript override of InterpretStatus, only for the object named "evil";
// every other object goes to the generated hook. Each hostile call must
// end within twice the deadline, grow the process heap by less than
// 64 MiB, fail with the right typed error, and leave the Program healthy:
// the next call, on whatever pooled state, succeeds and sees no trace.

// hostileTimeout is the deadline the suite configures: 2s, so that the
// race detector on a loaded 2-core runner stays within twice of it.
const hostileTimeout = 2 * time.Second

// hostileHeapGrowth is the most the live heap may grow during one call,
// and hostileMemory the memory guard the suite configures: the guard
// counts what the script creates, the heap also holds the rest of the
// call (the object's view, the state, the runtime's own).
const (
	hostileHeapGrowth = 64 << 20
	hostileMemory     = 32 << 20
)

// hostileOverride wraps a hostile body. LEAK is a global the hostile call
// sets: a later call that sees it has inherited globals.
const hostileOverride = `
function InterpretStatus(obj)
  if LEAK ~= nil then error("a global leaked from an earlier call") end
  if string.upper("x") ~= "X" or type(pairs) ~= "function" then
    error("the sandbox was changed by an earlier call")
  end
  if obj.metadata.name == "evil" then
    LEAK = true
%s
  end
  return karta.generated.InterpretStatus(obj)
end
`

// want describes the error a hostile script must end with: a limit of
// one of kinds, a Lua error whose message contains msg, or a recovered Go
// panic. None: the script must succeed (it found nothing to break).
type want struct {
	kinds []luaapi.LimitKind
	msg   string
	panic bool
}

// limit expects one of kinds, or the deadline: on a slow machine (the
// race detector, a loaded CI runner) the deadline may come first, and it
// is as right an ending.
func limit(kinds ...luaapi.LimitKind) want {
	return want{kinds: append(kinds, luaapi.KindDeadline)}
}
func luaErr(msg string) want { return want{msg: msg} }

var (
	anyTime = limit(luaapi.KindInstructions)
	noError = want{}
	goPanic = want{panic: true}
)

var hostileScripts = []struct {
	name, body string
	want       want
}{
	// Escapes: none of these exists in the sandbox.
	{"load", `load("return 1")()`, luaErr("attempt to call a non-function object")},
	{"loadstring", `loadstring("return 1")()`, luaErr("attempt to call a non-function object")},
	{"dofile", `dofile("/etc/passwd")`, luaErr("attempt to call a non-function object")},
	{"loadfile", `loadfile("/etc/passwd")()`, luaErr("attempt to call a non-function object")},
	{"require a file", `require("/etc/passwd")`, luaErr(`module "/etc/passwd" is not available in the karta sandbox`)},
	{"require a path", `require("../../secret")`, luaErr(`module "../../secret" is not available in the karta sandbox`)},
	{"require io", `require("io")`, luaErr(`module "io" is not available in the karta sandbox`)},
	{"io.open", `io.open("/etc/passwd")`, luaErr("attempt to index a non-table object(nil)")},
	{"os.execute", `os.execute("touch /tmp/karta-pwned")`, luaErr("attempt to call a non-function object")},
	{"os.getenv", `return os.getenv("HOME")`, luaErr("attempt to call a non-function object")},
	{"os.exit", `os.exit(1)`, luaErr("attempt to call a non-function object")},
	{"os.remove", `os.remove("/tmp/x")`, luaErr("attempt to call a non-function object")},
	{"debug", `debug.getinfo(1)`, luaErr("attempt to index a non-table object(nil)")},
	{"string.dump", `string.dump(InterpretStatus)`, luaErr("attempt to call a non-function object")},
	{"getfenv", `getfenv(1).x = 1`, luaErr("attempt to call a non-function object")},
	{"setfenv", `setfenv(1, {})`, luaErr("attempt to call a non-function object")},
	{"getmetatable of a string", `getmetatable("").__index.upper = nil`, luaErr("attempt to call a non-function object")},
	// gopher-lua's compiler stores into another register here; the
	// sandbox compiles the store as a call that raises Lua's error.
	{"string method table", `("").upper = nil`, luaErr("attempt to index a non-table object(string) with key 'upper'")},
	{"string library write", `string.upper = function() return "pwned" end`, luaErr("read-only")},
	{"table library write", `table.insert = nil`, luaErr("read-only")},
	{"karta module write", `karta.generated.InterpretStatus = function() end`, luaErr("read-only")},
	{"rawset on a library", `rawset(string, "upper", nil)`, luaErr("attempt to call a non-function object")},
	{"setmetatable", `setmetatable(_G, nil)`, luaErr("attempt to call a non-function object")},
	{"coroutine", `coroutine.wrap(function() end)()`, luaErr("attempt to index a non-table object(nil)")},
	{"collectgarbage", `collectgarbage("stop")`, luaErr("attempt to call a non-function object")},
	// Tampering that "works" but must die with the call.
	{"globals", `_G.pairs = nil string = {} x = 1`, noError},
	{"shadow a library", `local s = string s = nil _G.string = {upper = function() return "x" end}`, noError},
	{"pcall swallowing a limit", `pcall(function() while true do end end) return "survived"`, anyTime},
	// Denial of service.
	{"while true", `while true do end`, anyTime},
	{"tail calls forever", `local function f() return f() end return f()`, anyTime},
	{"tail calls inside pcall", `pcall(function() local function f() return f() end return f() end)`, anyTime},
	{"deep recursion", `local function f(n) return 1 + f(n + 1) end return f(1)`, limit(luaapi.KindCallDepth)},
	{"doubling with ..", `local s = "x" while true do s = s .. s end`, limit(luaapi.KindStringSize)},
	{"string.rep", `return string.rep("x", 2^28)`, limit(luaapi.KindStringSize)},
	{"format width", `return string.format("%99999999d%99999999d", 1, 2)`, limit(luaapi.KindStringSize)},
	{"sparse table", `local t = {} t[60000000] = true`, limit(luaapi.KindMemory)},
	{"many tables", `local T = {} for i = 1, 1e9 do T[i] = {} end`, limit(luaapi.KindMemory)},
	{"many big strings", `local T = {} local s = string.rep("x", 2^19) for i = 1, 1e9 do T[i] = s .. i end`, limit(luaapi.KindMemory)},
	{"many karta.object() tables", `local T = {} for i = 1, 1e9 do T[i] = karta.object() end`, limit(luaapi.KindMemory)},
	{"many karta.array() tables", `local T = {} for i = 1, 1e9 do T[i] = karta.array() end`, limit(luaapi.KindMemory)},
	{"many closures", `local T = {} for i = 1, 1e9 do T[i] = function() return i end end`, limit(luaapi.KindMemory)},
	{"table.concat", `local t = {} for i = 1, 2e5 do t[i] = "0123456789" end return table.concat(t)`, limit(luaapi.KindStringSize)},
	{"unpack", `return unpack({}, 1, 1e8)`, limit(luaapi.KindStackSize)},
	{"backtracking pattern", `return string.find(string.rep("a", 500), ".-.-.-b")`, limit(luaapi.KindInstructions)},
	{"balanced pattern", `return string.find(string.rep("(", 2^20 - 1), "%b()")`, limit(luaapi.KindInstructions)},
	{"gsub with a function", `local s = string.rep("a", 2^20 - 1) for i = 1, 1e6 do s:gsub(".", function(c) return c end) end`, anyTime},
	{"gsub growing", `local s = string.rep("a", 2^19) s = s:gsub(".", function(c) return c .. c .. c end)`, limit(luaapi.KindStringSize)},
}

func TestHostileScripts(t *testing.T) {
	k := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml"))
	good := progObjFile(t, filepath.Join(progProgramDir, "deployment.yaml"))[0]
	evil := good.DeepCopy()
	evil.SetName("evil")

	// A second Karta beside the hostile one: a global or a library change
	// must not reach it either.
	bystander := progCompile(t, withScript(k, fmt.Sprintf(hostileOverride, "")), Options{})
	want, err := bystander.InterpretStatus(context.Background(), good)
	require.NoError(t, err)

	for _, tc := range hostileScripts {
		t.Run(tc.name, func(t *testing.T) {
			// One state, so the next call reuses whatever the hostile
			// call left, unless the state was discarded.
			p := progCompile(t, withScript(k, fmt.Sprintf(hostileOverride, tc.body)),
				Options{PoolSize: 1, Limits: Limits{Timeout: hostileTimeout, MaxMemory: hostileMemory}})
			_, err := p.InterpretStatus(context.Background(), good)
			require.NoError(t, err, "the override works for a good object")

			var callErr error
			cost := measureCall(func() {
				_, callErr = p.InterpretStatus(context.Background(), evil)
			})
			heapwatch.AssertPrompt(t, cost, hostileTimeout)
			assert.Less(t, cost.Growth, uint64(hostileHeapGrowth), "heap growth during the call")
			checkHostileError(t, callErr, tc.want)

			for range 3 {
				got, err := p.InterpretStatus(context.Background(), good)
				require.NoError(t, err, "the Program is healthy after the hostile call")
				assert.Equal(t, want, got)
			}
			got, err := bystander.InterpretStatus(context.Background(), good)
			require.NoError(t, err, "another Karta is untouched")
			assert.Equal(t, want, got)
		})
	}
}

// checkHostileError checks a hostile call's error against w.
func checkHostileError(t *testing.T, err error, w want) {
	t.Helper()
	switch {
	case len(w.kinds) > 0:
		var le *luaapi.LimitError
		require.ErrorAs(t, err, &le)
		assert.Contains(t, w.kinds, le.Kind, err.Error())
		assert.Equal(t, "deployment", le.Karta)
		assert.Equal(t, string(HookInterpretStatus), le.Hook)
		assert.Contains(t, err.Error(), `karta "deployment": InterpretStatus: `)
	case w.panic:
		var pe *luaapi.PanicError
		require.ErrorAs(t, err, &pe)
		var he *HookError
		require.ErrorAs(t, err, &he)
	case w.msg != "":
		var he *HookError
		require.ErrorAs(t, err, &he)
		var lerr *luaapi.LuaError
		require.ErrorAs(t, err, &lerr, err.Error())
		assert.Contains(t, err.Error(), w.msg)
		assert.Contains(t, err.Error(), "karta:deployment/luaScript:")
	default:
		assert.NoError(t, err)
	}
}

// measureCall runs f and returns what it cost the process.
func measureCall(f func()) heapwatch.Cost { return heapwatch.Measure(f) }

// TestNoSpuriousDeadlines: 32 goroutines hammering 2 cores with calls that
// each take microseconds never see a deadline error: the deadline measures
// a call's own run, not its wait for a pooled state or a core.
func TestNoSpuriousDeadlines(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	k := progKartaFile(t, filepath.Join(progProgramDir, "jobset.karta.yaml"))
	obj := progObjFile(t, filepath.Join(progProgramDir, "jobset.yaml"))[0]
	p := progCompile(t, k, Options{}) // the default deadline, 1s
	want, err := p.InterpretStatus(context.Background(), obj)
	require.NoError(t, err)

	const goroutines, calls = 32, 200
	var failures sync.Map
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				got, err := p.InterpretStatus(context.Background(), obj)
				if err != nil || got.Status != want.Status {
					failures.Store(fmt.Sprint(g, "/", i), fmt.Sprint(err))
				}
				if _, err := p.GetPodSpecs(context.Background(), obj); err != nil {
					failures.Store(fmt.Sprint(g, "/", i, "pods"), err.Error())
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	failures.Range(func(key, value any) bool {
		if n < 5 {
			t.Errorf("call %v: %v", key, value)
		}
		n++
		return true
	})
	assert.Zero(t, n, "calls that failed")
}

// TestHostileHookErrorsAreTyped: callers branch on the error types, not on
// messages.
func TestHostileHookErrorsAreTyped(t *testing.T) {
	k := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml"))
	obj := progObjFile(t, filepath.Join(progProgramDir, "deployment.yaml"))[0]
	obj.SetName("evil")
	p := progCompile(t, withScript(k, fmt.Sprintf(hostileOverride, `while true do end`)),
		Options{Limits: Limits{Timeout: 100 * time.Millisecond, MaxInstructions: -1}})
	_, err := p.InterpretStatus(context.Background(), obj)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), err)
	var le *luaapi.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "100ms", le.Limit)
	assert.Equal(t, `karta "deployment": InterpretStatus: deadline 100ms exceeded`, err.Error())
}

// withScript is a copy of k with luaScript set.
func withScript(k *karta.Karta, script string) *karta.Karta {
	c := k.DeepCopy()
	c.Spec.LuaScript = script
	return c
}
