package argo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/luaapi"
)

// run compiles body with limits and runs it on obj.
func run(t *testing.T, body string, limits luaapi.Limits, obj map[string]any) (Health, error) {
	t.Helper()
	s, err := CompileWith("t.lua", body, limits)
	require.NoError(t, err)
	return s.Run(context.Background(), obj)
}

// Any chunk compiles, as Argo CD runs any chunk.
func TestCompileAcceptsAnyChunk(t *testing.T) {
	for _, src := range []string{
		"",
		"-- nothing here\n",
		"function InterpretStatus(obj)\n  return {status = 'Running'}\nend\n",
		"hs = {status = 'Healthy'}\n",
		"if obj then return {status = 'Healthy'} end\n",
		"local function word() return 'Healthy' end\nfunction helper() end\nreturn {status = word()}\n",
	} {
		s, err := Compile("ok.lua", src)
		require.NoError(t, err, src)
		assert.Equal(t, "ok.lua", s.Name())
	}
	t.Run("a syntax error", func(t *testing.T) {
		_, err := Compile("fix.lua", "return {status = \n")
		var se *luaapi.SyntaxError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "script:fix.lua", se.Chunk)
	})
}

// The object is a plain table as Argo CD's decodeValue makes it: null
// members are absent and null elements are left out.
func TestRunReadsObj(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "web", "labels": nil},
		"spec":     map[string]any{"replicas": json.Number("3"), "ratio": json.Number("0.5"), "ports": []any{"a", nil, "c"}, "empty": map[string]any{}},
	}
	h, err := run(t, `
local parts = {}
table.insert(parts, obj.metadata.name)
table.insert(parts, tostring(obj.metadata.labels))      -- null is absent
table.insert(parts, tostring(obj.spec.replicas + 1))    -- numbers are numbers
table.insert(parts, tostring(obj.spec.ratio * 2))
table.insert(parts, tostring(#obj.spec.ports))          -- 1-based arrays, the null left out
table.insert(parts, obj.spec.ports[1] .. obj.spec.ports[2])
table.insert(parts, tostring(next(obj.spec.empty)))     -- an empty object is an empty table
local n = 0
for _ in pairs(obj.spec) do n = n + 1 end
table.insert(parts, tostring(n))
return {status = "Healthy", message = table.concat(parts, " ")}
`, luaapi.Limits{}, obj)
	require.NoError(t, err)
	assert.Equal(t, "web nil 4 1 2 ac nil 4", h.Message)
}

func TestRunOsAndTableGetn(t *testing.T) {
	h, err := run(t, `
local os = require("os")
local t = require("table")
local parts = {
  os.date("!%Y-%m-%d %H:%M", 86400 + 3600),
  tostring(os.date("!*t", 0).year),
  type(os.time()), type(os.clock()),
  tostring(os.time({year = 2020, month = 1, day = 1}) > 0),
  tostring(table.getn({1, 2, 3})), tostring(t.getn(obj.items)), tostring(table.maxn({1, 2})),
}
return {status = "Healthy", message = table.concat(parts, " ")}
`, luaapi.Limits{}, map[string]any{"items": []any{"a", "b"}})
	require.NoError(t, err)
	assert.Equal(t, "1970-01-02 01:00 1970 number number true 3 2 2", h.Message)
}

// Nothing escapes the sandbox, and nothing a run does is
// seen by the next.
func TestRunSandbox(t *testing.T) {
	for _, name := range []string{
		"load", "loadstring", "dofile", "loadfile", "getfenv", "setfenv", "rawget", "rawset", "rawequal",
		"collectgarbage", "module", "newproxy", "print",
		"io", "debug", "coroutine", "package", "_VERSION",
		"os.execute", "os.exit", "os.getenv", "os.remove", "os.rename", "os.tmpname", "os.setlocale",
		"string.dump", "kube", "karta", "jq",
	} {
		t.Run(name+" is absent", func(t *testing.T) {
			h, err := run(t, fmt.Sprintf("return {status = (%s == nil) and 'Healthy' or 'Degraded'}", name), luaapi.Limits{}, nil)
			require.NoError(t, err)
			assert.Equal(t, StatusHealthy, h.Status)
		})
	}
	for _, tc := range []struct{ name, body, err string }{
		{"require of io", `local io = require("io") return {}`, `module "io" is not available`},
		{"require of a file", `local m = require("./evil") return {}`, "is not available"},
		{"writing a library", `string.upper = nil return {}`, "read-only"},
		{"writing os", `os.time = function() return 0 end return {}`, "read-only"},
		{"calling os.execute", `os.execute("true") return {}`, "attempt to call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.body, luaapi.Limits{}, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}

	t.Run("globals do not outlive a run", func(t *testing.T) {
		s, err := Compile("t.lua", "runs = (runs or 0) + 1\n_G.seen = (_G.seen or 0) + 1\nreturn {status = 'Healthy', message = runs .. ' ' .. seen}")
		require.NoError(t, err)
		for range 3 {
			h, err := s.Run(context.Background(), nil)
			require.NoError(t, err)
			assert.Equal(t, "1 1", h.Message)
		}
	})
	t.Run("the Go object is not written", func(t *testing.T) {
		obj := map[string]any{"spec": map[string]any{"replicas": json.Number("1")}}
		_, err := run(t, "obj.spec.replicas = 5\nobj.spec.extra = true\nobj.status = {}\nreturn {}", luaapi.Limits{}, obj)
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"spec": map[string]any{"replicas": json.Number("1")}}, obj)
	})
}

func TestRunLimits(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		limits luaapi.Limits
		kind   luaapi.LimitKind
	}{
		{"instructions", "while true do end return {}", luaapi.Limits{MaxInstructions: 10_000}, luaapi.KindInstructions},
		{"deadline", "while true do end return {}", luaapi.Limits{Timeout: 50 * time.Millisecond, MaxInstructions: -1}, luaapi.KindDeadline},
		{"call depth", "local function f(n) return 1 + f(n) end\nreturn {message = f(1)}", luaapi.Limits{CallDepth: 50}, luaapi.KindCallDepth},
		{"string size", `local s = string.rep("x", 2^28) return {}`, luaapi.Limits{}, luaapi.KindStringSize},
		{"a smaller string cap", `local s = string.rep("x", 2048) return {}`, luaapi.Limits{MaxStringSize: 1024}, luaapi.KindStringSize},
		{"memory", `local t = {} t[60000000] = true return {}`, luaapi.Limits{}, luaapi.KindMemory},
		{"a smaller memory guard", `local t = {} for i = 1, 1e6 do t[i] = {} end return {}`, luaapi.Limits{MaxMemory: 1 << 20}, luaapi.KindMemory},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := run(t, tc.body, tc.limits, nil)
			var le *luaapi.LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.kind, le.Kind)
			assert.Contains(t, err.Error(), "script:t.lua: ", "the error names the script")
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
	// Each of these ends promptly with the default limits, the same as
	// a Karta's and a Karmada customization's.
	for _, body := range []string{
		"while true do end return {}",
		`local s = string.rep("x", 2^28) return {}`,
		`local t = {} t[60000000] = true return {}`,
		// Library functions charge before they work (docs/charges.md).
		`local t = {} table.insert(t, 60000000, true) return {}`,
		`local t = {[50000000] = true} return {}`,
		`local n = 50000000 local t = {1, [n] = true} return {}`,
		`return {message = os.date(string.rep("%c", 500000))}`,
		`local s = string.rep("x", 2^20 - 8) local T = {} for i = 1, 2000 do T[i] = s end table.sort(T) return {}`,
	} {
		t.Run("defaults: "+body, func(t *testing.T) {
			start := time.Now()
			_, err := run(t, body, luaapi.Limits{}, nil)
			var le *luaapi.LimitError
			require.ErrorAs(t, err, &le)
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
	t.Run("a canceled context", func(t *testing.T) {
		s, err := Compile("t.lua", "return {status = 'Healthy'}")
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = s.Run(ctx, nil)
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("a script that hit a limit runs again", func(t *testing.T) {
		s, err := CompileWith("t.lua", "if obj.spin then while true do end end\nreturn {status = 'Healthy'}", luaapi.Limits{MaxInstructions: 10_000})
		require.NoError(t, err)
		_, err = s.Run(context.Background(), map[string]any{"spin": true})
		require.Error(t, err)
		h, err := s.Run(context.Background(), nil)
		require.NoError(t, err)
		assert.Equal(t, StatusHealthy, h.Status)
	})
}

func TestRunUnsupportedObject(t *testing.T) {
	_, err := run(t, "return {}", luaapi.Limits{}, map[string]any{"spec": map[string]any{"ch": make(chan int)}})
	var ce *luaapi.ConvertError
	require.True(t, errors.As(err, &ce), "got %v", err)
	assert.Contains(t, err.Error(), "script:t.lua: obj: ")
}

// A Script is shared by goroutines; go test -race checks the pool.
func TestRunConcurrently(t *testing.T) {
	s, err := Compile("t.lua", `
local want, have = obj.spec.replicas, obj.status.ready
if have < want then
  return {status = "Progressing", message = have .. "/" .. want}
end
return {status = "Healthy", message = have .. "/" .. want}
`)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				ready := (g + i) % 4
				obj := map[string]any{"spec": map[string]any{"replicas": 3}, "status": map[string]any{"ready": ready}}
				h, err := s.Run(context.Background(), obj)
				if !assert.NoError(t, err) {
					return
				}
				want := Health{Status: StatusProgressing, Message: fmt.Sprintf("%d/3", ready)}
				if ready >= 3 {
					want.Status = StatusHealthy
				}
				assert.Equal(t, want, h)
			}
		})
	}
	wg.Wait()
}
