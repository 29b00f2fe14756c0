package kube

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/luaapi"
)

// unmarshalViaText is Unmarshal into an Unstructured the way Karmada
// does it, through the JSON text.
func unmarshalViaText(L *lua.LState, lv lua.LValue, refs ...any) (*unstructured.Unstructured, error) {
	data, err := ResultJSON(L, lv, true, refs...)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, u); err != nil {
		return nil, &luaapi.ConvertError{Path: "result", Msg: err.Error()}
	}
	return u, nil
}

// TestKubeUnmarshalUnstructuredAgreesWithText: reading an Unstructured
// from the encoded tree gives what Unstructured's UnmarshalJSON gives for
// the text — numbers (int64 when integral and in range, float64
// otherwise), strings with escapes, HTML characters and invalid UTF-8,
// nulls, empty containers after the fix-up — and the same errors when it
// refuses (no kind, a kind that is not a string, an apiVersion that does
// not parse, not an object).
func TestKubeUnmarshalUnstructuredAgreesWithText(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	scripts := []string{
		`return {apiVersion="v1", kind="ConfigMap", metadata={name="x", labels={}}, data={a="b"}}`,
		`return {apiVersion="apps/v1", kind="Deployment", spec={replicas=3, ratio=0.5, big=2^63, huge=1e21, neg=-0, small=1e-7, max=9007199254740993}}`,
		`return {kind="K", s="quote\" back\\ tab\t nl\n <html> & \226\128\168 \255\254 é", n=null, e={}, arr={1, "two", {}, {x={}}}}`,
		`return {kind="K", apiVersion="a/b/c"}`,
		`return {kind="", apiVersion="v1"}`,
		`return {kind=3, apiVersion="v1"}`,
		`return {apiVersion="v1"}`,
		`return {}`,
		`return {1, 2}`,
		`return {kind="K", apiVersion=7}`,
	}
	refs := []any{nil, &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"labels": map[string]any{}}, "e": map[string]any{}}}}
	for _, src := range scripts {
		res := mustRun(t, L, src)
		for _, ref := range refs {
			var rs []any
			if ref != nil {
				rs = []any{ref}
			}
			want, wantErr := unmarshalViaText(L, res[0], rs...)
			got := &unstructured.Unstructured{}
			gotErr := Unmarshal(L, res[0], got, rs...)
			if wantErr != nil {
				require.Error(t, gotErr, src)
				assert.Equal(t, wantErr.Error(), gotErr.Error(), src)
				continue
			}
			require.NoError(t, gotErr, src)
			assert.Equal(t, want.Object, got.Object, src)
		}
	}

	// Random objects, through Value and back.
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		obj := map[string]any{"kind": "K", "apiVersion": "g/v"}
		if m, ok := randomJSONValue(rng, 0).(map[string]any); ok {
			for k, v := range m {
				obj[k] = v
			}
		}
		lv, err := Value(L, obj)
		require.NoError(t, err)
		want, wantErr := unmarshalViaText(L, lv, obj)
		require.NoError(t, wantErr)
		got := &unstructured.Unstructured{}
		require.NoError(t, Unmarshal(L, lv, got, obj))
		assert.Equal(t, want.Object, got.Object, "object %d: %#v", i, obj)
	}
}

// TestKubeUnmarshalUnstructuredDirect: an Unstructured built from the
// tables (unstructuredDirect) is the one the text gives, against every
// kind of reference the fix-up reads — none, the object itself, another
// object, both — on tables made by scripts (nested empty tables at paths
// the references hold as empty objects or arrays, nulls, shared and
// sparse tables, NaN, invalid UTF-8, objects returned untouched or
// partly changed) and on random objects both eager and lazy; and it
// declines, rather than differs, wherever the tree route could end
// otherwise.
func TestKubeUnmarshalUnstructuredDirect(t *testing.T) {
	L := luaapi.NewState(luaapi.SandboxOptions{})
	defer L.Close()
	ref := map[string]any{"kind": "K", "metadata": map[string]any{"labels": map[string]any{}}, "spec": map[string]any{
		"e": map[string]any{}, "a": []any{}, "list": []any{map[string]any{"o": map[string]any{}, "x": []any{}}}}}
	compare := func(lv lua.LValue, refs []any, what string) bool {
		t.Helper()
		want, wantErr := unmarshalViaText(L, lv, refs...)
		got := &unstructured.Unstructured{}
		gotErr := Unmarshal(L, lv, got, refs...)
		if wantErr != nil {
			require.Error(t, gotErr, what)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), what)
		} else {
			require.NoError(t, gotErr, what)
			assert.Equal(t, want.Object, got.Object, what)
		}
		tb, ok := lv.(*lua.LTable)
		if !ok {
			return false
		}
		obj, direct := unstructuredDirect(L, tb, refs)
		if direct {
			require.NoError(t, wantErr, "%s: built where the text fails", what)
			assert.Equal(t, want.Object, obj, what)
		}
		return direct
	}
	refSets := [][]any{nil, {ref}, {map[string]any{"spec": map[string]any{"e": []any{}, "a": map[string]any{}}}}, {ref, &unstructured.Unstructured{Object: ref}}}
	scripts := []string{
		`return {apiVersion="v1", kind="K", metadata={name="x", labels={}}, spec={e={}, a={}, other={}, list={{o={}, x={}, y={}}, {}}, deep={e={}}}}`,
		`return {kind="K", n=null, arr={1, null, "s", {}, {a={}}}, num={1, 1.5, -0, 2^63, 2^62, 1e21, 1e-7, 9007199254740993}}`,
		`return {kind="K", s="<&> \226\128\168 é \\ \""}`,
		`return {kind="K", s="\255"}`,
		`return {kind="K", ["\255"]="x"}`,
		`local t = {a=1}; return {kind="K", x=t, y=t}`,
		`return {kind="K", a={[1]=1, [3]=3}}`,
		`return {kind="K", a={[1]=1, b=2}}`,
		`return {kind="K", a={b=1, [1]=2}}`,
		`return {kind="K", f=0/0}`,
		`return {kind="K", f=print}`,
		`return {kind=""}`,
		`return {apiVersion="v1"}`,
		`return {}`,
		`return {1, 2}`,
		`return {kind=3}`,
		`return {kind="K", apiVersion="a/b/c"}`,
		`return {kind="K", v={{}, {}}}`,
		`return {kind="K", spec={list={{}}}}`,
	}
	direct := 0
	for _, src := range scripts {
		res := mustRun(t, L, src)
		for i, refs := range refSets {
			if compare(res[0], refs, fmt.Sprintf("%s (references %d)", src, i)) {
				direct++
			}
		}
	}
	assert.Greater(t, direct, 10, "built directly from some scripts' tables")

	// Objects as the call's arguments are: lazy, returned untouched or
	// partly changed by a script.
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d", "labels": map[string]any{}, "annotations": nil},
		"spec":   map[string]any{"replicas": int64(3), "ratio": 0.5, "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "args": []any{}, "env": []any{nil}}}}}},
		"status": map[string]any{"conditions": []any{}, "observed": nil}}
	for _, change := range []string{``, `o.spec.replicas = 5`, `o.status = {}`, `o.metadata.labels.a = "b"`, `o.spec.template.spec.containers[1].args = {}`, `o.extra = o.spec`} {
		fn, err := L.LoadString(`return function(o) ` + change + ` return o end`)
		require.NoError(t, err)
		for i, refs := range [][]any{nil, {obj}} {
			lazy, err := Lazy(L, obj)
			require.NoError(t, err)
			L.Push(fn)
			require.NoError(t, L.PCall(0, 1, nil))
			f := L.Get(-1)
			L.Pop(1)
			L.Push(f)
			L.Push(lazy)
			require.NoError(t, L.PCall(1, 1, nil))
			res := L.Get(-1)
			L.Pop(1)
			compare(res, refs, fmt.Sprintf("lazy object, %q (references %d)", change, i))
			luaapi.EndLazy(L)
		}
	}

	// Random objects, eager and lazy, against random references.
	rng := rand.New(rand.NewPCG(11, 12))
	direct = 0
	for i := range 400 {
		o := map[string]any{"kind": "K", "apiVersion": "g/v"}
		if m, ok := randomJSONValue(rng, 0).(map[string]any); ok {
			for k, v := range m {
				o[k] = v
			}
		}
		other := map[string]any{"kind": "K"}
		if m, ok := randomJSONValue(rng, 0).(map[string]any); ok {
			other["spec"] = m
		}
		refs := [][]any{nil, {o}, {other}, {o, other}}[i%4]
		lv, err := Value(L, o)
		require.NoError(t, err)
		if compare(lv, refs, fmt.Sprintf("random %d: %#v", i, o)) {
			direct++
		}
		lazy, err := Lazy(L, o)
		require.NoError(t, err)
		if compare(lazy, refs, fmt.Sprintf("random %d, lazy: %#v", i, o)) {
			direct++
		}
		luaapi.EndLazy(L)
	}
	assert.Greater(t, direct, 700, "built directly from most random objects")
}
