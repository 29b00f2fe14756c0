package luaapi

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/internal/heapwatch"
)

// callIn runs src in a fresh environment of L with the given context and
// timeout.
func callIn(t *testing.T, ctx context.Context, L *lua.LState, timeout time.Duration, src string) ([]lua.LValue, error) {
	t.Helper()
	proto, err := Compile(testChunk, src)
	require.NoError(t, err)
	return CallProtected(ctx, L, timeout, Instantiate(L, proto, NewEnv(L)), lua.MultRet)
}

// assertReusable checks that L still runs code correctly after a failed
// call, and that the call left no context behind.
func assertReusable(t *testing.T, L *lua.LState) {
	t.Helper()
	assert.Nil(t, L.Context())
	assert.Equal(t, 0, L.GetTop())
	res := mustRun(t, L, `local t = {} for i = 1, 10 do t[i] = i end return table.concat(t, ","), ("ok"):upper()`)
	assert.Equal(t, []string{"1,2,3,4,5,6,7,8,9,10", "OK"}, luaStrings(res))
}

func TestDeadline(t *testing.T) {
	L := NewState(SandboxOptions{MaxInstructions: -1})
	defer L.Close()
	const timeout = 300 * time.Millisecond
	for _, src := range []string{
		`while true do end`,
		`local f = function() end while true do pcall(f) end`,
		`while true do xpcall(function() while true do end end, function(e) return e end) end`,
		`local t = {3, 1, 2} local lt = function(a, b) return a < b end while true do table.sort(t, lt) end`,
		`while true do local ok, e = pcall(error, "x") end`,
	} {
		proto, err := Compile(testChunk, src)
		require.NoError(t, err)
		// The test machines are shared and often overloaded: a call
		// may be descheduled past any bound. It must end within 2x
		// the timeout at least once in three tries.
		var times []time.Duration
		for range 3 {
			fn := Instantiate(L, proto, NewEnv(L))
			start := time.Now()
			_, err := CallProtected(context.Background(), L, timeout, fn, 0)
			elapsed := time.Since(start)
			var le *LimitError
			require.ErrorAs(t, err, &le, src)
			assert.Equal(t, KindDeadline, le.Kind, src)
			assert.ErrorIs(t, err, context.DeadlineExceeded, src)
			assert.Equal(t, "deadline 300ms exceeded", err.Error(), src)
			assert.GreaterOrEqual(t, elapsed, timeout, src)
			assertReusable(t, L)
			times = append(times, elapsed)
			if elapsed < 2*timeout {
				break
			}
		}
		assert.Less(t, slices.Min(times), 2*timeout, "%s: %v", src, times)
	}
}

func TestDeadlineFromContext(t *testing.T) {
	L := NewState(SandboxOptions{MaxInstructions: -1})
	defer L.Close()
	proto, err := Compile(testChunk, `while true do end`)
	require.NoError(t, err)

	fn := Instantiate(L, proto, NewEnv(L))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = CallProtected(ctx, L, time.Hour, fn, 0)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	limit, perr := time.ParseDuration(le.Limit)
	require.NoError(t, perr)
	assert.LessOrEqual(t, limit, 200*time.Millisecond, "the earlier deadline is the one reported")

	fn = Instantiate(L, proto, NewEnv(L))
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err = CallProtected(ctx, L, 0, fn, 0)
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "call canceled before its deadline none", err.Error())
	assertReusable(t, L)
}

func TestInstructionLimit(t *testing.T) {
	L := NewState(SandboxOptions{MaxInstructions: 100_000})
	defer L.Close()
	for _, src := range []string{
		`while true do end`,
		`local ok = pcall(function() while true do end end) return "caught"`,
		`local s = string.rep("a", 1000) for i = 1, 1000 do s:gsub("a", "b") end`,
		`local t = {} for i = 1, 1000 do t[i] = "x" end for i = 1, 1000 do table.concat(t) end`,
	} {
		_, err := callIn(t, context.Background(), L, testTimeout, src)
		var le *LimitError
		require.ErrorAs(t, err, &le, src)
		assert.Equal(t, KindInstructions, le.Kind, src)
		assert.Equal(t, "instruction limit 100000 exceeded", err.Error(), src)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
		assertReusable(t, L)
	}
	// Just under the budget is fine; the budget is per call.
	for range 3 {
		res, err := callIn(t, context.Background(), L, testTimeout, `local n = 0 for i = 1, 20000 do n = n + i end return n`)
		require.NoError(t, err)
		assert.Equal(t, lua.LNumber(200010000), res[0])
	}
}

func TestExpiredContextRunsNothing(t *testing.T) {
	ran := false
	L := NewState(SandboxOptions{Modules: map[string]func(*lua.LState) lua.LValue{
		"mark": func(L *lua.LState) lua.LValue {
			return L.NewFunction(func(*lua.LState) int { ran = true; return 0 })
		},
	}})
	defer L.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := callIn(t, ctx, L, time.Second, `mark()`)
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, ran)
}

func TestPreviousContextIsRestored(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	outer, cancel := context.WithCancel(context.Background())
	defer cancel()
	L.SetContext(outer)
	_, err := callIn(t, context.Background(), L, testTimeout, `return 1`)
	require.NoError(t, err)
	assert.Equal(t, outer, L.Context())
	L.RemoveContext()
}

func TestCallDepth(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	for _, src := range []string{
		`local function f() return 1 + f() end f()`,
		`local function f() return 1 + f() end local ok, e = pcall(f) return "caught", e`,
		`local function f() local ok, e = pcall(f) return ok end f()`,
		`local function f() return (string.gsub("a", "a", f)) end f()`,
	} {
		_, err := callIn(t, context.Background(), L, testTimeout, src)
		var le *LimitError
		require.ErrorAs(t, err, &le, src)
		assert.Equal(t, KindCallDepth, le.Kind, src)
		assert.Equal(t, "call depth limit 200 exceeded", err.Error(), src)
		assertReusable(t, L)
	}

	// Depth below the limit is fine, and the limit follows the option.
	L2 := NewState(SandboxOptions{CallStackSize: 50})
	defer L2.Close()
	res, err := callIn(t, context.Background(), L2, testTimeout, `local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(40)`)
	require.NoError(t, err)
	assert.Equal(t, lua.LNumber(40), res[0])
	_, err = callIn(t, context.Background(), L2, testTimeout, `local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(60)`)
	assert.EqualError(t, err, "call depth limit 50 exceeded")
}

func TestStackSize(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	// Karmada's states hold 5120 values; ours start at 1024 and grow.
	res := mustRun(t, L, `local t = {} for i = 1, 20000 do t[i] = i end return select("#", unpack(t))`)
	assert.Equal(t, lua.LNumber(20000), res[0])
	_, err := callIn(t, context.Background(), L, testTimeout, `return unpack({}, 1, 1e8)`)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, KindStackSize, le.Kind)
	assert.Equal(t, "stack size limit 131072 values exceeded", err.Error())
	assertReusable(t, L)
}

func TestStringSizeAndReuse(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	var err error
	cost := heapwatch.Measure(func() {
		_, err = callIn(t, context.Background(), L, testTimeout, `return string.rep("x", 2^28)`)
	})
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "string size limit 1 MiB exceeded", err.Error())
	// Checked before allocating: the 256 MiB are never built.
	assert.Less(t, cost.Growth, uint64(32<<20), "heap growth")
	assertReusable(t, L)
}

func TestLuaErrorLeavesStateReusable(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	_, err := callIn(t, context.Background(), L, testTimeout, `local x = nil; return x.y`)
	var le *LuaError
	require.ErrorAs(t, err, &le)
	assertReusable(t, L)
}

func TestResults(t *testing.T) {
	L := NewState(SandboxOptions{})
	defer L.Close()
	proto, err := Compile(testChunk, `function H(a, b) return a + b, a * b, "x" end`)
	require.NoError(t, err)
	env := NewEnv(L)
	_, err = CallProtected(context.Background(), L, time.Second, Instantiate(L, proto, env), 0)
	require.NoError(t, err)
	h := env.RawGetString("H")

	res, err := CallProtected(context.Background(), L, time.Second, h, lua.MultRet, lua.LNumber(2), lua.LNumber(3))
	require.NoError(t, err)
	assert.Equal(t, []lua.LValue{lua.LNumber(5), lua.LNumber(6), lua.LString("x")}, res)
	res, err = CallProtected(context.Background(), L, 0, h, 1, lua.LNumber(2), lua.LNumber(3))
	require.NoError(t, err)
	assert.Equal(t, []lua.LValue{lua.LNumber(5)}, res)
	res, err = CallProtected(context.Background(), L, time.Second, h, 4, lua.LNumber(1), lua.LNumber(1))
	require.NoError(t, err)
	assert.Equal(t, []lua.LValue{lua.LNumber(2), lua.LNumber(1), lua.LString("x"), lua.LNil}, res)
	assert.Equal(t, 0, L.GetTop())

	_, err = CallProtected(context.Background(), L, time.Second, lua.LNil, 0)
	var lerr *LuaError
	require.ErrorAs(t, err, &lerr)
	assert.Contains(t, lerr.Msg, "attempt to call a non-function object")
}

func TestClosedStatePanicIsRecovered(t *testing.T) {
	L := NewState(SandboxOptions{})
	fn := L.NewFunction(func(*lua.LState) int { return 0 })
	L.Close()
	_, err := CallProtected(context.Background(), L, time.Second, fn, 0)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
}

func TestLimitErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  *LimitError
		want string
	}{
		{&LimitError{Karta: "jobset", Hook: "GetPodSpecs", Kind: KindInstructions, Limit: "10000000"}, `karta "jobset": GetPodSpecs: instruction limit 10000000 exceeded`},
		{&LimitError{Karta: "jobset", Hook: "GetPodSpecs", Kind: KindDeadline, Limit: "1s", Cause: context.DeadlineExceeded}, `karta "jobset": GetPodSpecs: deadline 1s exceeded`},
		{&LimitError{Karta: "jobset", Hook: "GetPodSpecs", Kind: KindCallDepth, Limit: "200"}, `karta "jobset": GetPodSpecs: call depth limit 200 exceeded`},
		{&LimitError{Hook: "ReviseSpec", Kind: KindMemory, Limit: "64 MiB"}, `ReviseSpec: memory limit 64 MiB exceeded`},
		{&LimitError{Kind: KindResultSize, Limit: "16 MiB"}, `result size limit 16 MiB exceeded`},
	} {
		assert.Equal(t, tc.want, tc.err.Error())
	}
	assert.True(t, errors.Is(&LimitError{Kind: KindDeadline, Cause: context.DeadlineExceeded}, context.DeadlineExceeded))
	assert.Equal(t, "1 MiB", formatSize(1<<20))
	assert.Equal(t, "64 MiB", formatSize(64<<20))
	assert.Equal(t, "3 KiB", formatSize(3072))
	assert.Equal(t, "1000 bytes", formatSize(1000))
}
