package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/exampledir"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

// The pods a view computes are those the bundled Lua override it replaced
// computed (testdata/replaced-overrides, as they were): on every example
// state of the six kinds and on variants that reach each branch of the
// overrides. Null members of objects are left out of both sides: the
// override's Lua tables dropped them (a template's creationTimestamp:
// null), where GetPodSpecs now reports the object's values as they are.
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
	for name, script := range map[string]string{"raycluster": "ray", "rayjob": "ray", "rayservice": "ray",
		"knative-service": "knative", "inferenceservice": "knative", "sparkapplication": "sparkapplication"} {
		t.Run(name, func(t *testing.T) {
			views, replaced := viewsAndReplacedOverride(t, name, script)
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

// viewsAndReplacedOverride compiles the built-in as it is, and as it was:
// without its views, with the override they replaced.
func viewsAndReplacedOverride(t *testing.T, name, script string) (views, replaced *interpreter.Program) {
	t.Helper()
	b, ok, err := builtin.Get(name)
	require.NoError(t, err)
	require.True(t, ok)
	views, err = b.Compile(interpreter.Options{})
	require.NoError(t, err)
	old := b.Karta.DeepCopy()
	for _, c := range old.Spec.StructureDefinition.Components() {
		if c.SpecDefinition != nil {
			c.SpecDefinition.View = nil
		}
	}
	src, err := os.ReadFile(filepath.Join("testdata", "replaced-overrides", script+".lua"))
	require.NoError(t, err)
	replaced, err = interpreter.Compile(old, interpreter.Options{Scripts: []interpreter.Script{{Name: script + ".lua", Source: string(src)}}})
	require.NoError(t, err)
	return views, replaced
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

// withoutNulls is v through JSON with the null members of objects left out.
func withoutNulls(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	var drop func(any) any
	drop = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if e == nil {
					delete(x, k)
				} else {
					x[k] = drop(e)
				}
			}
		case []any:
			for i, e := range x {
				x[i] = drop(e)
			}
		}
		return v
	}
	return drop(out)
}
