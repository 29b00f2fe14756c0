package jqdirect

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Direct evaluation must never be observable: where it gives a result,
// gojq gives the same one; where gojq fails, it declines. (Package
// interpreter checks that the hooks give what the Lua path gives.)

// directExprs cover every node of the direct subset and its edges.
var directExprs = []string{
	`.`, `.a`, `.a.b`, `.["a"]`, `."a"`, `.[0]`, `.[-1]`, `.[5]`, `.arr[1]`, `.arr[-1]`, `.arr[9]`,
	`.a[]`, `.a[]?`, `.a[]?.x`, `.a?`, `.a.b?`, `.m[]`, `[.m[]]`, `.a[0].x`, `.s[]?`, `.n.x?`,
	`.a // 1`, `.b // .n`, `(.a, .b) // 3`, `false // null // 2`, `empty // 1`, `.x // "d"`,
	`.a == .b`, `.n != 1`, `.n > 1`, `.n >= 3`, `.n < 1`, `.n <= 1`, `.s < "b"`, `.s == "héllo"`,
	`null < false`, `false < true`, `true < 0`, `0 < ""`, `.a == .a`, `.m == {}`,
	`.n + 1`, `.n - 1`, `.n * 2`, `.n / 2`, `.n / 0`, `null + .n`, `.n + null`, `.s + .s`, `.s + 1`, `-.n`, `-(.n)`,
	`[.a[]?]`, `[]`, `[.a[]? | select(.x == 1)] | length`, `[.a[]? | select(.x > 0)] | length > 0`,
	`length`, `.s | length`, `.m | length`, `.n | length`, `true | length`, `.arr | length`,
	`not`, `.a | not`, `.x | not`, `type`, `[.[] | type]`, `has("a")`, `.arr | has(0)`, `.arr | has(7)`,
	`map(.x)`, `.arr | map(. == null)`, `first(.a[]?)`, `first(empty)`, `[first(.a[]?.x, 1)]`,
	`if .n > 1 then "big" elif .n == 1 then "one" else "small" end`, `if .x then 1 end`,
	`.a and .b`, `.a or .b`, `[(true, false) and (true, false)]`, `[(true, false) or (false, true)]`,
	`[(1, 2) + (10, 20)]`, `[(1, 2) * (10, 20)]`, `tostring`, `.n | tostring`, `.m | tostring`, `.s | tostring`,
	`keys`, `.m | keys`, `.arr | keys[]`, `.m // {} | keys[]`, `.zz // {} | keys[]`, `{}`, `[{}]`,
	`.arr[]`, `(.n * 1000000) * 1000000000`, `.big`, `.big + 0`, `.f`, `.f * 2`, `1e3`, `0.5 + .n`,
	`.spec.replicatedJobs[]? | (.replicas // 1) * (.template.spec.parallelism // 1)`,
	`.metadata.labels["training.kubeflow.org/replica-type"]`, `.spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)`,
	// Outside the subset: never compiled, so always the Lua path.
	`.a as $x | $x`, `reduce .arr[] as $x (0; . + 1)`, `"\(.n)"`, `.arr[1:]`, `test("a")`, `.n % 2`, `{a: 1}`, `..`,
}

// directInputs are JSON texts decoded three ways: float64, json.Number and
// the int64 of client-go's unstructured.
var directInputs = []string{
	`{"a": [{"x": 1}, {"x": 2, "y": "s"}], "b": null, "n": 3, "s": "héllo", "m": {"z": 1, "a": 2}, "arr": [1, null, "x"], "x": false, "big": 9007199254740993, "f": 1.5}`,
	`{"a": "str", "n": 1.5, "s": "a", "m": {}, "arr": [], "x": true, "f": -0.25}`,
	`{"a": {"b": 1, "x": 4}, "n": 0, "arr": [[1], {"k": "v"}]}`,
	`{"a": [], "n": -2, "s": ""}`,
	`{"a": [1, 2], "n": null}`,
	`{"spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template": {"spec": {"parallelism": 4}}}, {"name": "d"}]}}`,
	`{"spec": {"replicatedJobs": "oops", "leaderWorkerTemplate": {"workerTemplate": {"spec": {}}}}, "metadata": {"labels": {"training.kubeflow.org/replica-type": "worker"}}}`,
	`{"spec": {"replicatedJobs": [{"replicas": "2"}], "leaderWorkerTemplate": {"leaderTemplate": false, "workerTemplate": 3}}, "metadata": {"labels": null}}`,
	`null`, `"text"`, `7`, `[1, "a", null, {"x": 2}]`, `true`, `{}`,
}

func decodeThreeWays(t *testing.T, text string) map[string]any {
	t.Helper()
	out := map[string]any{}
	var f any
	require.NoError(t, json.Unmarshal([]byte(text), &f))
	out["float64"] = f
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var n any
	require.NoError(t, dec.Decode(&n))
	out["json.Number"] = n
	if strings.HasPrefix(text, "{") {
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON([]byte(`{"apiVersion": "v1", "kind": "X", "x_": `+text+`}`)))
		out["int64"] = u.Object["x_"]
	}
	return out
}

func TestAgreesWithGojq(t *testing.T) {
	compiled, agreed, declined := 0, 0, 0
	for _, expr := range directExprs {
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		d := Compile(q)
		if d == nil {
			continue
		}
		compiled++
		ref, err := gojq.Compile(q)
		require.NoError(t, err, expr)
		for _, text := range directInputs {
			for form, in := range decodeThreeWays(t, text) {
				var s Scratch
				got, ok := d.Run(in, &s)
				s.Release()
				want, wantErr := gojqOutputs(ref, in)
				if !ok {
					declined++
					continue
				}
				require.NoError(t, wantErr, "jq %s on %s (%s): direct evaluation gave %v where gojq fails", expr, text, form, got)
				assert.Equal(t, normalJSON(t, want), normalJSON(t, got), "jq %s on %s (%s)", expr, text, form)
				assertLuaNumbers(t, got, expr)
				agreed++
			}
		}
	}
	for _, expr := range []string{`.a as $x | $x`, `"\(.n)"`, `.arr[1:]`, `.n % 2`, `{a: 1}`, `..`, `keys(.)`} {
		q, err := gojq.Parse(expr)
		require.NoError(t, err)
		assert.Nil(t, Compile(q), "%s is outside the direct subset", expr)
	}
	assert.Greater(t, compiled, 90)
	assert.Greater(t, agreed, 1500, "most evaluations are direct")
	assert.Greater(t, declined, 200, "the error cases decline")
}

// assertLuaNumbers checks that outputs carry numbers as FromLua does:
// int64 for integral values within ±2^53, float64 otherwise.
func assertLuaNumbers(t *testing.T, outs []any, expr string) {
	t.Helper()
	for _, v := range outs {
		switch x := v.(type) {
		case float64:
			assert.False(t, x == float64(int64(x)) && x <= maxExactFloat && x >= -maxExactFloat, "jq %s: integral %v must be an int64", expr, x)
		case int, int32, float32, json.Number:
			assert.Failf(t, "not a Lua number", "jq %s: %T %v", expr, v, v)
		case []any:
			// Built arrays hold converted numbers; the object's own arrays
			// are the object's values.
		}
	}
}

// TestWorkIsBounded: an expression whose work explodes on a hostile
// object declines after directStepBudget steps (the caller's Lua path then
// ends the call with its instruction limit).
func TestWorkIsBounded(t *testing.T) {
	xs := make([]any, 3000)
	for i := range xs {
		xs[i] = int64(i)
	}
	for _, tc := range []struct {
		expr string
		obj  map[string]any
		ok   bool
	}{
		{`[(.x[]) + (.x[])] | length`, map[string]any{"x": xs}, false},
		{`[(.x[]) + (.x[])] | length`, map[string]any{"x": xs[:100]}, true},
		{`[.x[] | .y[] | .z[]] | length`, map[string]any{"x": []any{map[string]any{"y": []any{map[string]any{"z": xs}}}}}, true},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err)
		d := Compile(q)
		require.NotNil(t, d)
		var s Scratch
		_, ok := d.Run(tc.obj, &s)
		s.Release()
		assert.Equal(t, tc.ok, ok, tc.expr)
	}
}

// TestBuffersKeepNothing: the pooled buffers are cleared when freed,
// grown ones included, so that a pool never keeps an object alive.
func TestBuffersKeepNothing(t *testing.T) {
	obj := map[string]any{"a": []any{}}
	for i := range 100 {
		obj["a"] = append(obj["a"].([]any), map[string]any{"x": int64(i), "big": strings.Repeat("x", 1000)})
	}
	for _, expr := range []string{`[.a[] | select(.x > 3) | .big] | length`, `.a[]?.x // 1`, `[(.a[].x) + (.a[0].x)] | length > 0`} {
		q, err := gojq.Parse(expr)
		require.NoError(t, err)
		d := Compile(q)
		require.NotNil(t, d)
		s := Scratch{c: &dctx{}}
		outs, ok := d.Run(obj, &s)
		require.True(t, ok, expr)
		require.NotEmpty(t, outs)
		assert.Zero(t, s.c.top, "every buffer was given back")
		for _, b := range s.c.bufs {
			for _, v := range b[:cap(b)] {
				assert.Nil(t, v, "%s: a freed buffer holds a value", expr)
			}
		}
	}
}

// gojqOutputs runs code on in as the gojq back end does: every output, or
// the first error.
func gojqOutputs(code *gojq.Code, in any) ([]any, error) {
	var outs []any
	iter := code.Run(jqvalue.Input(in))
	for {
		v, ok := iter.Next()
		if !ok {
			return outs, nil
		}
		if err, ok := v.(error); ok {
			return nil, err
		}
		outs = append(outs, v)
	}
}

// normalJSON is outs as JSON decodes it, so that number types compare.
func normalJSON(t *testing.T, outs []any) any {
	t.Helper()
	if len(outs) == 0 {
		return []any{}
	}
	b, err := gojq.Marshal(jqvalue.Input(outs))
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}
