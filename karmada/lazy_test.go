package karmada

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kartalua/karta/internal/conformance"
)

// outcome is an operation's results and error text, for comparing the
// lazy arguments (kube.Lazy) with eager ones (kube.Value).
type outcome struct {
	Results []Result
	Err     string
}

func runOutcome(in *Interpreter, op Operation, tc *TestCase) outcome {
	res, err := in.RunOperation(context.Background(), op, tc)
	for i, r := range res {
		if u, ok := r.Value.(*unstructured.Unstructured); ok {
			res[i].Value = &unstructured.Unstructured{Object: maskNow(u.Object).(map[string]any)}
		}
	}
	o := outcome{Results: res}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

// maskNow replaces the time stamps a script wrote from the clock (os.date:
// RFC 3339 texts within an hour of now) with one placeholder, so that two
// runs a second apart compare equal, as the corpus's {{EXCLUDE}} makes its
// expected outputs.
func maskNow(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = maskNow(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = maskNow(e)
		}
		return out
	case string:
		if t, err := time.Parse(time.RFC3339, x); err == nil && time.Since(t).Abs() < time.Hour {
			return "<now>"
		}
	}
	return v
}

// TestLazyArgumentsAgreeWithEagerOverCorpus runs every case of Karmada's
// corpus with arguments as lazy tables and as eager ones: results and
// errors are equal, on a fresh state and on a reused one.
func TestLazyArgumentsAgreeWithEagerOverCorpus(t *testing.T) {
	conformanceDir := conformance.Require(t)
	ctx := context.Background()
	cases := 0
	err := filepath.WalkDir(conformanceDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "customizations.yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		custs, err := Load(data, path)
		require.NoError(t, err)
		tcs, err := loadKindCases(filepath.Join(filepath.Dir(path), "testdata"))
		require.NoError(t, err)
		lazy := newInterp(t, Options{PoolSize: 1}, custs...)
		eager := newInterp(t, Options{PoolSize: 1}, custs...)
		eager.eagerArgs = true
		for _, tc := range tcs {
			op, ok := operationByName(tc.Operation)
			require.True(t, ok, tc.Operation)
			want := runOutcome(eager, op, tc)
			for round := range 2 {
				assert.Equal(t, want, runOutcome(lazy, op, tc), "%s %s %s (round %d)", path, tc.Operation, tc.Name, round)
			}
			cases++
		}
		_ = ctx
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, cases, 500)
	t.Logf("%d cases agree", cases)
}

// lazyWidget is a Widget with what conversion has rules for: nulls as
// members and elements, empty objects and arrays, numbers of several Go
// types, nested arrays.
func lazyWidget() *unstructured.Unstructured {
	return widget(map[string]any{
		"spec": map[string]any{
			"replicas": int64(3),
			"ratio":    0.25,
			"gone":     nil,
			"list":     []any{"b", nil, "a", "c"},
			"empty":    map[string]any{},
			"none":     []any{},
			"nested":   map[string]any{"z": []any{map[string]any{"k": "v", "n": nil}, []any{int64(1), 2.5}}, "a": true},
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}},
		},
		"status": map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	})
}

// TestLazyArgumentsHostile runs scripts that read their arguments every
// way the sandbox allows — pairs, next, #, ipairs, unpack, table.*,
// mutation, aliasing, identity, returning untouched subtrees, errors —
// with lazy and with eager arguments: the outcomes are equal.
func TestLazyArgumentsHostile(t *testing.T) {
	objects := map[string]func() *unstructured.Unstructured{
		"widget": lazyWidget,
		"deep": func() *unstructured.Unstructured {
			deep := map[string]any{}
			cur := deep
			for range 1100 {
				next := map[string]any{}
				cur["d"] = next
				cur = next
			}
			return widget(map[string]any{"spec": deep})
		},
		"nan": func() *unstructured.Unstructured {
			return widget(map[string]any{"spec": map[string]any{"x": math.NaN()}})
		},
		"typed": func() *unstructured.Unstructured {
			return widget(map[string]any{"spec": map[string]any{"labels": map[string]string{"a": "b"}, "n": int32(2)}})
		},
	}
	status := func(body string) map[Operation]string {
		return map[Operation]string{OpInterpretStatus: "function ReflectStatus(obj)\n" + body + "\nend"}
	}
	revise := func(body string) map[Operation]string {
		return map[Operation]string{OpReviseReplica: "function ReviseReplica(obj, n)\n" + body + "\nend"}
	}
	retain := func(body string) map[Operation]string {
		return map[Operation]string{OpRetain: "function Retain(desired, observed)\n" + body + "\nend"}
	}
	aggregate := func(body string) map[Operation]string {
		return map[Operation]string{OpAggregateStatus: "function AggregateStatus(desired, items)\n" + body + "\nend"}
	}
	scripts := map[string]map[Operation]string{
		"aggregate items": aggregate(`desired.status = {} for i, it in ipairs(items) do
			desired.status[it.clusterName] = it.status desired.status.n = #items end return desired`),
		"aggregate pairs": aggregate(`local ks = {} for k in pairs(items[1]) do ks[#ks+1] = k end
			for k in pairs(items[1].status) do ks[#ks+1] = k end desired.status = {keys = table.concat(ks, ",")} return desired`),
		"aggregate alias": aggregate(`desired.status = items[1].status desired.spec.same = items[1].status return desired`),
		"pairs order": status(`local ks = {} for k, v in pairs(obj) do ks[#ks+1] = k end
			local ss = {} for k in pairs(obj.spec) do ss[#ss+1] = k end
			return {top = table.concat(ks, ","), spec = table.concat(ss, ",")}`),
		"next and len": status(`local k = next(obj.spec.nested) return {k = k, n = #obj.spec.list, e = next(obj.spec.empty), m = #obj.spec.none}`),
		"ipairs unpack": status(`local out = {} for i, v in ipairs(obj.spec.list) do out[i] = v .. i end
			local a, b = unpack(obj.spec.nested.z[2]) out[#out+1] = a + b return out`),
		"table library": status(`table.insert(obj.spec.list, "x") table.sort(obj.spec.list)
			local r = table.remove(obj.spec.nested.z) return {s = table.concat(obj.spec.list, "+"), r = r}`),
		"untouched status":    status(`return obj.status`),
		"untouched array":     status(`return obj.spec.nested.z`),
		"untouched empty":     status(`return obj.spec.empty`),
		"whole object":        status(`return obj`),
		"identity":            status(`local s = obj.spec return {same = s == obj.spec, t = type(s.nested)}`),
		"alias untouched":     status(`obj.status.copy = obj.spec return obj`),
		"alias touched":       status(`local x = obj.spec.replicas obj.status.copy = obj.spec return obj`),
		"self reference":      status(`obj.spec.self = obj return obj`),
		"index nil":           status(`return obj.spec.missing.field`),
		"arith on table":      status(`return {x = obj.spec + 1}`),
		"compare tables":      status(`return {x = obj.spec < obj.status}`),
		"tostring type":       status(`return {t = type(obj.metadata), n = tostring(obj.spec.ratio)}`),
		"mutate and return":   revise(`obj.spec.replicas = n obj.spec.list[2] = nil obj.spec.nested = nil return obj`),
		"new member":          revise(`obj.spec.added = {n = n} obj.metadata.labels = {} return obj`),
		"return untouched":    revise(`return obj`),
		"fill then replace":   revise(`local l = obj.spec.list obj.spec = {replicas = n, list = l} return obj`),
		"retain observed":     retain(`desired.spec = observed.spec return desired`),
		"retain whole":        retain(`return observed`),
		"retain same twice":   retain(`desired.spec.a = observed.status desired.spec.b = observed.status return desired`),
		"retain loop keys":    retain(`for k, v in pairs(observed.spec) do if desired.spec[k] == nil then desired.spec[k] = v end end return desired`),
		"retain mixed tables": retain(`desired.spec.list[10] = "sparse" return desired`),
	}
	for name, sc := range scripts {
		for oname, obj := range objects {
			t.Run(name+"/"+oname, func(t *testing.T) {
				lazy := newInterp(t, Options{PoolSize: 1}, cust("c", sc))
				eager := newInterp(t, Options{PoolSize: 1}, cust("c", sc))
				eager.eagerArgs = true
				for op := range sc {
					tc := &TestCase{Operation: string(op), DesiredObj: obj(), InputReplicas: 5, StatusItems: []AggregatedStatusItem{
						{ClusterName: "m1", Applied: true, Health: "Healthy", Status: &runtime.RawExtension{Raw: []byte(`{"ready":2,"list":[1,null,"x"],"gone":null,"o":{"b":1,"a":{}}}`)}},
						{ClusterName: "m2", Status: &runtime.RawExtension{}},
					}}
					if op == OpRetain {
						tc.DesiredObj, tc.ObservedObj = lazyWidget(), obj()
					}
					want := runOutcome(eager, op, tc)
					t.Logf("%s: %+v", op, want)
					for round := range 2 {
						assert.Equal(t, want, runOutcome(lazy, op, tc), "round %d", round)
					}
					// The arguments' Go objects are never written to
					// (fmt prints NaN, which is not equal to itself).
					if op == OpRetain {
						assert.Equal(t, fmt.Sprint(obj()), fmt.Sprint(tc.ObservedObj), "observed object")
						assert.Equal(t, lazyWidget(), tc.DesiredObj, "desired object")
					} else {
						assert.Equal(t, fmt.Sprint(obj()), fmt.Sprint(tc.DesiredObj), "object")
					}
				}
			})
		}
	}
}

// itemsJSON is the value encoding/json's round trip gives the status
// items, as kube.Value converts them.
func TestItemsJSONIsTheJSONRoundTrip(t *testing.T) {
	raw := func(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }
	for name, items := range map[string][]AggregatedStatusItem{
		"empty": {},
		"full": {{ClusterName: "m1", Status: raw(` {"readyReplicas": 2, "ratio": 0.5, "msg": "a<b&c", "n": null, "l": [1, null, {}]} `),
			Applied: true, AppliedMessage: "ok", Health: "Healthy"}},
		"zero":        {{}},
		"nil raw":     {{ClusterName: "m2", Status: &runtime.RawExtension{}}},
		"scalar":      {{ClusterName: "m3", Status: raw(`3`)}, {ClusterName: "m4", Status: raw(`"s"`)}},
		"big numbers": {{Status: raw(`{"a": 12345678901234567890, "b": 1e400}`)}},
		"invalid":     {{ClusterName: "m5", Status: raw(`{"a":`)}},
	} {
		t.Run(name, func(t *testing.T) {
			data, err := json.Marshal(items)
			var want any
			if err == nil {
				err = json.Unmarshal(data, &want)
			}
			got, ok := itemsJSON(items)
			if err != nil {
				assert.False(t, ok, "encoding/json fails: %v", err)
				return
			}
			require.True(t, ok)
			assert.Equal(t, want, any(got))
		})
	}
}
