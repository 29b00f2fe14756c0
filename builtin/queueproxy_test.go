package builtin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

// queueProxies returns, per GetPodSpecs item, the requests of its
// queue-proxy container, nil when it has none.
func queueProxies(t *testing.T, name string, obj *unstructured.Unstructured) []any {
	t.Helper()
	b, ok, err := builtin.Get(name)
	require.NoError(t, err)
	require.True(t, ok)
	p, err := b.Compile(interpreter.Options{PoolSize: 1})
	require.NoError(t, err)
	specs, err := p.GetPodSpecs(context.Background(), obj)
	require.NoError(t, err)
	var out []any
	for _, it := range specs.Items {
		containers := itemContainers(it)
		var requests any
		for i, c := range containers {
			c, _ := c.(map[string]any)
			if c["name"] == "queue-proxy" {
				assert.Equal(t, len(containers)-1, i, "the sidecar comes after the user's containers")
				requests = c["resources"]
			}
		}
		out = append(out, requests)
	}
	return out
}

// Knative's revision reconciler appends queue-proxy to every revision pod
// with requests cpu 25m, or the template's queue.sidecar annotations;
// KServe gets it only in Serverless (Knative) mode, decided by the status,
// then the annotation, then the default, with the component's annotations
// over the InferenceService's.
func TestQueueProxy(t *testing.T) {
	def := map[string]any{"requests": map[string]any{"cpu": "25m"}}
	isvc := func(edit func(o *unstructured.Unstructured)) *unstructured.Unstructured {
		o := testobj.Read(t, "../examples/inferenceservice/running.yaml")
		edit(o)
		return o
	}
	setAnnotation := func(o *unstructured.Unstructured, k, v string) {
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[k] = v
		o.SetAnnotations(a)
	}
	const cpuKey = "queue.sidecar.serving.knative.dev/cpu-resource-request"
	cases := []struct {
		name string
		kind string
		obj  *unstructured.Unstructured
		want []any
	}{
		{"knative default", "knative-service", testobj.Read(t, "../examples/knative-service/running.yaml"), []any{def}},
		{"knative annotations", "knative-service", testobj.Read(t, "../examples/knative-service/queue-resources.yaml"), []any{map[string]any{
			"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
			"limits":   map[string]any{"memory": "256Mi"},
		}}},
		{"isvc serverless", "inferenceservice", isvc(func(*unstructured.Unstructured) {}), []any{def, def}},
		{"isvc raw by status", "inferenceservice", testobj.Read(t, "../examples/inferenceservice/raw-deployment.yaml"), []any{nil}},
		{"isvc status wins over the annotation", "inferenceservice", isvc(func(o *unstructured.Unstructured) {
			setAnnotation(o, "serving.kserve.io/deploymentMode", "RawDeployment")
		}), []any{def, def}},
		{"isvc raw by annotation", "inferenceservice", isvc(func(o *unstructured.Unstructured) {
			unstructured.RemoveNestedField(o.Object, "status")
			setAnnotation(o, "serving.kserve.io/deploymentMode", "Standard")
		}), []any{nil, nil}},
		{"isvc Knative spelling", "inferenceservice", isvc(func(o *unstructured.Unstructured) {
			unstructured.RemoveNestedField(o.Object, "status")
			setAnnotation(o, "serving.kserve.io/deploymentMode", "Knative")
		}), []any{def, def}},
		{"isvc default mode", "inferenceservice", isvc(func(o *unstructured.Unstructured) {
			unstructured.RemoveNestedField(o.Object, "status")
			o.SetAnnotations(nil)
		}), []any{def, def}},
		{"isvc component annotation over the object's", "inferenceservice", isvc(func(o *unstructured.Unstructured) {
			setAnnotation(o, cpuKey, "50m")
			require.NoError(t, unstructured.SetNestedField(o.Object, "80m", "spec", "predictor", "annotations", cpuKey))
		}), []any{
			map[string]any{"requests": map[string]any{"cpu": "80m"}},
			map[string]any{"requests": map[string]any{"cpu": "50m"}},
		}},
		// The API server keeps annotations strings; a decoded object need not.
		{"isvc annotations not strings", "inferenceservice", isvc(func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, int64(3), "metadata", "annotations", cpuKey))
			require.NoError(t, unstructured.SetNestedField(o.Object, true, "metadata", "annotations", "serving.kserve.io/deploymentMode"))
			unstructured.RemoveNestedField(o.Object, "status")
		}), []any{def, def}},
		{"isvc status mode not a string", "inferenceservice", isvc(func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, int64(1), "status", "deploymentMode"))
			setAnnotation(o, "serving.kserve.io/deploymentMode", "RawDeployment")
		}), []any{nil, nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, queueProxies(t, tc.kind, tc.obj))
		})
	}
}
