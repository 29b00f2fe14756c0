package builtin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
)

// An AppWrapper component without podSets gets those the appwrapper
// controller infers for its kind (pkg/utils/utils.go InferPodSets), before
// the controller stores them in the status; declared podSets and the
// status' stay as they are, and an unknown kind has none.
func TestAppWrapperInferredPodSets(t *testing.T) {
	tpl := `{spec: {containers: [{name: c, image: i}]}}`
	cases := []struct {
		name      string
		component string
		want      map[string]int64
	}{
		{"job min(parallelism, completions)", `{template: {apiVersion: batch/v1, kind: Job, metadata: {name: j},
			spec: {parallelism: 4, completions: 2, template: ` + tpl + `}}}`, map[string]int64{"j": 2}},
		{"job without counts", `{template: {apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {template: ` + tpl + `}}}`,
			map[string]int64{"j": 1}},
		{"jobset replicas × pods", `{template: {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, metadata: {name: js},
			spec: {replicatedJobs: [{name: driver, template: {spec: {template: ` + tpl + `}}},
			{name: workers, replicas: 2, template: {spec: {parallelism: 4, completions: 4, template: ` + tpl + `}}}]}}}`,
			map[string]int64{"js/driver": 1, "js/workers": 8}},
		{"pytorchjob master and worker", `{template: {apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {name: pt},
			spec: {pytorchReplicaSpecs: {Master: {template: ` + tpl + `}, Worker: {replicas: 3, template: ` + tpl + `}}}}}`,
			map[string]int64{"pt/master": 1, "pt/worker": 3}},
		{"pytorchjob workers only", `{template: {apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {name: pt},
			spec: {pytorchReplicaSpecs: {Worker: {replicas: 2, template: ` + tpl + `}}}}}`,
			map[string]int64{"pt/worker": 2}},
		{"raycluster head and groups", `{template: {apiVersion: ray.io/v1, kind: RayCluster, metadata: {name: rc},
			spec: {headGroupSpec: {template: ` + tpl + `}, workerGroupSpecs: [{groupName: cpu, replicas: 3, template: ` + tpl + `},
			{groupName: gpu, template: ` + tpl + `}]}}}`,
			map[string]int64{"rc/headgroup": 1, "rc/cpu": 3, "rc/gpu": 1}},
		{"rayjob's cluster", `{template: {apiVersion: ray.io/v1, kind: RayJob, metadata: {name: rj},
			spec: {rayClusterSpec: {headGroupSpec: {template: ` + tpl + `}, workerGroupSpecs: [{groupName: w, replicas: 2, template: ` + tpl + `}]}}}}`,
			map[string]int64{"rj/template.spec.rayClusterSpec.headGroupSpec.template": 1, "rj/template.spec.rayClusterSpec.workerGroupSpecs[0].template": 2}},
		{"pod", `{template: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}}`,
			map[string]int64{"p": 1}},
		{"deployment replicas", `{template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 3, template: ` + tpl + `}}}`,
			map[string]int64{"d": 3}},
		{"statefulset default replicas", `{template: {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s}, spec: {template: ` + tpl + `}}}`,
			map[string]int64{"s": 1}},
		{"declared podSets win", `{podSets: [{path: template.spec.template, replicas: 5}], template: {apiVersion: batch/v1, kind: Job,
			metadata: {name: j}, spec: {parallelism: 2, template: ` + tpl + `}}}`, map[string]int64{"j": 5}},
		{"unknown kind", `{template: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {template: ` + tpl + `}}}`,
			map[string]int64{}},
	}
	b, ok, err := builtin.Get("appwrapper")
	require.NoError(t, err)
	require.True(t, ok)
	p, err := b.Compile(interpreter.Options{PoolSize: 1})
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var comp map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(tc.component), &comp))
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper",
				"metadata": map[string]any{"name": "aw", "namespace": "ns"},
				"spec":     map[string]any{"suspend": true, "components": []any{comp}},
			}}
			specs, err := p.GetPodSpecs(context.Background(), obj)
			require.NoError(t, err)
			got := map[string]int64{}
			for _, it := range specs.Items {
				require.NotNil(t, it.PodTemplateSpec, it.Instance)
				require.NotNil(t, it.Scale.Replicas, it.Instance)
				got[it.Instance] = *it.Scale.Replicas
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
