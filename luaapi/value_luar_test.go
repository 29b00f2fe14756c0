package luaapi

import (
	"encoding/json"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	luar "layeh.com/gopher-luar"
	"sigs.k8s.io/yaml"
)

// This file holds the evidence for keeping View, the hand-written bridge
// of Go objects into Lua, rather than gopher-luar's reflection proxy
// (luar.New on the same map[string]any): BenchmarkObjectBridge measures the
// two on a hook's access pattern, TestLuarProxySemantics pins down what a
// script would see differently. docs/performance.md quotes the ratio.

// statusReader is the access pattern of an InterpretStatus over a
// LeaderWorkerSet (the built-in's statusMappings): every condition's type
// and status, .status.readyReplicas and .spec.replicas. It indexes the
// object with Lua's operators, so it runs unchanged on both bridges, and
// stays within the array (a luar slice raises past its end).
const statusReader = `
local obj = ...
local available, progressing, updating = false, false, false
local conditions = obj.status.conditions
for i = 1, #conditions do
  local c = conditions[i]
  local holds = c.status == "True"
  if c.type == "Available" then available = holds
  elseif c.type == "Progressing" then progressing = holds
  elseif c.type == "UpdateInProgress" then updating = holds
  end
end
local ready = obj.status.readyReplicas or 0
local status = "Undefined"
if available or (updating and ready > 0) then
  status = "Running"
elseif progressing then
  status = "Initializing"
end
return status, ready, obj.spec.replicas or 1, #conditions
`

// exampleObject reads an example workload in the form a controller holds
// it: client-go's unstructured (int64 integers).
func exampleObject(tb testing.TB, path string) map[string]any {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	js, err := yaml.YAMLToJSON(data)
	require.NoError(tb, err)
	var u unstructured.Unstructured
	require.NoError(tb, u.UnmarshalJSON(js))
	return u.Object
}

// bridge hands a Go object to Lua.
type bridge struct {
	name string
	wrap func(L *lua.LState, v any) lua.LValue
}

var bridges = []bridge{
	{"view", ToLuaView},
	{"luar", luar.New},
}

// readStatus runs the reader on obj handed over by br and returns its
// results as Lua values.
func readStatus(tb testing.TB, L *lua.LState, reader *lua.LFunction, br bridge, obj map[string]any) [4]lua.LValue {
	L.Push(reader)
	L.Push(br.wrap(L, obj))
	if err := L.PCall(1, 4, nil); err != nil {
		tb.Fatalf("%s: %v", br.name, err)
	}
	var out [4]lua.LValue
	for i := range out {
		out[i] = L.Get(i - 4)
	}
	L.Pop(4)
	return out
}

// BenchmarkObjectBridge reads a LeaderWorkerSet's status fields through
// luaapi's view and through gopher-luar's proxy. Both give the same
// results (asserted before timing). "view" and "luar" time each alone;
// "interleaved" times them call by call in turn, so that both see the same
// machine load, and reports luar's time over the view's (luar/view).
//
//	go test -run '^$' -bench '^BenchmarkObjectBridge$' -benchmem -count 6 ./luaapi/
func BenchmarkObjectBridge(b *testing.B) {
	obj := exampleObject(b, "../examples/leaderworkerset/running.yaml")
	L := lua.NewState()
	defer L.Close()
	proto, err := compileTrusted("statusReader", statusReader)
	require.NoError(b, err)
	reader := L.NewFunctionFromProto(proto)

	want := [4]lua.LValue{lua.LString("Running"), lua.LNumber(2), lua.LNumber(2), lua.LNumber(2)}
	for _, br := range bridges {
		require.Equal(b, want, readStatus(b, L, reader, br, obj), br.name)
	}

	for _, br := range bridges {
		b.Run(br.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				readStatus(b, L, reader, br, obj)
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		var took [2]time.Duration
		for b.Loop() {
			for i, br := range bridges {
				start := time.Now()
				readStatus(b, L, reader, br, obj)
				took[i] += time.Since(start)
			}
		}
		b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N), "view-ns/op")
		b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N), "luar-ns/op")
		b.ReportMetric(float64(took[1])/float64(took[0]), "luar/view")
	})
}

// opaque is a Go value of a type that is not JSON, with an exported field
// and a method that changes it, as any typed Go value an embedder puts in
// an object (a resource.Quantity, a typed struct) has.
type opaque struct{ Secret string }

func (o *opaque) Reset(s string) { o.Secret = s }

// TestLuarProxySemantics holds the differences a script would see if Go
// objects reached Lua through gopher-luar instead of luaapi's view: each
// is a reason the view stays (see View). The object is a LeaderWorkerSet
// with a JSON null element and member, a json.Number, a *big.Int and a
// typed Go value added.
func TestLuarProxySemantics(t *testing.T) {
	type want struct {
		out string // the chunk's result through tostring, or
		err string // a substring of its error
	}
	cases := []struct {
		name       string
		chunk      string
		view, luar want
		mutates    bool // through luar, the Go object changed
	}{
		{
			name:  "null member reads as nil in both",
			chunk: `return obj.spec.nullMember`,
			view:  want{out: "nil"}, luar: want{out: "nil"},
		},
		{
			name:  "null element is the null sentinel, luar's nil",
			chunk: `return obj.status.conditions[3]`,
			view:  want{out: "null"}, luar: want{out: "nil"},
		},
		{
			name:  "past the end of an array is nil, luar raises",
			chunk: `return obj.status.conditions[4]`,
			view:  want{out: "nil"}, luar: want{err: "index out of range"},
		},
		{
			name:  "# of an object is 0 as for a table with string keys, luar counts keys",
			chunk: `return #obj.spec`,
			view:  want{out: "0"}, luar: want{out: "5"},
		},
		{
			name:  "type is userdata in both",
			chunk: `return type(obj.status)`,
			view:  want{out: "userdata"}, luar: want{out: "userdata"},
		},
		{
			name:  "tostring names the kind, luar prints an address",
			chunk: `return tostring(obj.status):sub(1, 10)`,
			view:  want{out: "view(objec"}, luar: want{out: "userdata: "},
		},
		{
			name:  "a json.Number is a number, luar a string",
			chunk: `return type(obj.status.observedGeneration)`,
			view:  want{out: "number"}, luar: want{out: "string"},
		},
		{
			name:  "a *big.Int is a number, luar a Go value with methods",
			chunk: `return type(obj.status.big)`,
			view:  want{out: "number"}, luar: want{out: "userdata"},
		},
		{
			name:  "calling an object is an error, luar iterates the Go map (in Go's map order)",
			chunk: `local n = 0 for k in obj.spec() do n = n + 1 end return n`,
			view:  want{err: "attempt to call a non-function object"}, luar: want{out: "5"},
		},
		{
			name:  "writes are refused, luar writes into the caller's object",
			chunk: `obj.spec.replicas = 1000 return obj.spec.replicas`,
			view:  want{err: "read-only JSON view"}, luar: want{out: "1000"},
			mutates: true,
		},
		{
			name:  "appending to an array is an error, luar appends by reflection, outside the memory guard",
			chunk: `local c = obj.status.conditions + "x" return #c`,
			view:  want{err: "cannot perform add operation between userdata and string"}, luar: want{out: "4"},
		},
		{
			name:  "a typed Go value is opaque, luar hands out its exported fields and methods",
			chunk: `obj.status.typed:Reset("changed by the script") return obj.status.typed.Secret`,
			view:  want{err: "attempt to index a non-table object"}, luar: want{out: "changed by the script"},
			mutates: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, br := range bridges {
				obj := exampleObject(t, "../examples/leaderworkerset/running.yaml")
				spec := obj["spec"].(map[string]any)
				spec["nullMember"] = nil
				status := obj["status"].(map[string]any)
				status["conditions"] = append(status["conditions"].([]any), nil)
				status["observedGeneration"] = json.Number("3")
				status["big"] = big.NewInt(7)
				status["typed"] = &opaque{Secret: "unchanged"}
				before, err := json.Marshal(obj)
				require.NoError(t, err)

				L := lua.NewState()
				L.SetGlobal("obj", br.wrap(L, obj))
				err = L.DoString("return tostring((function() " + tc.chunk + " end)())")
				w := map[string]want{"view": tc.view, "luar": tc.luar}[br.name]
				if w.err != "" {
					require.Error(t, err, br.name)
					assert.Contains(t, err.Error(), w.err, br.name)
				} else {
					require.NoError(t, err, br.name)
					assert.Equal(t, w.out, L.Get(-1).String(), br.name)
				}
				L.Close()

				after, err := json.Marshal(obj)
				require.NoError(t, err)
				if br.name == "luar" && tc.mutates {
					assert.NotEqual(t, string(before), string(after), "luar: the caller's object changed")
				} else {
					assert.Equal(t, string(before), string(after), "%s: the caller's object is unchanged", br.name)
				}
			}
		})
	}

	// A proxy is no JSON value to karta: every conversion rejects it, so
	// it could not be handed to jq, the K helpers or a result.
	L := lua.NewState()
	defer L.Close()
	obj := exampleObject(t, "../examples/leaderworkerset/running.yaml")
	assert.Equal(t, KindObject, kindOf(L, ToLuaView(L, obj)))
	assert.Equal(t, KindInvalid, kindOf(L, luar.New(L, obj)))
	_, err := FromLua(L, luar.New(L, obj))
	assert.Error(t, err)
}

// matches is a helper with plain arguments and result, the shape of
// karta's K.condition: does a condition of this type have this status?
func matches(typ, status string) bool { return typ == "Available" && status == "True" }

// helpers exposes matches both ways: by hand as an LGFunction and through
// gopher-luar's reflection.
var helpers = []struct {
	name string
	wrap func(L *lua.LState) lua.LValue
}{
	{"hand", func(L *lua.LState) lua.LValue {
		return L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LBool(matches(L.CheckString(1), L.CheckString(2))))
			return 1
		})
	}},
	{"luar", func(L *lua.LState) lua.LValue { return luar.New(L, matches) }},
}

// helperCaller calls the helper as a status matcher would, once per
// condition of a LeaderWorkerSet.
const helperCaller = `
local f = ...
local n = 0
if f("Progressing", "False") then n = n + 1 end
if f("Available", "True") then n = n + 1 end
if f("UpdateInProgress", "False") then n = n + 1 end
return n
`

// BenchmarkHelperBridge calls a Go helper with string arguments and a
// boolean result three times (one status matcher per condition), exposed
// by hand and through gopher-luar; "interleaved" reports luar/hand.
//
//	go test -run '^$' -bench '^BenchmarkHelperBridge$' -benchmem -count 6 ./luaapi/
func BenchmarkHelperBridge(b *testing.B) {
	L := lua.NewState()
	defer L.Close()
	proto, err := compileTrusted("helperCaller", helperCaller)
	require.NoError(b, err)
	caller := L.NewFunctionFromProto(proto)
	fns := make([]lua.LValue, len(helpers))
	call := func(i int) lua.LValue {
		L.Push(caller)
		L.Push(fns[i])
		if err := L.PCall(1, 1, nil); err != nil {
			b.Fatalf("%s: %v", helpers[i].name, err)
		}
		n := L.Get(-1)
		L.Pop(1)
		return n
	}
	for i, h := range helpers {
		fns[i] = h.wrap(L)
		require.Equal(b, lua.LNumber(1), call(i), h.name)
	}
	for i, h := range helpers {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				call(i)
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		var took [2]time.Duration
		for b.Loop() {
			for i := range helpers {
				start := time.Now()
				call(i)
				took[i] += time.Since(start)
			}
		}
		b.ReportMetric(float64(took[1])/float64(took[0]), "luar/hand")
	})
}

// TestLuarFunctionSemantics holds what changes when a Go helper is exposed
// through gopher-luar instead of by hand: the arguments it accepts and the
// errors a script sees.
func TestLuarFunctionSemantics(t *testing.T) {
	cases := []struct {
		name       string
		chunk      string
		hand, luar string // the result through tostring, or "error: " and a part of the error
	}{
		{"strings", `return f("Available", "True")`, "true", "true"},
		{"a number where a string is expected", `return f("Available", 1)`,
			"false", "error: bad argument #2 to f (cannot use 1 (type lua.LNumber) as type string)"},
		{"a missing argument", `return f("Available")`,
			"error: bad argument #2 to f (string expected, got nil)", "error: invalid number of function arguments (2 expected, got 1)"},
		{"an extra argument", `return f("Available", "True", "x")`,
			"true", "error: invalid number of function arguments (2 expected, got 3)"},
		{"nil", `return f(nil, "True")`,
			"error: bad argument #1 to f (string expected, got nil)", "error: bad argument #1 to f (cannot use nil as type string)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range []string{tc.hand, tc.luar} {
				L := lua.NewState()
				L.SetGlobal("f", helpers[i].wrap(L))
				err := L.DoString("return tostring((function() " + tc.chunk + " end)())")
				if msg, isErr := strings.CutPrefix(want, "error: "); isErr {
					require.Error(t, err, helpers[i].name)
					assert.Contains(t, err.Error(), msg, helpers[i].name)
				} else {
					require.NoError(t, err, helpers[i].name)
					assert.Equal(t, want, L.Get(-1).String(), helpers[i].name)
				}
				L.Close()
			}
		})
	}
}
