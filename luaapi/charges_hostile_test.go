package luaapi

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/heapwatch"
)

// The library-charges suite (issue 28): every library function that
// allocates or loops in Go charges the call before it works. Each case is
// an adversarial call of one function (the probes among them); it
// must end on a *LimitError of one of the kinds listed (or the deadline),
// its work within twice the deadline of CPU time, the live heap growing
// by less than chargesHeapGrowth, and the state reusable afterwards.

const (
	chargesTimeout    = 2 * time.Second
	chargesMemory     = 32 << 20
	chargesHeapGrowth = 64 << 20
)

// bigSharedString is a 1 MiB string every element of a table shares: the
// table costs 2,000 slots, comparing its elements 2,000 × log n × 1 MiB.
const bigSharedString = `local s = string.rep("x", 2^20 - 8) local T = {} for i = 1, 2000 do T[i] = s end `

var hostileLibraryCalls = []struct {
	name, src string
	kinds     []LimitKind
}{
	// table
	{"table.insert far", `local t = {} table.insert(t, 60000000, true)`, kinds(KindMemory)},
	{"table.insert far, repeated", `for i = 1, 1e9 do local t = {} table.insert(t, 1000000, true) end`, kinds(KindMemory)},
	{"table.insert appending", `local t = {} for i = 1, 1e9 do table.insert(t, i) end`, kinds(KindMemory, KindInstructions)},
	{"table.insert shifting", `local t = {} for i = 1, 100000 do t[i] = i end for i = 1, 1e9 do table.insert(t, 1, i) end`, kinds(KindMemory, KindInstructions)},
	{"table.remove shifting", `local t = {} for i = 1, 1000000 do t[i] = i end for i = 1, 1e9 do table.remove(t, 1) table.insert(t, i) end`, kinds(KindMemory, KindInstructions)},
	{"table.sort of shared 1 MiB strings", bigSharedString + `table.sort(T)`, kinds(KindInstructions)},
	{"table.sort with a comparator", bigSharedString + `table.sort(T, function(a, b) return a > b end)`, kinds(KindInstructions)},
	{"table.concat", `local t = {} for i = 1, 1e6 do t[i] = "0123456789" end return table.concat(t)`, kinds(KindStringSize, KindMemory)},
	{"table.concat repeated", `local t = {} for i = 1, 1000 do t[i] = "0123456789" end for i = 1, 1e9 do local s = table.concat(t, ",") end`, kinds(KindMemory)},
	{"table.getn and maxn", `local t = {} for i = 1, 1e5 do t[i] = i end for i = 1, 1e9 do local n = table.getn(t) + table.maxn(t) end`, kinds(KindMemory, KindInstructions)},
	// table constructors
	{"constructor, constant key", `local t = {[50000000] = 1}`, kinds(KindMemory)},
	{"constructor, computed key", `local n = 50000000 local t = {[n] = 1}`, kinds(KindMemory)},
	{"constructor, positional and keyed", `local t = {1, 2, 3, [50000000] = 4, 5}`, kinds(KindMemory)},
	{"constructor, keys in a loop", `local T = {} for i = 1, 1e9 do T[i] = {[i + 100000] = true} end`, kinds(KindMemory)},
	{"constructor, unpacked fields", `local t = {} for i = 1, 100000 do t[i] = i end local T = {} for i = 1, 1e9 do T[i] = {unpack(t)} end`, kinds(KindMemory, KindStackSize)},
	// base
	{"unpack", `return unpack({}, 1, 1e8)`, kinds(KindStackSize)},
	{"select", `local t = {} for i = 1, 100000 do t[i] = i end for i = 1, 1e9 do local n = select('#', unpack(t)) end`, kinds(KindInstructions)},
	{"tostring of a long string", `local s = string.rep("x", 2^20 - 8) for i = 1, 1e9 do local x = tostring(s) .. "" end`, kinds(KindMemory)},
	{"tonumber of a long string", `local s = string.rep("1", 2^20 - 8) for i = 1, 1e9 do local x = tonumber(s) end`, kinds(KindInstructions)},
	{"ipairs over a long array", `local t = {} for i = 1, 1e6 do t[i] = i end for i = 1, 1e9 do for _, v in ipairs(t) do end end`, kinds(KindMemory, KindInstructions)},
	// string
	{"string.rep", `return string.rep("x", 2^28)`, kinds(KindStringSize)},
	{"string.rep repeated", `for i = 1, 1e9 do local s = string.rep("x", 2^19) end`, kinds(KindMemory)},
	{"string.format", `return string.format("%99999999d%99999999d", 1, 2)`, kinds(KindStringSize)},
	{"string.format %q", `local s = string.rep("\0", 2^19) for i = 1, 1e9 do local x = string.format("%q", s) end`, kinds(KindMemory, KindStringSize)},
	{"string.byte of a long string", `return string.byte(string.rep("x", 2^20 - 8), 1, -1)`, kinds(KindStackSize)},
	{"string.char", `local t = {} for i = 1, 100000 do t[i] = 65 end for i = 1, 1e9 do local s = string.char(unpack(t)) end`, kinds(KindMemory)},
	{"string.upper repeated", `local s = string.rep("x", 2^19) for i = 1, 1e9 do local x = s:upper() end`, kinds(KindMemory)},
	{"string.find plain", `local s = string.rep("a", 2^20 - 8) local p = string.rep("a", 2^19) .. "b" for i = 1, 1e9 do s:find(p, 1, true) end`, kinds(KindInstructions)},
	{"string.len and sub", `local s = string.rep("x", 2^20 - 8) for i = 1, 1e9 do local x = s:sub(2, -2):len() end`, kinds(KindInstructions)},
	{"string.gsub", `local s = string.rep("a", 2^19) s = s:gsub(".", "%0%0%0")`, kinds(KindStringSize)},
	{"string.gmatch", `local s = string.rep("a", 2^20 - 8) for i = 1, 1e9 do for w in s:gmatch("a") do end end`, kinds(KindInstructions)},
	{"string comparison", `local s = string.rep("x", 2^20 - 8) local t = s:upper():lower() for i = 1, 1e9 do local x = s < t end`, kinds(KindInstructions)},
	// os
	{"os.date of a long format", `return os.date(string.rep("%c", 500000))`, kinds(KindStringSize)},
	{"os.date repeated", `local f = string.rep("%c", 20000) for i = 1, 1e9 do local s = os.date(f) end`, kinds(KindMemory)},
	{"os.date table", `local T = {} for i = 1, 1e9 do T[i] = os.date("*t") end`, kinds(KindMemory)},
	{"os.time", `local T = {} for i = 1, 1e9 do T[i] = os.time({year = 2026, month = 1, day = i % 28 + 1}) end`, kinds(KindMemory)},
	// math (constant work per call: only the loop ends)
	{"math", `for i = 1, 1e9 do local x = math.floor(math.sqrt(i)) + math.random() end`, kinds(KindInstructions)},
}

func kinds(k ...LimitKind) []LimitKind { return append(k, KindDeadline) }

// chargesState is a sandbox under the suite's limits.
func chargesState() *lua.LState {
	return NewState(SandboxOptions{MaxMemory: chargesMemory})
}

func TestHostileLibraryCalls(t *testing.T) {
	for _, tc := range hostileLibraryCalls {
		t.Run(tc.name, func(t *testing.T) {
			L := chargesState()
			defer L.Close()
			proto, err := Compile(testChunk, tc.src)
			require.NoError(t, err)
			var callErr error
			cost := heapwatch.Measure(func() {
				_, callErr = CallProtected(context.Background(), L, chargesTimeout, Instantiate(L, proto, NewEnv(L)), lua.MultRet)
			})
			heapwatch.AssertPrompt(t, cost, chargesTimeout)
			assert.Less(t, cost.Growth, uint64(chargesHeapGrowth), "heap growth during the call")
			var le *LimitError
			require.ErrorAs(t, callErr, &le)
			assert.Contains(t, tc.kinds, le.Kind, callErr.Error())
			t.Logf("%v after %v (CPU %v), heap +%d MiB", callErr, cost.Wall, cost.CPU, cost.Growth>>20)
			assertReusable(t, L)
		})
	}
}

// The charged library functions keep gopher-lua's results: each script
// runs in the sandbox and in a plain gopher-lua state.
func TestChargedFunctionsKeepResults(t *testing.T) {
	for _, src := range []string{
		`local t = {5, 3, 9, 1, 7, 3, 8} table.sort(t) return table.concat(t, ",")`,
		`local t = {"pear", "apple", "fig", "apple", "kiwi"} table.sort(t) return table.concat(t, ",")`,
		`local t = {5, 3, 9, 1, 7, 3, 8} table.sort(t, function(a, b) return a > b end) return table.concat(t, ",")`,
		// A comparator that is not a strict order: the order is sort.Sort's, as in gopher-lua.
		`local t = {} for i = 1, 40 do t[i] = (i * 7) % 11 end table.sort(t, function(a, b) return a <= b end) return table.concat(t, ",")`,
		`local t = {{n = 2}, {n = 1}, {n = 3}} table.sort(t, function(a, b) return a.n < b.n end) return t[1].n .. t[2].n .. t[3].n`,
		`local t = {1, 2, 3} table.insert(t, 2, 9) table.insert(t, 5, 8) table.insert(t, 7) return table.concat(t, ",")`,
		`local t = {1, 2, 3, 4} return table.remove(t, 2) .. table.remove(t) .. table.concat(t, ",")`,
		`local t = {1, 2, 3} table.insert(t, 6, 9) return #t .. tostring(t[6])`,
		`local n = 20 local t = {1, [n] = 2, [2.5] = 3, x = 4} return #t .. t[n] .. t[2.5] .. t.x`,
		`return select("#", unpack({1, 2, 3}, 1, 5)), select(2, "a", "b", "c")`,
		`return tonumber("0x1F"), tonumber("12", 8), string.byte("hello", 2, 4)`,
		`return string.byte("hello", -3, -1), string.byte("hello", 0, 2), string.byte("hello", 9), string.byte("", 1, 5)`,
		`return select("#", unpack({1, 2, 3}, 3, 1)), select("#", unpack({1, 2}, -1, 1)), unpack({}, 0, 0)`,
		`return os.date("!%Y-%m-%d %H:%M:%S %%", 86400), os.date("!*t", 0).year`,
	} {
		plain := lua.NewState()
		require.NoError(t, plain.DoString("return "+`(function() `+src+` end)()`), src)
		want := make([]string, plain.GetTop())
		for i := range want {
			want[i] = plain.Get(i + 1).String()
		}
		plain.Close()

		L := NewState(SandboxOptions{})
		res := mustRun(t, L, src)
		L.Close()
		got := make([]string, len(res))
		for i, v := range res {
			got[i] = v.String()
		}
		assert.Equal(t, want, got, src)
	}
}

// An unpack or string.byte of many values grows the data stack once
// (reserveStack), not RegistryGrowStep values at a time with a copy of
// the whole stack each time: 120,000 values copied about 110 MB before.
func TestManyResultsGrowTheStackOnce(t *testing.T) {
	for _, src := range []string{
		`local t = {} for i = 1, 120000 do t[i] = i end return select("#", unpack(t))`,
		`return select("#", string.byte(string.rep("x", 120000), 1, -1))`,
	} {
		L := NewState(SandboxOptions{})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res := mustRun(t, L, src)
		runtime.ReadMemStats(&after)
		L.Close()
		require.Len(t, res, 1, src)
		assert.Equal(t, lua.LNumber(120000), res[0], src)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(24<<20), "bytes allocated by %s", src)
	}
}
