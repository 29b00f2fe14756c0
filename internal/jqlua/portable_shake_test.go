package jqlua

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/itchyny/gojq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// TestShakePortableSplitsTheRuntime: the runtime splits into its body's
// statements without losing a byte, and every primitive is defined by one
// of them.
func TestShakePortableSplitsTheRuntime(t *testing.T) {
	rt, err := portableParts()
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString(rt.head)
	defined := map[string]bool{}
	for _, p := range rt.parts {
		b.WriteString(p.text)
		for _, d := range p.defines {
			defined[d] = true
		}
	}
	b.WriteString(rt.tail)
	assert.Equal(t, PortableRuntime, b.String())
	assert.Greater(t, len(rt.parts), 100)
	for _, name := range Primitives {
		assert.True(t, defined["J."+name], "J.%s is defined", name)
	}
	for _, name := range []string{"J.null", "J.array", "J.object", "JX.kind", "JX.message", "JX.plain", "JX.number"} {
		assert.True(t, defined[name], name)
	}
}

// topLevel is every name the runtime's body defines, with the parts that
// define it.
func topLevel(t *testing.T) map[string]bool {
	rt, err := portableParts()
	require.NoError(t, err)
	out := map[string]bool{}
	for _, p := range rt.parts {
		for _, d := range p.defines {
			out[d] = true
		}
	}
	return out
}

// TestShakePortableIsClosed: for each primitive alone, the shaken runtime
// (lazy or eager) defines every top-level name its text mentions (a local
// left out, or cut from a declaration of aliases, would turn into a nil
// global at run time), compiles, and builds a J holding the primitive.
func TestShakePortableIsClosed(t *testing.T) {
	all := topLevel(t)
	var roots []string
	for name := range all {
		if strings.HasPrefix(name, "J.") || strings.HasPrefix(name, "JX.") {
			roots = append(roots, name)
		}
	}
	sort.Strings(roots)
	require.NotEmpty(t, roots)
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	for i, root := range roots {
		shake := ShakePortable
		if i%2 == 1 {
			shake = ShakePortableEager // each form on half the roots
		}
		shaken := shake("local x = " + root + "\n")
		split, err := splitPortable(shaken)
		require.NoError(t, err, root)
		kept := map[string]bool{}
		for _, p := range split.parts {
			for _, d := range p.defines {
				kept[d] = true
			}
		}
		assert.True(t, kept[root], "%s is kept", root)
		for _, p := range split.parts {
			for _, r := range p.refs {
				if all[r] && !kept[r] {
					t.Errorf("%s: %q is used but left out", root, r)
				}
			}
		}
		proto, err := luaapi.Compile("shaken", shaken+"return J, JX\n")
		require.NoError(t, err, root)
		res, err := luaapi.CallProtected(context.Background(), L, time.Second, luaapi.Instantiate(L, proto, luaapi.NewEnv(L)), 2)
		require.NoError(t, err, root)
		table, field, _ := strings.Cut(root, ".")
		tb := res[0].(*lua.LTable)
		if table == "JX" {
			tb = res[1].(*lua.LTable)
		}
		assert.NotEqual(t, lua.LNil, tb.RawGetString(field), root)
	}
}

// TestShakePortableShrinks: a chunk that uses a few primitives carries a
// part of the runtime; one that uses none keeps J and JX.
func TestShakePortableShrinks(t *testing.T) {
	few := ShakePortable("local NULL = J.null\nJ.emit(out, J.index(v, \"status\"))\nlocal m = JX.message(e)\n")
	// index's errors name the refused value's kind alone (tepKind), so it
	// keeps no encoder.
	assert.Less(t, len(few), len(PortableRuntime)*6/10, "index, emit and message keep 60%% of the runtime at most")
	for _, want := range []string{"function J.index(", "function J.emit(", "function JX.message(", "return J, JX"} {
		assert.Contains(t, few, want)
	}
	assert.NotContains(t, few, "function J.splits(")
	// The error wording is built on first need: warm defines it, and
	// index's slow path calls a stub that runs it.
	_, afterWarm, ok := strings.Cut(few, "local function warm()")
	require.True(t, ok, "the cold parts are inside warm")
	for _, want := range []string{"function tep(v) return kindOf(v) end", "function index(v, k)"} {
		assert.Contains(t, afterWarm, want)
	}
	assert.NotContains(t, few, "function encode(v, b)")
	assert.NotContains(t, few, "function preview(v)")
	assert.Contains(t, few, "function index(...) warm() return index(...) end")
	assert.NotContains(t, few, "local function tep(")
	none := ShakePortable("")
	assert.Contains(t, none, "local J, JX = {}, {}")
	assert.Contains(t, none, "return J, JX")
}

// TestShakePortableEagerKeepsTheSameParts: the eager runtime keeps what
// the lazy one keeps, each part where the runtime defines it: no warm, no
// stubs, fewer bytes.
func TestShakePortableEagerKeepsTheSameParts(t *testing.T) {
	code := "local NULL = J.null\nJ.emit(out, J.index(v, \"status\"))\nlocal m = JX.message(e)\n"
	lazy, eager := ShakePortable(code), ShakePortableEager(code)
	assert.NotContains(t, eager, "warm")
	for _, want := range []string{"local function tep(v)", "local function index(v, k)", "function J.index(", "return J, JX"} {
		assert.Contains(t, eager, want)
	}
	assert.Less(t, len(eager), len(lazy))
	// The declarations of aliases keep the names the kept parts use: the
	// encoder's (tojson) but no slice's ceil or modulo's fmod.
	emit := ShakePortableEager("J.emit(out, J.tojson(J.field(v, \"a\")))\n")
	assert.Contains(t, emit, "local concat, sort = table.concat, table.sort")
	assert.Contains(t, emit, "local floor, abs = math.floor, math.abs")
	assert.NotContains(t, emit, "ceil")
}

// TestShakePortableWarmsOnFirstNeed: a chunk whose error machinery is
// built on first need raises gojq's message, as an export words it (the
// kind alone), on its first error and on the next ones, and reads values the same before and after; so does the
// eager runtime.
func TestShakePortableWarmsOnFirstNeed(t *testing.T) {
	for _, shake := range []func(string) string{ShakePortable, ShakePortableEager} {
		testFirstErrors(t, shake)
	}
}

func testFirstErrors(t *testing.T, shake func(string) string) {
	src := shake("J.index J.null J.tostring J.array J.object JX.message\n") + `
local a = J.index({status = {x = 1}}, "status")
local ok1, e1 = pcall(J.index, 5, "status")
local ok2, e2 = pcall(J.index, true, "x")
local s = J.tostring(J.array())
return a.x, ok1, JX.message(e1), ok2, JX.message(e2), J.index(a, "x"), s
`
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	proto, err := luaapi.Compile("warm", src)
	require.NoError(t, err)
	res, err := luaapi.CallProtected(context.Background(), L, time.Second, luaapi.Instantiate(L, proto, luaapi.NewEnv(L)), 7)
	require.NoError(t, err)
	assert.Equal(t, []lua.LValue{
		lua.LNumber(1), lua.LFalse, lua.LString("expected an object but got: number"),
		lua.LFalse, lua.LString("expected an object but got: boolean"), lua.LNumber(1), lua.LString("[]"),
	}, res)
}

// TestExportWordsTheKind: a refused value, as the runtime an export
// carries words it, is its kind alone; gojq, and the runtime in full
// (what karta compares with gojq), add its JSON preview.
func TestExportWordsTheKind(t *testing.T) {
	code := "J.index J.array JX.message\n"
	run := func(runtime string) lua.LValue {
		L := luaapi.NewState(luaapi.SandboxOptions{})
		defer L.Close()
		proto, err := luaapi.Compile("refuse", runtime+`
local v = J.array()
v[1], v[2] = 1, 2
local ok, e = pcall(J.index, v, "a")
return JX.message(e)
`)
		require.NoError(t, err)
		res, err := luaapi.CallProtected(context.Background(), L, time.Second, luaapi.Instantiate(L, proto, luaapi.NewEnv(L)), 1)
		require.NoError(t, err)
		return res[0]
	}
	q, err := gojq.Parse(".a")
	require.NoError(t, err)
	v, _ := q.Run([]any{1, 2}).Next()
	gojqErr, ok := v.(error)
	require.True(t, ok, "gojq refuses .a of [1,2]")
	assert.Equal(t, "expected an object but got: array ([1,2])", gojqErr.Error())
	assert.Equal(t, lua.LString(gojqErr.Error()), run(PortableRuntime))
	for _, shake := range []func(string) string{ShakePortable, ShakePortableEager} {
		assert.Equal(t, lua.LString("expected an object but got: array"), run(shake(code)))
	}
	assert.Equal(t, "expected an object but got: array", ExportMessage(gojqErr.Error()))
}

// TestExportMessage: ExportMessage cuts the previews gojq writes after a
// refused value's kind, and nothing else.
func TestExportMessage(t *testing.T) {
	for _, c := range []struct{ gojq, export string }{
		{"expected an object but got: array ([1,2])", "expected an object but got: array"},
		{"expected an object but got: null", "expected an object but got: null"},
		{`cannot add: object ({"a":"b)"}) and number (1)`, "cannot add: object and number"},
		{"cannot divide number (1) by: number (0)", "cannot divide number by: number"},
		{"cannot modulo number (-0) by: number (0)", "cannot modulo number by: number"},
		{`expected an array but got: string ("aaaaaaaaaaaaaaaaaaaaaaaa ...")`, "expected an array but got: string"},
		{`cannot iterate over: object ({"a":[1,2,3],"b":[4,5,6 ...})`, "cannot iterate over: object"},
		// has's argument is a preview of its own, not a refused value's.
		{`has("a") cannot be applied to: array ([])`, `has("a") cannot be applied to: array`},
		{"tonumber cannot be applied to \"1x\": invalid number", "tonumber cannot be applied to \"1x\": invalid number"},
		{"too many outputs (limit 10000)", "too many outputs (limit 10000)"},
		{"", ""},
	} {
		assert.Equal(t, c.export, ExportMessage(c.gojq), c.gojq)
	}
}
