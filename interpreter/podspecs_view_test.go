package interpreter

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GetPodSpecs with a specDefinition view (docs/karta.md, "Views"): the
// view's values replace the paths', presence stays the paths', revisions
// keep writing the paths.

// viewKarta is a Trainer Karta whose worker groups' templates have the
// given view (YAML, under view:), then the other components.
func viewKarta(view, others string) string {
	return podsKarta(`
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      instanceIdPath: .spec.groups[]?.name
      specDefinition:
        podTemplateSpecPath: '.spec.groups[]?.template'
        view: ` + view + `
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: worker}
        componentInstanceSelector: {idPath: .metadata.labels.group}
` + others)
}

func TestPodSpecsView(t *testing.T) {
	p := progFrom(t, viewKarta(`
          podTemplateSpec: >-
            .spec.groups[]? | .template + {spec: (.template.spec + {containers:
            (.template.spec.containers + [{name: "sidecar", image: .sidecarImage}])})}`, `
    - name: driver
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition:
        fragmentedPodSpecDefinition: {imagePath: .spec.driver.image, labelsPath: .spec.driver.labels}
        view:
          image: .spec.driver.image // .spec.image
          container: '{name: "main", cpu: .spec.driver.cores}'
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: driver}
`))
	obj := trainerObj(t, `
  image: shared:1
  driver: {cores: 2, labels: {team: a}}
  groups:
  - {name: a, sidecarImage: s:1, template: {metadata: {labels: {x: y}}, spec: {containers: [{name: c}]}}}
  - {name: b, template: null}`)
	items := mustPodSpecs(t, p, obj)
	require.Equal(t, []string{"worker/a", "driver/"}, instancesOf(items), "an absent instance stays absent")
	assert.Equal(t, map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"x": "y"}},
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "c"}, map[string]any{"name": "sidecar", "image": "s:1"}}},
	}, viaJSON[any](t, items[0].PodTemplateSpec))
	f := items[1].Fragmented
	require.NotNil(t, f)
	assert.Equal(t, "shared:1", *f.Image, "the view's fallback")
	assert.Equal(t, map[string]any{"name": "main", "cpu": float64(2)}, viaJSON[any](t, f.Container), "a fragment only a view computes")
	assert.Equal(t, map[string]any{"team": "a"}, viaJSON[any](t, f.Labels), "a fragment without a view keeps its path")

	// Revisions write the path: the user's template, not the view's.
	revised, err := p.ReviseSpec(context.Background(), obj, []Revision{{Component: "worker", Instance: "a",
		Patch: map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "z"}}}}})
	require.NoError(t, err)
	groups := revised.Object.Object["spec"].(map[string]any)["groups"].([]any)
	tpl := groups[0].(map[string]any)["template"].(map[string]any)
	assert.Len(t, tpl["spec"].(map[string]any)["containers"], 1, "the view's sidecar is not written")

	for _, tc := range []struct{ name, view, err string }{{
		name: "a view yields one value per instance",
		view: `podTemplateSpec: '.spec.groups[0]?.template'`,
		err:  `component "worker": view.podTemplateSpec yields 1 value(s) for 2 id(s) [a b]`,
	}, {
		name: "a view's value is checked like the path's",
		view: `podTemplateSpec: '.spec.groups[]? | "text"'`,
		err:  `component "worker" instance "a": view.podTemplateSpec`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			q := progFrom(t, viewKarta("{"+tc.view+"}", ""))
			assert.Contains(t, podSpecsErr(t, q, obj), tc.err)
		})
	}
}

// viaJSON is v through its JSON text, decoded as a T: what encoding/json
// makes of it (numbers as float64 in an any).
func viaJSON[T any](t *testing.T, v any) T {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// initContainersPath and view.initContainers: a fragmented pod's init
// containers, such as the one KServe's webhook injects. GetPodSpecs
// reports the view; a revision writes spec.initContainers through the
// path; a value that is not an array is an error naming the view.
func TestPodSpecsInitContainersFragment(t *testing.T) {
	k := func(view string) string {
		return podsKarta(`
    - name: server
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition:
        fragmentedPodSpecDefinition:
          containerPath: .spec.server.container
          initContainersPath: .spec.server.initContainers
        view:
          initContainers: ` + view + `
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: server}
`)
	}
	p := progFrom(t, k(`>-
            if .spec.server.uri then (.spec.server.initContainers // []) + [{name: "fetch", args: [.spec.server.uri]}]
            else .spec.server.initContainers end`))
	obj := trainerObj(t, `
  server:
    uri: s3://bucket/model
    container: {name: main}
    initContainers: [{name: setup}]`)
	items := mustPodSpecs(t, p, obj)
	require.Len(t, items, 1)
	assert.Equal(t, []any{map[string]any{"name": "setup"}, map[string]any{"name": "fetch", "args": []any{"s3://bucket/model"}}},
		viaJSON[[]any](t, items[0].Fragmented.InitContainers))

	without := trainerObj(t, `
  server:
    container: {name: main}`)
	assert.Nil(t, mustPodSpecs(t, p, without)[0].Fragmented.InitContainers, "a null view reports no init containers")

	revised, err := p.ReviseSpec(context.Background(), obj, []Revision{{Component: "server",
		Patch: map[string]any{"spec": map[string]any{"initContainers": []any{map[string]any{"name": "setup", "image": "busybox:1"}}}}}})
	require.NoError(t, err)
	server := revised.Object.Object["spec"].(map[string]any)["server"].(map[string]any)
	assert.Equal(t, []any{map[string]any{"name": "setup", "image": "busybox:1"}}, server["initContainers"],
		"revisions write the path, not the view's injected container")

	bad := progFrom(t, k(`'{name: "fetch"}'`))
	assert.Contains(t, podSpecsErr(t, bad, obj), `component "server" instance "": view.initContainers`)
}
