package interpreter

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// GetPodSpecs through the Program: instances, the three spec
// styles, type checks, scale, and aliasing.

// podsKarta is a Karta of kind example.com/v1 Trainer with the given child
// components (YAML list items, indented by 4 spaces).
func podsKarta(children string) string {
	return `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: pods-lab}
spec:
  structureDefinition:
    rootComponent:
      name: trainer
      kind: {group: example.com, version: v1, kind: Trainer}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
    childComponents:
` + children
}

// trainerObj is an example.com/v1 Trainer with the given spec (YAML, indented
// by 2 spaces).
func trainerObj(t testing.TB, spec string) *unstructured.Unstructured {
	t.Helper()
	return progObj(t, `
apiVersion: example.com/v1
kind: Trainer
metadata: {name: t, namespace: ns}
spec:
`+spec)
}

// podSpecsErr runs GetPodSpecs and returns its error text without the
// `karta "pods-lab": GetPodSpecs: ` prefix, which it checks.
func podSpecsErr(t *testing.T, p *Program, obj *unstructured.Unstructured) string {
	t.Helper()
	_, err := p.GetPodSpecs(context.Background(), obj)
	require.Error(t, err)
	return hookCause(t, p, HookGetPodSpecs, err)
}

func mustPodSpecs(t *testing.T, p *Program, obj *unstructured.Unstructured) []PodSpecItem {
	t.Helper()
	res, err := p.GetPodSpecs(context.Background(), obj)
	require.NoError(t, err)
	require.NotNil(t, res.Items)
	return res.Items
}

func instancesOf(items []PodSpecItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Component + "/" + it.Instance
	}
	return out
}

func TestPodSpecsInstances(t *testing.T) {
	p := progFrom(t, podsKarta(`
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      instanceIdPath: .spec.groups[]?.name
      specDefinition: {podTemplateSpecPath: '.spec.groups[]?.template'}
      scaleDefinition: {replicasPath: '.spec.groups[]? | .replicas'}
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: worker}
        componentInstanceSelector: {idPath: .metadata.labels.group}
`))
	t.Run("ids in output order, paired by position", func(t *testing.T) {
		items := mustPodSpecs(t, p, trainerObj(t, `
  groups:
  - {name: gpu-b, replicas: 4, template: {spec: {containers: [{name: b}]}}}
  - {name: gpu-a, replicas: 2, template: {spec: {containers: [{name: a}]}}}`))
		assert.Equal(t, []string{"worker/gpu-b", "worker/gpu-a"}, instancesOf(items))
		assert.Equal(t, int64(4), *items[0].Scale.Replicas)
		assert.Equal(t, "b", items[0].PodTemplateSpec["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["name"])
	})
	t.Run("numeric ids through tostring", func(t *testing.T) {
		items := mustPodSpecs(t, p, trainerObj(t, `
  groups:
  - {name: 0, replicas: 1, template: {}}
  - {name: 7, replicas: 1, template: {}}
  - {name: 2.5, replicas: 1, template: {}}
  - {name: 1e21, replicas: 1, template: {}}
  - {name: -3, replicas: 1, template: {}}`))
		assert.Equal(t, []string{"worker/0", "worker/7", "worker/2.5", "worker/1e+21", "worker/-3"}, instancesOf(items))
	})
	t.Run("no instances: no items", func(t *testing.T) {
		assert.Empty(t, mustPodSpecs(t, p, trainerObj(t, `  groups: []`)))
		assert.Empty(t, mustPodSpecs(t, p, trainerObj(t, `  other: 1`)))
	})
	t.Run("an absent instance is skipped", func(t *testing.T) {
		items := mustPodSpecs(t, p, trainerObj(t, `
  groups:
  - {name: a, replicas: 1, template: null}
  - {name: b, replicas: 2, template: {spec: {}}}`))
		assert.Equal(t, []string{"worker/b"}, instancesOf(items))
		assert.Equal(t, int64(2), *items[0].Scale.Replicas, "scales stay paired with their ids")
	})
	for _, tc := range []struct{ name, spec, err string }{{
		name: "a duplicate id names the component and the duplicates",
		spec: `
  groups:
  - {name: a, template: {}}
  - {name: b, template: {}}
  - {name: a, template: {}}
  - {name: b, template: {}}`,
		err: `component "worker": instanceIdPath yields duplicate id(s) [a b]`,
	}, {
		name: "a number and its string are duplicates",
		spec: `
  groups:
  - {name: 1, template: {}}
  - {name: "1", template: {}}`,
		err: `component "worker": instanceIdPath yields duplicate id(s) [1]`,
	}, {
		name: "a null id",
		spec: `
  groups:
  - {name: a, template: {}}
  - {template: {}}`,
		err: `component "worker": instanceIdPath output 2: an instance id must be a string or a number, got null`,
	}, {
		name: "an empty id",
		spec: `
  groups:
  - {name: "", template: {}}`,
		err: `component "worker": instanceIdPath output 1: an instance id may not be empty`,
	}, {
		name: "a boolean id",
		spec: `
  groups:
  - {name: true, template: {}}`,
		err: `component "worker": instanceIdPath output 1: an instance id must be a string or a number, got boolean true`,
	}, {
		name: "an object id",
		spec: `
  groups:
  - {name: {first: a}, template: {}}`,
		err: `component "worker": instanceIdPath output 1: an instance id must be a string or a number, got an object`,
	}, {
		name: "a jq error in the id path",
		spec: `
  groups: {a: 1}`,
		err: `component "worker": instanceIdPath: jq .spec.groups[]?.name: expected an object but got: number (1)`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.err, podSpecsErr(t, p, trainerObj(t, tc.spec)))
		})
	}
}

func TestPodSpecsZipErrors(t *testing.T) {
	// The ids and the templates live in different lists, as a careless
	// Karta might have them; zipping must catch a mismatch.
	p := progFrom(t, podsKarta(`
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      instanceIdPath: .spec.names[]
      specDefinition:
        podSpecPath: .spec.podSpecs[]
        metadataPath: .spec.metas[]
      scaleDefinition:
        replicasPath: .spec.replicas[]
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: worker}
        componentInstanceSelector: {idPath: .metadata.labels.group}
`))
	for _, tc := range []struct{ name, spec, err string }{{
		name: "spec path",
		spec: "  names: [a, b]\n  podSpecs: [{}]\n  metas: [{}, {}]\n  replicas: [1, 1]",
		err:  `component "worker": podSpecPath yields 1 value(s) for 2 id(s) [a b]`,
	}, {
		name: "metadata path",
		spec: "  names: [a, b]\n  podSpecs: [{}, {}]\n  metas: [{}, {}, {}]\n  replicas: [1, 1]",
		err:  `component "worker": metadataPath yields 3 value(s) for 2 id(s) [a b]`,
	}, {
		name: "scale path",
		spec: "  names: [a, b]\n  podSpecs: [{}, {}]\n  metas: [{}, {}]\n  replicas: []",
		err:  `component "worker": replicasPath yields 0 value(s) for 2 id(s) [a b]`,
	}, {
		name: "zero ids and one spec",
		spec: "  names: []\n  podSpecs: [{}]\n  metas: []\n  replicas: []",
		err:  `component "worker": podSpecPath yields 1 value(s) for 0 id(s) []`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.err, podSpecsErr(t, p, trainerObj(t, tc.spec)))
		})
	}
	t.Run("one template for two ids", func(t *testing.T) {
		// One shared template for named workers: one value for two ids.
		p := progFrom(t, podsKarta(`
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      instanceIdPath: .spec.workers[]?.name
      specDefinition: {podTemplateSpecPath: .spec.template}
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: worker}
        componentInstanceSelector: {idPath: .metadata.labels.worker}
`))
		assert.Equal(t, `component "worker": podTemplateSpecPath yields 1 value(s) for 2 id(s) [a b]`,
			podSpecsErr(t, p, trainerObj(t, "  workers: [{name: a}, {name: b}]\n  template: {spec: {}}")))
		items := mustPodSpecs(t, p, trainerObj(t, "  workers: [{name: a}]\n  template: {spec: {}}"))
		assert.Equal(t, []string{"worker/a"}, instancesOf(items))
	})
	items := mustPodSpecs(t, p, trainerObj(t, "  names: [a, b]\n  podSpecs: [{x: 1}, null]\n  metas: [{labels: {l: a}}, {labels: {l: b}}]\n  replicas: [1, 2]"))
	assert.Equal(t, []string{"worker/a"}, instancesOf(items), "a null pod spec is an absent instance")
	assert.Equal(t, map[string]any{"labels": map[string]any{"l": "a"}}, items[0].Metadata)
}

// TestPodSpecsStyles checks the three styles and the JSON shape of the
// items (docs/cli.md `karta pods`).
func TestPodSpecsStyles(t *testing.T) {
	p := progFrom(t, podsKarta(`
    - name: template
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition: {podTemplateSpecPath: .spec.template}
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: template}}
    - name: podspec
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition: {podSpecPath: .spec.sidecar}
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: podspec}}
    - name: podspec-meta
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition: {podSpecPath: .spec.transformer, metadataPath: .spec.transformer}
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: transformer}}
    - name: fragments
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition:
        fragmentedPodSpecDefinition:
          schedulerNamePath: .spec.predictor.schedulerName
          labelsPath: .spec.predictor.labels
          annotationsPath: .spec.predictor.annotations
          resourcesPath: .spec.predictor.model.resources
          resourceClaimsPath: .spec.predictor.resourceClaims
          podAffinityPath: .spec.predictor.affinity.podAffinity
          nodeAffinityPath: .spec.predictor.affinity.nodeAffinity
          containersPath: .spec.predictor.containers
          containerPath: .spec.predictor.model
          priorityClassNamePath: .spec.predictor.priorityClassName
          imagePath: '.spec.predictor.model | "\(.image):\(.tag)"'
      scaleDefinition: {}
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: predictor}}
`))
	full := trainerObj(t, `
  template:
    metadata: {labels: {app: trainer}}
    spec: {containers: [{name: main, image: trainer:1, resources: {limits: {cpu: 1500m, memory: 1.5Gi}}}], x-unknown: kept}
  sidecar: {containers: [{name: side}]}
  transformer:
    labels: {component: transformer}
    annotations: {a: b}
    containers: [{name: transformer, image: transformer:1}]
  predictor:
    schedulerName: kai-scheduler
    labels: {team: ml}
    annotations: {sidecar.istio.io/inject: "false"}
    resourceClaims: [{name: gpu, resourceClaimTemplateName: a100}]
    affinity:
      podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: []}
      nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: []}
    containers: [{name: agent, image: agent:1}]
    priorityClassName: high
    model: {image: triton, tag: "24.08", resources: {limits: {nvidia.com/gpu: 1}}}`)
	items := mustPodSpecs(t, p, full)
	require.Equal(t, []string{"template/", "podspec/", "podspec-meta/", "fragments/"}, instancesOf(items))

	b, err := json.Marshal(map[string]any{"items": items})
	require.NoError(t, err)
	var shape struct {
		Items []map[string]json.RawMessage `json:"items"`
	}
	require.NoError(t, json.Unmarshal(b, &shape))
	nonNull := func(m map[string]json.RawMessage) []string {
		var keys []string
		for k, v := range m {
			if string(v) != "null" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		return keys
	}
	for _, it := range shape.Items {
		assert.Len(t, it, 7, "every item has component, instance, the three styles, metadata and scale: %v", it)
	}
	assert.Equal(t, []string{"component", "instance", "podTemplateSpec"}, nonNull(shape.Items[0]))
	assert.Equal(t, []string{"component", "instance", "podSpec"}, nonNull(shape.Items[1]), "metadata is null without a metadataPath")
	assert.Equal(t, []string{"component", "instance", "metadata", "podSpec"}, nonNull(shape.Items[2]))
	assert.Equal(t, []string{"component", "fragmented", "instance"}, nonNull(shape.Items[3]), "scale {} is no scale definition")

	var frag map[string]any
	require.NoError(t, json.Unmarshal(shape.Items[3]["fragmented"], &frag))
	assert.Equal(t, map[string]any{
		"schedulerName":     "kai-scheduler",
		"labels":            map[string]any{"team": "ml"},
		"annotations":       map[string]any{"sidecar.istio.io/inject": "false"},
		"resources":         map[string]any{"limits": map[string]any{"nvidia.com/gpu": 1.0}},
		"resourceClaims":    []any{map[string]any{"name": "gpu", "resourceClaimTemplateName": "a100"}},
		"podAffinity":       map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{}},
		"nodeAffinity":      map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{}},
		"containers":        []any{map[string]any{"name": "agent", "image": "agent:1"}},
		"container":         map[string]any{"image": "triton", "tag": "24.08", "resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": 1.0}}},
		"priorityClassName": "high",
		"image":             "triton:24.08",
	}, frag)
	// Values as they are: unknown fields and quantity spellings survive.
	assert.JSONEq(t, `{"metadata":{"labels":{"app":"trainer"}},"spec":{"containers":[{"name":"main","image":"trainer:1","resources":{"limits":{"cpu":"1500m","memory":"1.5Gi"}}}],"x-unknown":"kept"}}`,
		string(shape.Items[0]["podTemplateSpec"]))

	// Fragments whose paths yield null are absent; a fragmented instance
	// is present even with no fragment at all.
	sparse := trainerObj(t, `
  template: {}
  sidecar: {}
  transformer: {}
  predictor:
    labels: null
    model: {image: triton}`)
	items = mustPodSpecs(t, p, sparse)
	require.Len(t, items, 4)
	b, err = json.Marshal(items[3].Fragmented)
	require.NoError(t, err)
	assert.JSONEq(t, `{"container":{"image":"triton"},"image":"triton:null"}`, string(b))
	items = mustPodSpecs(t, p, trainerObj(t, `  template: {}`))
	assert.Equal(t, []string{"template/", "fragments/"}, instancesOf(items), "podSpec instances with a null spec are absent, fragmented ones never")
	b, err = json.Marshal(items[1].Fragmented)
	require.NoError(t, err)
	assert.JSONEq(t, `{"image":"null:null"}`, string(b), "interpolation renders null as jq does")
}

func TestPodSpecsTypeErrors(t *testing.T) {
	p := progFrom(t, podsKarta(`
    - name: main
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      instanceIdPath: .spec.mains | keys[]
      specDefinition: {podTemplateSpecPath: '.spec.mains[]'}
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: main}
        componentInstanceSelector: {idPath: .metadata.labels.main}
    - name: side
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition: {podSpecPath: .spec.side.spec, metadataPath: .spec.side.meta}
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: side}}
    - name: frag
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition:
        fragmentedPodSpecDefinition:
          labelsPath: .spec.frag.labels
          annotationsPath: .spec.frag.annotations
          containersPath: .spec.frag.containers
          containerPath: .spec.frag.container
          imagePath: .spec.frag.image
          schedulerNamePath: .spec.frag.schedulerName
          resourceClaimsPath: .spec.frag.claims
          nodeAffinityPath: .spec.frag.nodeAffinity
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: frag}}
`))
	good := "  mains: {a: {}, b: {}}\n  side: {spec: {}, meta: {}}\n"
	for _, tc := range []struct{ name, spec, err string }{{
		name: "a template that is a string names the instance",
		spec: "  mains: {a: {}, b: nginx}",
		err:  `component "main" instance "b": podTemplateSpecPath must yield an object, got string "nginx"`,
	}, {
		name: "a pod spec that is an array",
		spec: "  mains: {}\n  side: {spec: [1], meta: {}}",
		err:  `component "side" instance "": podSpecPath must yield an object, got an array`,
	}, {
		name: "metadata that is a string",
		spec: "  mains: {}\n  side: {spec: {}, meta: labels}",
		err:  `component "side" instance "": metadataPath must yield an object, got string "labels"`,
	}, {
		name: "labels that are not a string map",
		spec: good + "  frag: {labels: {gpu: 8}}",
		err:  `component "frag" instance "": labelsPath: the value of "gpu" must be a string, got 8`,
	}, {
		name: "annotations that are a list",
		spec: good + "  frag: {annotations: [a]}",
		err:  `component "frag" instance "": annotationsPath must yield an object, got an array`,
	}, {
		name: "containers that are an object",
		spec: good + "  frag: {containers: {name: a}}",
		err:  `component "frag" instance "": containersPath must yield an array, got an object`,
	}, {
		name: "a container that is a list",
		spec: good + "  frag: {container: [{name: a}]}",
		err:  `component "frag" instance "": containerPath must yield an object, got an array`,
	}, {
		name: "an image that is a number",
		spec: good + "  frag: {image: 3}",
		err:  `component "frag" instance "": imagePath must yield a string, got 3`,
	}, {
		name: "a scheduler name that is a boolean",
		spec: good + "  frag: {schedulerName: false}",
		err:  `component "frag" instance "": schedulerNamePath must yield a string, got boolean false`,
	}, {
		name: "resource claims that are a string",
		spec: good + "  frag: {claims: gpu}",
		err:  `component "frag" instance "": resourceClaimsPath must yield an array, got string "gpu"`,
	}, {
		name: "a node affinity that is a string",
		spec: good + "  frag: {nodeAffinity: gpu}",
		err:  `component "frag" instance "": nodeAffinityPath must yield an object, got string "gpu"`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.err, podSpecsErr(t, p, trainerObj(t, tc.spec)))
		})
	}
	items := mustPodSpecs(t, p, trainerObj(t, good+"  frag: {}"))
	assert.Equal(t, []string{"main/a", "main/b", "side/", "frag/"}, instancesOf(items), "ids sorted by keys[]")
}

func TestPodSpecsScale(t *testing.T) {
	p := progFrom(t, podsKarta(`
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition: {podTemplateSpecPath: .spec.template}
      scaleDefinition:
        replicasPath: .spec.replicas
        minReplicasPath: .spec.min
        maxReplicasPath: .spec.max
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: worker}}
`))
	i64 := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name, spec string
		want       *Scale
		err        string
	}{
		{name: "nulls", spec: "  replicas: null", want: &Scale{}},
		{name: "integers", spec: "  replicas: 3\n  min: 0\n  max: 2147483647", want: &Scale{Replicas: i64(3), MinReplicas: i64(0), MaxReplicas: i64(2147483647)}},
		{name: "an integral float", spec: "  replicas: 4.0\n  max: 1e3", want: &Scale{Replicas: i64(4), MaxReplicas: i64(1000)}},
		{name: "Knative's decimal strings", spec: `  replicas: "2"` + "\n" + `  min: "+1"` + "\n" + `  max: "010"`, want: &Scale{Replicas: i64(2), MinReplicas: i64(1), MaxReplicas: i64(10)}},
		{name: "2x", spec: `  replicas: 2x`, err: `component "worker" instance "": replicasPath .spec.replicas: string "2x" is not a decimal integer`},
		{name: "an empty string", spec: `  min: ""`, err: `component "worker" instance "": minReplicasPath .spec.min: string "" is not a decimal integer`},
		{name: "a hexadecimal string", spec: `  max: "0x10"`, err: `component "worker" instance "": maxReplicasPath .spec.max: string "0x10" is not a decimal integer`},
		{name: "2.5", spec: "  replicas: 2.5", err: `component "worker" instance "": replicasPath .spec.replicas: 2.5 is not an integer`},
		{name: "a boolean", spec: "  replicas: true", err: `component "worker" instance "": replicasPath .spec.replicas: boolean true is not a number`},
		{name: "an object", spec: "  max: {value: 3}", err: `component "worker" instance "": maxReplicasPath .spec.max: an object is not a number`},
		{name: "negative", spec: "  replicas: -1", err: `component "worker" instance "": replicasPath .spec.replicas: -1 is out of range 0…2147483647`},
		{name: "a negative string", spec: `  min: "-2"`, err: `component "worker" instance "": minReplicasPath .spec.min: -2 is out of range 0…2147483647`},
		{name: "beyond int32", spec: "  max: 2147483648", err: `component "worker" instance "": maxReplicasPath .spec.max: 2147483648 is out of range 0…2147483647`},
		{name: "a string beyond int32", spec: `  max: "99999999999"`, err: `component "worker" instance "": maxReplicasPath .spec.max: 99999999999 is out of range 0…2147483647`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := trainerObj(t, "  template: {}\n"+tc.spec)
			if tc.err != "" {
				assert.Equal(t, tc.err, podSpecsErr(t, p, obj))
				return
			}
			items := mustPodSpecs(t, p, obj)
			require.Len(t, items, 1)
			assert.Equal(t, tc.want, items[0].Scale)
		})
	}

	t.Run("Knative fixture", func(t *testing.T) {
		kn := progCompile(t, progKartaFile(t, filepath.Join(progProgramDir, "knative-service.karta.yaml")), Options{})
		objs := progObjFile(t, filepath.Join(progProgramDir, "knative-service.yaml"))
		items := mustPodSpecs(t, kn, objs[0])
		require.Len(t, items, 1)
		assert.Equal(t, &Scale{Replicas: i64(2), MinReplicas: i64(1), MaxReplicas: i64(10)}, items[0].Scale, "initial-scale, min-scale, and the legacy maxScale")
		items = mustPodSpecs(t, kn, objs[1])
		assert.Equal(t, &Scale{Replicas: i64(1)}, items[0].Scale, `the "1" default`)
	})
}

// sameGoValue reports whether two maps or slices are the same Go value.
func sameGoValue(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != vb.Kind() || (va.Kind() != reflect.Map && va.Kind() != reflect.Slice) {
		return false
	}
	if va.Kind() == reflect.Slice && (va.Len() == 0 || vb.Len() == 0) {
		return false
	}
	return va.UnsafePointer() == vb.UnsafePointer()
}

// TestPodSpecsAliasing: the values in the items are the object's own Go
// values, not copies (the package's aliasing contract).
func TestPodSpecsAliasing(t *testing.T) {
	at := func(v any, path ...any) any {
		for _, s := range path {
			switch k := s.(type) {
			case string:
				v = v.(map[string]any)[k]
			case int:
				v = v.([]any)[k]
			}
		}
		return v
	}
	t.Run("templates of a JobSet", func(t *testing.T) {
		p := progCompile(t, progKartaFile(t, filepath.Join(progProgramDir, "jobset.karta.yaml")), Options{})
		obj := progObjFile(t, filepath.Join(progProgramDir, "jobset.yaml"))[0]
		items := mustPodSpecs(t, p, obj)
		require.Len(t, items, 2)
		for i, it := range items {
			want := at(obj.Object, "spec", "replicatedJobs", i, "template", "spec", "template")
			assert.True(t, sameGoValue(want, it.PodTemplateSpec), "item %d is the object's template", i)
		}
		assert.Equal(t, int64(8), *items[1].Scale.Replicas, "2 replicas × parallelism 4")
	})
	t.Run("fragments of an InferenceService", func(t *testing.T) {
		p := progCompile(t, progKartaFile(t, filepath.Join(progProgramDir, "inferenceservice.karta.yaml")), Options{})
		obj := progObjFile(t, filepath.Join(progProgramDir, "inferenceservice.yaml"))[0]
		items := mustPodSpecs(t, p, obj)
		require.Equal(t, []string{"predictor/", "transformer/transformer"}, instancesOf(items))
		pred := items[0].Fragmented
		assert.True(t, sameGoValue(at(obj.Object, "spec", "predictor", "labels"), pred.Labels))
		assert.True(t, sameGoValue(at(obj.Object, "spec", "predictor", "annotations"), pred.Annotations))
		assert.True(t, sameGoValue(at(obj.Object, "spec", "predictor", "model"), pred.Container), "the container is the model")
		assert.True(t, sameGoValue(at(obj.Object, "spec", "predictor", "affinity", "nodeAffinity"), pred.NodeAffinity))
		assert.True(t, sameGoValue(at(obj.Object, "spec", "transformer", "containers"), items[1].Fragmented.Containers))
		assert.Equal(t, "kai-scheduler", *pred.SchedulerName)
		assert.Equal(t, &Scale{Replicas: ptr[int64](2), MinReplicas: ptr[int64](2), MaxReplicas: ptr[int64](4)}, items[0].Scale)
		assert.Equal(t, &Scale{Replicas: ptr[int64](1)}, items[1].Scale)

		// The legacy framework form: the container is the sklearn entry.
		legacy := progObjFile(t, filepath.Join(progProgramDir, "inferenceservice.yaml"))[1]
		items = mustPodSpecs(t, p, legacy)
		require.Equal(t, []string{"predictor/"}, instancesOf(items), "no transformer instance without a transformer")
		assert.True(t, sameGoValue(at(legacy.Object, "spec", "predictor", "sklearn"), items[0].Fragmented.Container))
	})
	t.Run("pod spec and metadata", func(t *testing.T) {
		p := progFrom(t, podsKarta(`
    - name: transformer
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition: {podSpecPath: .spec.transformer, metadataPath: .spec.transformer}
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: transformer}}
`))
		obj := trainerObj(t, "  transformer: {labels: {a: b}, containers: [{name: t}]}")
		items := mustPodSpecs(t, p, obj)
		require.Len(t, items, 1)
		tr := at(obj.Object, "spec", "transformer")
		assert.True(t, sameGoValue(tr, items[0].PodSpec))
		assert.True(t, sameGoValue(tr, items[0].Metadata))
	})
	t.Run("the example PyTorchJob without a Master", func(t *testing.T) {
		p := progCompile(t, progKartaFile(t, examplePyTorchJob), Options{})
		obj := progObj(t, `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: workers-only, namespace: ml}
spec:
  elasticPolicy: {minReplicas: 2, maxReplicas: 6}
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template: {spec: {containers: [{name: pytorch, image: pytorch:2.5}]}}`)
		items := mustPodSpecs(t, p, obj)
		require.Equal(t, []string{"worker/"}, instancesOf(items), "the absent master yields no item")
		assert.True(t, sameGoValue(at(obj.Object, "spec", "pytorchReplicaSpecs", "Worker", "template"), items[0].PodTemplateSpec))
		assert.Equal(t, &Scale{Replicas: ptr[int64](4), MinReplicas: ptr[int64](2)}, items[0].Scale)
	})
}
