package interpreter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/karta"
)

func TestModelStructure(t *testing.T) {
	m := fixtureModel(t, "leaderworkerset")
	var names []string
	for i, c := range m.comps {
		names = append(names, c.c.Name)
		assert.Equal(t, i, c.index)
		assert.Same(t, c, m.byName[c.c.Name])
	}
	assert.Equal(t, []string{"leaderworkerset", "group", "leader", "worker"}, names)
	root, group := m.byName["leaderworkerset"], m.byName["group"]
	assert.Nil(t, root.parent)
	assert.Equal(t, []*compModel{group}, root.children)
	assert.Equal(t, []*compModel{m.byName["leader"], m.byName["worker"]}, group.children)
	assert.Same(t, group, m.byName["worker"].parent)
	assert.False(t, group.podBearing())
	assert.Equal(t, karta.SpecStylePodTemplateSpec, m.byName["leader"].style)
	// Assignable paths get a path() query, compiled on first use; others
	// keep the reason.
	assert.NotNil(t, m.byName["leader"].spec.pathQuery)
	assert.Nil(t, m.byName["leader"].spec.path, "not compiled before a write")
	prog, err := m.byName["leader"].spec.pathProgram()
	require.NoError(t, err)
	assert.NotNil(t, prog)
	assert.Equal(t, `operator "-" is not a path`, m.byName["worker"].replicas.notAssignable)
	assert.Nil(t, m.byName["worker"].replicas.pathQuery)
	// A default (.spec.replicas // 1) is assignable: it writes its field.
	assert.Empty(t, m.byName["group"].replicas.notAssignable)
	assert.NotNil(t, m.byName["group"].replicas.pathQuery)

	kserve := fixtureModel(t, "inferenceservice")
	pred := kserve.byName["predictor"]
	assert.Equal(t, karta.SpecStyleFragmented, pred.style)
	var keys []string
	for _, f := range pred.fragments {
		keys = append(keys, f.key)
	}
	assert.Equal(t, []string{"schedulerName", "labels", "annotations", "resources", "podAffinity", "nodeAffinity",
		"containers", "container", "priorityClassName", "image"}, keys)
	var nodes []string
	for _, n := range pred.nodes {
		nodes = append(nodes, viewPathString(n.at))
	}
	assert.Equal(t, []string{"metadata.labels", "metadata.annotations", "spec.schedulerName", "spec.priorityClassName",
		"spec.affinity.nodeAffinity", "spec.affinity.podAffinity", "spec.containers"}, nodes)
	assert.Len(t, kserve.byName["transformer"].nodes, 2)
	assert.Len(t, kserve.byName["explainer"].nodes, 1)
	assert.Len(t, kserve.byName["inferenceservice"].suspend, 1)
	assert.Equal(t, "true", kserve.byName["inferenceservice"].suspend[0].value)
}

func TestModelCompileErrors(t *testing.T) {
	k := &karta.Karta{}
	k.Name = "broken"
	k.Spec.StructureDefinition.RootComponent = &karta.Component{Name: "root",
		SpecDefinition: &karta.SpecDefinition{PodTemplateSpecPath: ".spec["}}
	_, err := newModel(mustCheck(t, k))
	require.Error(t, err)
	// The check refused the expression, so the model never sees it parsed.
	assert.Contains(t, err.Error(), `karta "broken": component "root": podTemplateSpecPath: jq ".spec[": not among the checked Karta's expressions`)
}

func TestModelInstances(t *testing.T) {
	ctx := context.Background()
	type want struct {
		id      string
		present bool
	}
	for _, tc := range []struct {
		name      string
		m         *model
		comp      string
		obj       map[string]any
		want      []want
		err       string
		fragments map[string]any // of the first instance
	}{{
		name: "ids in output order",
		m:    fixtureModel(t, "jobset"), comp: "replicatedjob", obj: fixtureObject(t, "jobset"),
		want: []want{{"driver", true}, {"workers", true}},
	}, {
		name: "one instance without an instanceIdPath",
		m:    fixtureModel(t, "pytorchjob"), comp: "master", obj: fixtureObject(t, "pytorchjob"),
		want: []want{{"", true}},
	}, {
		name: "a null template is an absent instance",
		m:    fixtureModel(t, "pytorchjob"), comp: "master", obj: objectFrom(t, "spec: {pytorchReplicaSpecs: {Worker: {}}}"),
		want: []want{{"", false}},
	}, {
		name: "a fragmented instance is present whatever its values",
		m:    fixtureModel(t, "milvus"), comp: "proxy", obj: objectFrom(t, "spec: {mode: cluster}"),
		want:      []want{{"proxy", true}},
		fragments: map[string]any{"labels": nil, "image": nil, "resources": nil, "nodeAffinity": nil},
	}, {
		name: "a component without spec definition is present",
		m:    fixtureModel(t, "leaderworkerset"), comp: "group", obj: fixtureObject(t, "leaderworkerset"),
		want: []want{{"", true}},
	}, {
		name: "numbers become ids through tostring",
		m:    modelFrom(t, idsKarta), comp: "job", obj: objectFrom(t, "spec: {jobs: [{id: 3, t: {}}, {id: 1.5, t: {}}]}"),
		want: []want{{"3", true}, {"1.5", true}},
	}, {
		name: "duplicate ids",
		m:    modelFrom(t, idsKarta), comp: "job", obj: objectFrom(t, "spec: {jobs: [{id: a, t: {}}, {id: a, t: {}}]}"),
		err: `component "job": instanceIdPath yields duplicate id(s) [a]`,
	}, {
		name: "a zip mismatch",
		m:    modelFrom(t, idsKarta), comp: "job", obj: objectFrom(t, "spec: {jobs: [{id: a, t: {}}, {id: b}]}"),
		err: `component "job": podTemplateSpecPath yields 1 value(s) for 2 id(s) [a b]`,
	}, {
		name: "a jq error",
		m:    modelFrom(t, idsKarta), comp: "job", obj: objectFrom(t, "spec: {jobs: 1}"),
		err: `component "job": instanceIdPath: jq .spec.jobs[].id: cannot iterate over: number (1)`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			insts, err := tc.m.instances(ctx, tc.m.byName[tc.comp], jqvalue.Input(tc.obj))
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			var got []want
			for i, inst := range insts {
				assert.Equal(t, i, inst.index)
				got = append(got, want{inst.id, inst.present})
			}
			assert.Equal(t, tc.want, got)
			if tc.fragments != nil {
				got := map[string]any{}
				for _, f := range tc.m.byName[tc.comp].fragments {
					got[f.key] = insts[0].fragments[f.slot]
				}
				assert.Equal(t, tc.fragments, got)
			}
		})
	}
}

const idsKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: ids}
spec:
  structureDefinition:
    rootComponent:
      name: ids
      kind: {group: example.com, version: v1, kind: Ids}
      statusDefinition: {statusMappings: {running: [{byPhase: Running}]}}
    childComponents:
    - name: job
      ownerRef: ids
      instanceIdPath: .spec.jobs[].id
      specDefinition: {podTemplateSpecPath: '.spec.jobs[].t | select(. != null)'}
`

func TestJQInput(t *testing.T) {
	shared := map[string]any{"a": "b"}
	plain := map[string]any{"x": shared, "n": 1.5}
	assert.True(t, sameContainer(plain, jqvalue.Input(plain)), "a value without int64 is returned as it is")

	mixed := map[string]any{"x": shared, "list": []any{int64(2), "s"}}
	got := jqvalue.Input(mixed).(map[string]any)
	assert.Equal(t, []any{2, "s"}, got["list"])
	assert.True(t, sameContainer(shared, got["x"]), "containers without int64 are shared")
	assert.Equal(t, int64(2), mixed["list"].([]any)[0], "the input is not modified")
}
