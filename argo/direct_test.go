package argo

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// results evaluates a Lua expression twice into the JSON value fromLua
// gives: the direct readers change their input in place, so each path gets
// its own.
func results(t *testing.T, expr string) (any, any) {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	var out [2]any
	for i := range out {
		require.NoError(t, L.DoString("return "+expr), expr)
		x, err := fromLua(L, L.Get(-1))
		require.NoError(t, err, expr)
		L.Pop(1)
		out[i] = x
	}
	return out[0], out[1]
}

// TestHealthDirectIsJSON: where healthDirect reads a result, it reads what
// the JSON path reads; where it declines, the JSON path decides.
func TestHealthDirectIsJSON(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		direct bool
	}{
		{`{status = "Healthy", message = "ok"}`, true},
		{`{status = "Bogus"}`, true},
		{`{message = "no status"}`, true},
		{`{status = 1, message = "m"}`, true},
		{`{status = "Degraded", message = true}`, true},
		{`{status = "Degraded", extra = {1, 2}, more = {a = 1}}`, true},
		{`{status = "Suspended", message = "\255"}`, true},
		{`{Status = "Healthy"}`, false},
		{`{status = "Healthy", MESSAGE = "x"}`, false},
		{`{}`, false},
		{`{"Healthy"}`, false},
	} {
		x, y := results(t, tc.expr)
		got, ok := healthDirect(x)
		assert.Equal(t, tc.direct, ok, tc.expr)
		want, err := healthJSON(y)
		require.NoError(t, err, tc.expr)
		if ok {
			assert.Equal(t, want, got, tc.expr)
		}
	}
}

func TestActionDirectIsJSON(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		direct bool
	}{
		{`{}`, true},
		{`{true}`, true},
		{`{disabled = true}`, true},
		{`{disabled = false, name = "renamed", iconClass = "fa", displayName = "Go"}`, true},
		{`{hasParameters = true, regexp = "x"}`, true},
		{`{disabled = "yes"}`, false},
		{`{params = {{name = "n", type = "number"}}}`, false},
		{`{IconClass = "fa"}`, false},
		{`{displayname = "x"}`, false},
		{`{name = 3}`, false},
	} {
		x, y := results(t, tc.expr)
		got := Action{Name: "a", Disabled: disabled(x)}
		ok := actionDirect(x, &got)
		assert.Equal(t, tc.direct, ok, tc.expr)
		if !ok {
			continue
		}
		want := Action{Name: "a", Disabled: disabled(y)}
		require.NoError(t, actionJSON(y, &want), tc.expr)
		assert.Equal(t, want, got, tc.expr)
	}
}

// TestActionResultDirectIsJSON compares whole results, number types
// included: Argo CD's decoding keeps integral numbers as int64.
func TestActionResultDirectIsJSON(t *testing.T) {
	numbers := `{one = 1, half = 1.5, exact = 2^53, big = 2^62 * 1.5, edge = 2^63, low = -2^63, under = -2^63 * 2,
		negzero = -(0.0), plain = 1e20, exp = 1e21, tiny = 1e-7, neg = -3, list = {1, 2.5, {x = 3}, {}}, s = "7"}`
	for _, tc := range []struct {
		expr   string
		direct bool
	}{
		{`{apiVersion = "v1", kind = "ConfigMap", metadata = {name = "c"}, data = {a = "1"}, spec = ` + numbers + `}`, true},
		{`{kind = "Widget", spec = {}}`, true},
		{`{{operation = "create", resource = {apiVersion = "batch/v1", kind = "Job", metadata = {name = "j"}, spec = ` + numbers + `}},
		  {operation = "patch", resource = {apiVersion = "apps/v1", kind = "Deployment", spec = {replicas = 3}}, note = "x"}}`, true},
		{`{}`, true},
		{`{kind = ""}`, false},
		{`{apiVersion = "a/b/c", kind = "X"}`, false},
		{`{kind = 3}`, false},
		{`{{operation = "delete", resource = {kind = "X"}}}`, false},
		{`{{Operation = "create", operation = "create", resource = {kind = "X"}}}`, false},
		{`{{operation = "create", resource = {apiVersion = "v1"}}}`, false},
		{`{{operation = "create"}}`, false},
		{`{"x"}`, false},
	} {
		x, y := results(t, tc.expr)
		got, ok := actionResultDirect(x)
		assert.Equal(t, tc.direct, ok, tc.expr)
		if !ok {
			continue
		}
		want, err := actionResultJSON(y)
		require.NoError(t, err, tc.expr)
		assert.Equal(t, want, got, tc.expr)
	}
}

// TestPreserveIntsIsJSON compares preserveInts with the JSON text read
// back by Unstructured on numbers of every magnitude, integral or not.
func TestPreserveIntsIsJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 5))
	values := []float64{0, math.Copysign(0, -1), 1, -1, 1 << 53, 1<<53 + 2, 1 << 62, 1 << 63, -(1 << 63), 1e20, 1e21, 1e-7, 0.5, math.MaxFloat64, -math.MaxFloat64}
	for range 2000 {
		f := math.Ldexp(r.Float64(), r.IntN(80)-10)
		if r.IntN(2) == 0 {
			f = math.Trunc(f)
		}
		if r.IntN(2) == 0 {
			f = -f
		}
		values = append(values, f)
	}
	for _, f := range values {
		data, err := json.Marshal(map[string]any{"kind": "X", "n": f})
		require.NoError(t, err)
		var u unstructured.Unstructured
		require.NoError(t, u.UnmarshalJSON(data))
		assert.Equal(t, u.Object["n"], preserveInts(f), "%v (%s)", f, data)
	}
}
