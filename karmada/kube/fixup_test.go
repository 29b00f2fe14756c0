package kube

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// emptyPathsViaJSON is what the fix-up did before collectEmptyGo: the
// reference marshalled and its text walked.
func emptyPathsViaJSON(t *testing.T, ref any) (arrays, objects map[string]bool) {
	t.Helper()
	data, err := json.Marshal(ref)
	require.NoError(t, err)
	n, err := parseJNode(data)
	require.NoError(t, err)
	arrays, objects = map[string]bool{}, map[string]bool{}
	collectEmpty(n, "", false, arrays, objects)
	return arrays, objects
}

func emptyPathsViaGo(t *testing.T, ref any) (arrays, objects map[string]bool) {
	t.Helper()
	arrays, objects = map[string]bool{}, map[string]bool{}
	require.True(t, collectEmptyGo(ref, "", false, arrays, objects), "%#v is walked without JSON", ref)
	return arrays, objects
}

// TestCollectEmptyGoAgreesWithJSON: the empty paths read from a
// reference's Go values are the ones its JSON text gives — nil maps and
// slices are null, array elements share their array's path, a key with a
// dot is joined as it is.
func TestCollectEmptyGoAgreesWithJSON(t *testing.T) {
	refs := []any{
		map[string]any{},
		map[string]any(nil),
		nil,
		[]any{},
		[]any{[]any{}, map[string]any{}, nil, []any{[]any{}}},
		map[string]any{"a": []any{}, "b": map[string]any{}, "c": []any(nil), "d": map[string]any(nil), "e": nil},
		map[string]any{"a.b": map[string]any{"c": []any{}}, "a": map[string]any{"b": map[string]any{"c": map[string]any{}}}},
		map[string]any{"list": []any{map[string]any{"labels": map[string]any{}}, map[string]any{"labels": []any{}}, 1, "x"}},
		map[string]any{"spec": map[string]any{"replicas": int64(3), "ratio": 0.5, "n": 2, "on": true, "s": ""}},
		&unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "spec": map[string]any{"volumes": []any{}, "nodeSelector": map[string]any{}}}},
		&unstructured.Unstructured{},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		refs = append(refs, randomJSONValue(rng, 0))
	}
	for i, ref := range refs {
		wantA, wantO := emptyPathsViaJSON(t, ref)
		gotA, gotO := emptyPathsViaGo(t, ref)
		assert.Equal(t, wantA, gotA, "empty arrays of reference %d: %#v", i, ref)
		assert.Equal(t, wantO, gotO, "empty objects of reference %d: %#v", i, ref)
	}
}

// TestCollectEmptyGoLeavesOtherValuesToJSON: values whose JSON the walk
// does not know are left to encoding/json, which also gives Karmada's
// error for a value JSON cannot hold — whether or not the result has an
// empty table to repair.
func TestCollectEmptyGoLeavesOtherValuesToJSON(t *testing.T) {
	type typed struct {
		Items []string `json:"items"`
	}
	for _, ref := range []any{
		map[string]any{"x": typed{Items: []string{}}},
		map[string]any{"x": []string{}},
		map[string]any{"x": math.NaN()},
		map[string]any{"x": []any{math.Inf(1)}},
		(*unstructured.Unstructured)(nil),
	} {
		assert.False(t, collectEmptyGo(ref, "", false, nil, nil), "%#v", ref)
	}
	arrays, objects := map[string]bool{}, map[string]bool{}
	require.False(t, collectEmptyGo(map[string]any{"x": typed{Items: []string{}}}, "", false, arrays, objects))
	assert.Empty(t, arrays, "nothing recorded when the walk gives up")

	for _, in := range []string{`{"a":1}`, `{"a":[]}`} {
		_, err := fixEmptyJSON([]byte(in), true, map[string]any{"x": math.NaN()})
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "json marshal reference failed", in)
	}
	got, err := fixEmptyJSON([]byte(`{"x":{"items":[]},"y":[]}`), true, map[string]any{"x": typed{Items: []string{}}})
	require.NoError(t, err)
	assert.Equal(t, `{"x":{"items":[]}}`, string(got), "a typed reference's empty list is read from its JSON")
}

// randomJSONValue is a random value of JSON's Go types, with empty and nil
// maps and slices and dotted keys frequent.
func randomJSONValue(rng *rand.Rand, depth int) any {
	keys := []string{"a", "b", "a.b", "spec", "items", ""}
	n := rng.IntN(10)
	if depth > 4 {
		n = rng.IntN(4)
	}
	switch n {
	case 0:
		return nil
	case 1:
		return "s"
	case 2:
		return int64(rng.IntN(5))
	case 3:
		return rng.Float64()
	case 4:
		return []any{}
	case 5:
		return map[string]any{}
	case 6:
		if rng.IntN(2) == 0 {
			return []any(nil)
		}
		return map[string]any(nil)
	case 7:
		a := make([]any, rng.IntN(4))
		for i := range a {
			a[i] = randomJSONValue(rng, depth+1)
		}
		return a
	default:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[keys[rng.IntN(len(keys))]] = randomJSONValue(rng, depth+1)
		}
		return m
	}
}
