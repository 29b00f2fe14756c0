package luaapi

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// unmarshalViaText is KubeUnmarshal into an Unstructured the way Karmada
// does it, through the JSON text.
func unmarshalViaText(L *lua.LState, lv lua.LValue, refs ...any) (*unstructured.Unstructured, error) {
	data, err := KubeResultJSON(L, lv, true, refs...)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, u); err != nil {
		return nil, &ConvertError{Path: "result", Msg: err.Error()}
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
	L := NewState(SandboxOptions{})
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
			gotErr := KubeUnmarshal(L, res[0], got, rs...)
			if wantErr != nil {
				require.Error(t, gotErr, src)
				assert.Equal(t, wantErr.Error(), gotErr.Error(), src)
				continue
			}
			require.NoError(t, gotErr, src)
			assert.Equal(t, want.Object, got.Object, src)
		}
	}

	// Random objects, through KubeValue and back.
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		obj := map[string]any{"kind": "K", "apiVersion": "g/v"}
		if m, ok := randomJSONValue(rng, 0).(map[string]any); ok {
			for k, v := range m {
				obj[k] = v
			}
		}
		lv, err := KubeValue(L, obj)
		require.NoError(t, err)
		want, wantErr := unmarshalViaText(L, lv, obj)
		require.NoError(t, wantErr)
		got := &unstructured.Unstructured{}
		require.NoError(t, KubeUnmarshal(L, lv, got, obj))
		assert.Equal(t, want.Object, got.Object, "object %d: %#v", i, obj)
	}
}
