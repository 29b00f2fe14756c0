package builtin_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/exampledir"
	"github.com/kartalua/karta/internal/replacedoverrides"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

// The pods a view computes are those the bundled Lua override it replaced
// computed (internal/replacedoverrides, as they were): on every example
// state of the six kinds and on variants that reach each branch of the
// overrides, null members of objects aside (WithoutNullMembers says why).
func TestViewsGiveTheReplacedOverridesPods(t *testing.T) {
	variants := map[string][]string{
		"raycluster": {
			`{spec: {enableInTreeAutoscaling: true, autoscalerOptions: {image: "a:1", imagePullPolicy: Always, resources: {requests: {cpu: "1"}}}}}`,
			`{spec: {enableInTreeAutoscaling: false}}`,
			`{spec: {enableInTreeAutoscaling: true, headGroupSpec: {template: {spec: {containers: []}}}}}`,
			`{spec: {enableInTreeAutoscaling: true, headGroupSpec: {template: {spec: {containers: [{name: h}]}}}}}`,
		},
		"rayjob": {
			`{spec: {submissionMode: SidecarMode}}`,
			`{spec: {submissionMode: SidecarMode, rayClusterSpec: {enableInTreeAutoscaling: true}}}`,
			`{spec: {rayClusterSpec: {enableInTreeAutoscaling: true, autoscalerOptions: {image: "a:2"}}}}`,
		},
		"rayservice": {
			`{spec: {rayClusterConfig: {enableInTreeAutoscaling: true}}}`,
		},
		"knative-service": {
			`{spec: {template: {metadata: {annotations: {"queue.sidecar.serving.knative.dev/cpu-resource-limit": "1",
			  "queue.sidecar.serving.knative.dev/ephemeral-storage-resource-request": "1Gi",
			  "queue.sidecar.serving.knative.dev/memory-resource-request": ""}}}}}`,
			`{spec: {template: {spec: {containers: null}}}}`,
		},
		"inferenceservice": {
			`{status: {deploymentMode: RawDeployment}}`,
			`{status: null, metadata: {annotations: {"serving.kserve.io/deploymentMode": "Standard"}}}`,
			`{status: null, metadata: {annotations: {"serving.kserve.io/deploymentMode": "Knative",
			  "queue.sidecar.serving.knative.dev/memory-resource-limit": "1Gi"}},
			  spec: {predictor: {annotations: {"queue.sidecar.serving.knative.dev/memory-resource-limit": "2Gi",
			  "queue.sidecar.serving.knative.dev/cpu-resource-request": "50m"}}, transformer: {containers: [{name: t}]},
			  explainer: {containers: [{name: e}], annotations: {"queue.sidecar.serving.knative.dev/cpu-resource-limit": "3"}}}}`,
			`{status: {deploymentMode: ""}, metadata: {annotations: {"serving.kserve.io/deploymentMode": "ModelMesh"}}}`,
		},
		"sparkapplication": {
			`{spec: {driver: {memory: "512m", memoryOverhead: "1024"}, memoryOverheadFactor: "0.2",
			  executor: {memory: "2G", coreRequest: "500m", coreLimit: "2", gpu: {name: nvidia.com/gpu, quantity: 2}}}}`,
			`{spec: {type: Python, executor: {memory: "4gb"}, sparkConf: {"spark.executor.pyspark.memory": "1g",
			  "spark.memory.offHeap.enabled": "true", "spark.memory.offHeap.size": "1073741824"}}}`,
			`{spec: {driver: {memory: "1.5g"}, executor: {memory: "4x", memoryOverhead: "3KB"}, memoryOverheadFactor: "abc"}}`,
			`{spec: {type: Java, image: "img:2", driver: {memory: "100k", image: null, cores: null}, executor: {memory: "1t", memoryOverhead: "2097152k"}}}`,
			`{spec: {type: R, memoryOverheadFactor: 0.25, driver: {memory: "3P"}, executor: {memory: "7b", coreLimit: "1"}}}`,
		},
	}
	ctx := context.Background()
	for name := range variants {
		t.Run(name, func(t *testing.T) {
			b, ok, err := builtin.Get(name)
			require.NoError(t, err)
			require.True(t, ok)
			views, err := b.Compile(interpreter.Options{})
			require.NoError(t, err)
			replaced, ok, err := replacedoverrides.Compile(name, b.Karta, interpreter.Options{})
			require.NoError(t, err)
			require.True(t, ok, "%s replaced an override", name)
			dir := filepath.Join("..", "examples", name)
			states, err := exampledir.States(dir)
			require.NoError(t, err)
			var objs []*unstructured.Unstructured
			for _, s := range states {
				objs = append(objs, testobj.Read(t, s))
			}
			running := testobj.Read(t, filepath.Join(dir, "running.yaml"))
			for _, v := range variants[name] {
				objs = append(objs, patched(t, running, v))
			}
			for i, obj := range objs {
				want, err := replaced.GetPodSpecs(ctx, obj)
				require.NoError(t, err, "object %d", i)
				got, err := views.GetPodSpecs(ctx, obj)
				require.NoError(t, err, "object %d", i)
				require.Equal(t, withoutNulls(t, want), withoutNulls(t, got), "object %d", i)
			}
		})
	}
}

// patched is obj with the JSON merge patch in YAML applied.
func patched(t *testing.T, obj *unstructured.Unstructured, patch string) *unstructured.Unstructured {
	t.Helper()
	p, err := yaml.YAMLToJSON([]byte(patch))
	require.NoError(t, err)
	doc, err := json.Marshal(obj.Object)
	require.NoError(t, err)
	out, err := jsonpatch.MergePatch(doc, p)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(out))
	return u
}

func withoutNulls(t *testing.T, v any) any {
	t.Helper()
	out, err := replacedoverrides.WithoutNullMembers(v)
	require.NoError(t, err)
	return out
}
