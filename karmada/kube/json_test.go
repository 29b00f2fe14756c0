package kube

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kartalua/karta/luaapi"
)

// TestKubeJSON pins gopher-json's encoding, quirks included.
func TestKubeJSON(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	for _, tc := range []struct{ src, want, err string }{
		{`return {}`, `[]`, ""},
		{`return {a={}, b={1, 2}, c="x"}`, `{"a":[],"b":[1,2],"c":"x"}`, ""},
		{`return {z=1, a=2, m={y=true, b=false}}`, `{"a":2,"m":{"b":false,"y":true},"z":1}`, ""},
		{`return {1.5, -0, 1e21, 3}`, `[1.5,-0,1e+21,3]`, ""},
		{`return {s="<a&b>"}`, `{"s":"\u003ca\u0026b\u003e"}`, ""},
		{`local t = {} t[2] = "b" t[1] = "a" return t`, `["a","b"]`, ""},
		{`return {[1]="a", [3]="c"}`, "", "result: cannot encode sparse array"},
		{`return {1, 2, x=3}`, "", "result: cannot encode mixed or invalid key types"},
		{`return {x=1, [true]=2}`, "", "cannot encode mixed or invalid key types"},
		{`local t = {} t.self = t return t`, "", "result.self: cannot encode recursively nested tables to JSON"},
		{`local shared = {1} return {a=shared, b=shared}`, "", "result.b: cannot encode recursively nested tables to JSON"},
		{`return {f=function() end}`, "", "result.f: cannot encode function to JSON"},
		{`return {n=0/0}`, "", "unsupported value: NaN"},
		{`return {list={"a", 1/0}}`, "", "result.list[2]: json: unsupported value: +Inf"},
	} {
		res := mustRun(t, L, tc.src)
		b, err := encodeKubeJSON(L, res[0])
		if tc.err != "" {
			require.Error(t, err, tc.src)
			assert.Contains(t, err.Error(), tc.err, tc.src)
			var ce *luaapi.ConvertError
			assert.ErrorAs(t, err, &ce)
			continue
		}
		require.NoError(t, err, tc.src)
		assert.Equal(t, tc.want, string(b), tc.src)
	}
}

// Views and the null sentinel print as the tables they stand for.
func TestKubeJSONOfViewsAndNull(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	view := luaapi.ToLuaView(L, map[string]any{
		"empty": map[string]any{}, "none": nil, "list": []any{nil, json.Number("2"), "x", []any{}},
	})
	b, err := encodeKubeJSON(L, view)
	require.NoError(t, err)
	assert.Equal(t, `{"empty":[],"list":[2,"x",[]]}`, string(b))
	b, err = encodeKubeJSON(L, luaapi.Null(L))
	require.NoError(t, err)
	assert.Equal(t, `null`, string(b))
}

// TestKubeFixEmpty pins Karmada's empty-table fix-up.
func TestKubeFixEmpty(t *testing.T) {
	desired := map[string]any{
		"spec": map[string]any{"selector": map[string]any{}, "ports": []any{}, "template": map[string]any{"metadata": map[string]any{}}},
		"list": []any{map[string]any{"labels": map[string]any{}}},
	}
	for _, tc := range []struct {
		name     string
		in       string
		isStruct bool
		refs     []any
		want     string
	}{
		{"top-level [] for a struct", `[]`, true, nil, `{}`},
		{"top-level [] for a slice", `[]`, false, nil, `[]`},
		{"no references: nested empty tables go", `{"a":[],"b":{"c":[],"d":1},"e":[[],{"f":[]}]}`, true, nil, `{"b":{"d":1},"e":[{}]}`},
		{"an empty object of a reference comes back, an empty array stays",
			`{"spec":{"selector":[],"ports":[],"other":[],"template":{"metadata":[]}}}`, true, []any{desired},
			`{"spec":{"selector":{},"ports":[],"template":{"metadata":{}}}}`},
		{"paths ignore array indexes", `{"list":[{"labels":[]},{"labels":[],"x":[]}]}`, true, []any{desired},
			`{"list":[{"labels":{}},{"labels":{}}]}`},
		{"any reference counts", `{"spec":{"selector":[]}}`, true, []any{map[string]any{}, desired}, `{"spec":{"selector":{}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fixEmptyJSON([]byte(tc.in), tc.isStruct, tc.refs...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestKubeUnmarshal(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	res := mustRun(t, L, `return {apiVersion="v1", kind="ConfigMap", metadata={name="x", labels={}}, data={}}, {}`)

	// No references: the empty tables are dropped.
	var u unstructured.Unstructured
	require.NoError(t, Unmarshal(L, res[0], &u))
	assert.Equal(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}, u.Object)

	// An input that had them brings them back as objects.
	ref := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"labels": map[string]any{}}, "data": map[string]any{}}}
	require.NoError(t, Unmarshal(L, res[0], &u, ref))
	assert.Equal(t, map[string]any{}, u.Object["data"])
	assert.Equal(t, map[string]any{}, u.Object["metadata"].(map[string]any)["labels"])

	// {} for an object has no kind, which unstructured refuses.
	err := Unmarshal(L, res[1], &unstructured.Unstructured{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "'Kind' is missing")

	// {} for a raw status is {}.
	var raw runtime.RawExtension
	require.NoError(t, Unmarshal(L, res[1], &raw))
	assert.Equal(t, `{}`, string(raw.Raw))

	// Numbers land in Go types as encoding/json puts them: a fraction in
	// an int32 field is an error.
	res = mustRun(t, L, `return {{n=2}}, {{n=2.5}}`)
	var ok []struct {
		N int32 `json:"n"`
	}
	require.NoError(t, Unmarshal(L, res[0], &ok))
	assert.Equal(t, int32(2), ok[0].N)
	require.Error(t, Unmarshal(L, res[1], &ok))

	require.Error(t, Unmarshal(L, res[0], ok), "not a pointer")
}

func TestKubeValue(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	lv, err := Value(L, map[string]any{
		"b": []any{"x", nil, "y"}, "a": nil, "n": int64(3), "f": 1.5, "j": json.Number("7"), "e": map[string]any{},
	})
	require.NoError(t, err)
	tb := lv.(*lua.LTable)
	assert.Equal(t, lua.LNil, tb.Metatable, "no kind marker")
	assert.Equal(t, lua.LNil, tb.RawGetString("a"), "a null member is absent")
	list := tb.RawGetString("b").(*lua.LTable)
	assert.Equal(t, 2, list.Len(), "a null element is dropped")
	assert.Equal(t, lua.LString("y"), list.RawGetInt(2))
	assert.Equal(t, lua.LNumber(3), tb.RawGetString("n"))
	assert.Equal(t, lua.LNumber(1.5), tb.RawGetString("f"))
	assert.Equal(t, lua.LNumber(7), tb.RawGetString("j"))
	var keys []string // in Next's order, which pairs() follows
	for k, _ := tb.Next(lua.LNil); k != lua.LNil; k, _ = tb.Next(k) {
		keys = append(keys, k.String())
	}
	assert.Equal(t, []string{"b", "e", "f", "j", "n"}, keys, "keys in sorted order")

	// Other Go types go through their JSON.
	lv, err = Value(L, []struct {
		Name string `json:"name"`
		Skip bool   `json:"skip,omitempty"`
	}{{Name: "a"}})
	require.NoError(t, err)
	el := lv.(*lua.LTable).RawGetInt(1).(*lua.LTable)
	assert.Equal(t, lua.LString("a"), el.RawGetString("name"))
	assert.Equal(t, lua.LNil, el.RawGetString("skip"), "omitempty false arrives as nil")

	lv, err = Value(L, nil)
	require.NoError(t, err)
	assert.Equal(t, lua.LNil, lv)
}

// A global a Karmada script assigns stays assigned, even to nil: it never
// falls through to the sandbox again (FlinkDeployment's `error = nil`).
func TestKubeEnv(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	proto, err := luaapi.Compile(testChunk, `
		local before = type(error)
		error = ''
		error = nil
		local after = error
		x = 1
		return before, after, _G.x, type(pairs)`)
	require.NoError(t, err)
	res, err := luaapi.CallProtected(t.Context(), L, testTimeout, luaapi.Instantiate(L, proto, Env(L)), 4)
	require.NoError(t, err)
	assert.Equal(t, []string{"function", "nil", "1", "function"}, luaStrings(res))
	assert.NotNil(t, L.G.Global.RawGetString("error").(*lua.LFunction), "the sandbox is untouched")

	// The next call's environment, which reuses the state's metatable,
	// starts afresh: no name of the last call is assigned, none of its
	// globals is there.
	for range 2 {
		res, err = luaapi.CallProtected(t.Context(), L, testTimeout, luaapi.Instantiate(L, proto, Env(L)), 4)
		require.NoError(t, err)
		assert.Equal(t, []string{"function", "nil", "1", "function"}, luaStrings(res))
	}
	next, err := luaapi.Compile(testChunk, `return type(error), type(x)`)
	require.NoError(t, err)
	res, err = luaapi.CallProtected(t.Context(), L, testTimeout, luaapi.Instantiate(L, next, Env(L)), 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"function", "nil"}, luaStrings(res))
}

// jsonString and kubeEncoder.number print what encoding/json prints.
func TestKubeJSONScalarsAreEncodingJSONs(t *testing.T) {
	for _, s := range []string{"", "plain", "with space", `q"uote`, `back\slash`, "<tag>", "a&b", "tab\there",
		"nl\n", "\x00", "\x7f", "é", "\u2028", "\xff", "~}{|", "k8s.io/name-1_2"} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(jsonString(s)), "%q", s)
	}
	e := &kubeEncoder{}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 3, 1e20, -1e20, 1e21, 123456789012345678, 0.5, -2.25,
		1e-7, 1e300, math.MaxInt64, math.SmallestNonzeroFloat64, 4294967296} {
		want, err := json.Marshal(f)
		require.NoError(t, err)
		got, err := e.number(f)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got.raw), "%v", f)
	}
}

// TestKubeJSONDepth: Karmada's encoder refuses a script-built table nested
// deeper than luaapi.MaxDepth, as the value bridge does, instead of recursing
// without bound.
func TestKubeJSONDepth(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	res := mustRun(t, L, `local t = {} local c = t for i = 1, 5000 do c.x = {} c = c.x end return t`)
	_, err := encodeKubeJSON(L, res[0])
	var ce *luaapi.ConvertError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Msg, "nesting deeper than 1000 levels")
	res = mustRun(t, L, `local t = {} local c = t for i = 1, 100 do c.x = {} c = c.x end return t`)
	_, err = encodeKubeJSON(L, res[0])
	require.NoError(t, err)
}
