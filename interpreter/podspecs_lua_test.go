package interpreter

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/luaapi"
)

// podSpecsValue is what the JSON round trip it replaces gave
// (jsonValue(res)["items"]), as a script's tables see it.
func TestPodSpecsValueIsTheJSONRoundTrip(t *testing.T) {
	tpl := map[string]any{"metadata": map[string]any{"creationTimestamp": nil}, "spec": map[string]any{
		"containers": []any{map[string]any{"name": "c", "ports": []any{map[string]any{"containerPort": json.Number("80")}}}},
	}}
	for name, res := range map[string]*PodSpecs{
		"none": {Items: []PodSpecItem{}},
		"a template and a scale": {Items: []PodSpecItem{{
			Component: "head", Instance: "", PodTemplateSpec: tpl,
			Scale: &Scale{Replicas: ptr[int64](2), MaxReplicas: ptr[int64](1 << 60)},
		}}},
		"a pod spec, metadata, empty maps": {Items: []PodSpecItem{{
			Component: "w", Instance: "0", PodSpec: map[string]any{}, Metadata: map[string]any{"labels": map[string]any{}},
			Scale: &Scale{},
		}}},
		"fragmented, every field": {Items: []PodSpecItem{{Component: "driver", Fragmented: &Fragmented{
			SchedulerName: ptr("s"), Labels: map[string]any{"a": "b"}, Annotations: map[string]any{"x": "y"},
			Resources: map[string]any{"requests": map[string]any{"cpu": json.Number("1.0")}}, ResourceClaims: []any{map[string]any{"name": "gpu"}},
			PodAffinity: map[string]any{"a": true}, NodeAffinity: map[string]any{"n": 1.5}, Containers: []any{map[string]any{"name": "c"}},
			Container: map[string]any{"name": "main"}, PriorityClassName: ptr(""), Image: ptr("img"),
		}}}},
		"fragmented, empty fields left out": {Items: []PodSpecItem{{Component: "executor", Fragmented: &Fragmented{
			Labels: map[string]any{}, Containers: []any{}, Container: map[string]any{},
		}}}},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := jsonValue(res)
			require.NoError(t, err)
			want, err := luaapi.NormalizeJSON(v.(map[string]any)["items"])
			require.NoError(t, err)
			got, err := luaapi.NormalizeJSON(podSpecsValue(res))
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// podSpecItems reads exactly what encoding/json would, or declines: for
// every input, an accepted answer is the JSON decoder's (as JSON), and the
// shapes scripts return are accepted.
func TestPodSpecItemsAgreesWithJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		g      any
		accept bool
	}{
		{"empty", []any{}, true},
		{"a template item", []any{map[string]any{"component": "head", "instance": "", "podTemplateSpec": map[string]any{"spec": map[string]any{"containers": []any{}}}}}, true},
		{"every field", []any{map[string]any{
			"component": "w", "instance": "1", "podSpec": map[string]any{"a": int64(1)}, "metadata": map[string]any{},
			"scale": map[string]any{"replicas": int64(3), "minReplicas": int64(0), "maxReplicas": int64(1 << 53)},
			"fragmented": map[string]any{
				"schedulerName": "s", "labels": map[string]any{"a": "b"}, "annotations": map[string]any{}, "resources": map[string]any{"requests": map[string]any{"cpu": "1"}},
				"resourceClaims": []any{}, "podAffinity": map[string]any{}, "nodeAffinity": map[string]any{}, "containers": []any{map[string]any{"name": "c"}},
				"container": map[string]any{"name": "c"}, "priorityClassName": "p", "image": "i",
				"initContainers": []any{map[string]any{"name": "init"}},
			},
		}}, true},
		{"a field in another case", []any{map[string]any{"Component": "x"}}, false},
		{"an unknown field", []any{map[string]any{"component": "x", "replicas": int64(3)}}, false},
		{"an unknown fragment", []any{map[string]any{"fragmented": map[string]any{"nodeSelector": map[string]any{}}}}, false},
		{"a null component", []any{map[string]any{"component": nil}}, false},
		{"a null template", []any{map[string]any{"podTemplateSpec": nil}}, false},
		{"a number for a string", []any{map[string]any{"component": int64(1)}}, false},
		{"a fractional replica count", []any{map[string]any{"scale": map[string]any{"replicas": 1.5}}}, false},
		{"a huge replica count", []any{map[string]any{"scale": map[string]any{"replicas": 1e20}}}, false},
		{"an array for a template", []any{map[string]any{"podTemplateSpec": []any{}}}, false},
		{"a null item", []any{nil}, false},
		{"an object for the list", map[string]any{"items": []any{}}, false},
		{"a string", "items", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, ok := podSpecItems(tc.g)
			assert.Equal(t, tc.accept, ok)
			var want []PodSpecItem
			jerr := decodeJSONValue(tc.g, &want)
			if !ok {
				return
			}
			require.NoError(t, jerr, "what the fast reader accepts, encoding/json accepts")
			wb, err := json.Marshal(want)
			require.NoError(t, err)
			gb, err := json.Marshal(items)
			require.NoError(t, err)
			assert.JSONEq(t, string(wb), string(gb))
			assert.Equal(t, string(wb), string(gb), "byte for byte")
		})
	}
}

// An override of GetPodSpecs sees its object as tables it may change: what
// it changes reaches karta.generated.GetPodSpecs (the filled tables are
// converted, not the object's own value used), the caller's object is never
// written, and a part of the object returned untouched is normalized as the
// eager tables were (a null member absent, numbers as FromLua makes them).
func TestOverrideGetPodSpecsLazyObject(t *testing.T) {
	p := progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "pods.lua", Source: `
function GetPodSpecs(obj)
  obj.spec.template.spec.containers[1].image = "nginx:2"
  obj.metadata.labels.touched = "yes"
  local items = karta.generated.GetPodSpecs(obj)
  items[#items + 1] = {component = "copy", instance = "", podTemplateSpec = obj.spec.template}
  items[#items + 1] = {component = "raw", instance = "", podSpec = obj.status}
  return items
end
`}}})
	obj := deploymentObjs(t)[0]
	obj.Object["status"].(map[string]any)["nothing"] = nil
	obj.Object["status"].(map[string]any)["ratio"] = json.Number("2.0")
	before := obj.DeepCopy()
	specs, err := p.GetPodSpecs(context.Background(), obj)
	require.NoError(t, err)
	assert.Equal(t, before, obj, "the caller's object is not written")
	require.Len(t, specs.Items, 3)
	for _, it := range specs.Items[:2] {
		c := it.PodTemplateSpec["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		assert.Equal(t, "nginx:2", c["image"], "%s: the script's change is seen", it.Component)
	}
	raw := specs.Items[2].PodSpec
	assert.NotContains(t, raw, "nothing", "a null member is absent, as from the eager tables")
	assert.Equal(t, int64(2), raw["ratio"])
	assert.Equal(t, int64(3), raw["replicas"])

	// The answer the eager conversion gave: an override that only passes
	// the object on returns the generated answer as the tables carry it
	// (numbers as FromLua makes them: 1.28e8 is 128000000).
	pass := progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "pass.lua",
		Source: `function GetPodSpecs(obj) return karta.generated.GetPodSpecs(obj) end`}}})
	plain := progCompile(t, deploymentKarta(t), Options{})
	asTables := func(res *PodSpecs) any {
		v, err := jsonValue(res)
		require.NoError(t, err)
		n, err := luaapi.NormalizeJSON(v)
		require.NoError(t, err)
		return n
	}
	for _, o := range deploymentObjs(t) {
		got, err := pass.GetPodSpecs(context.Background(), o)
		require.NoError(t, err)
		want, err := plain.GetPodSpecs(context.Background(), o)
		require.NoError(t, err)
		assert.Equal(t, asTables(want), asTables(got))
	}
}
