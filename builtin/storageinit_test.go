package builtin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
)

// initContainerArgs returns, per GetPodSpecs item, "name=firstArg" for each
// of its init containers (the storage-initializer's first arg is the URI).
func initContainerArgs(t *testing.T, p *interpreter.Program, obj map[string]any) [][]string {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	specs, err := p.GetPodSpecs(context.Background(), u)
	require.NoError(t, err)
	out := make([][]string, len(specs.Items))
	for i, it := range specs.Items {
		require.NotNil(t, it.Fragmented)
		for _, c := range it.Fragmented.InitContainers {
			c := c.(map[string]any)
			s, _ := c["name"].(string)
			if args, ok := c["args"].([]any); ok && len(args) > 0 {
				s += "=" + args[0].(string)
			}
			out[i] = append(out[i], s)
		}
	}
	return out
}

// KServe's pod webhook injects the storage-initializer init container when
// a component names a model to download (storage_initializer_injector.go):
// not for pvc:// (mounted) nor oci:// (a modelcar), after the component's
// own init containers, in either deployment mode.
func TestStorageInitializer(t *testing.T) {
	b, ok, err := builtin.Get("inferenceservice")
	require.NoError(t, err)
	require.True(t, ok)
	p, err := b.Compile(interpreter.Options{PoolSize: 1})
	require.NoError(t, err)
	isvc := func(spec map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
			"metadata": map[string]any{"name": "m", "namespace": "ns",
				"annotations": map[string]any{"serving.kserve.io/deploymentMode": "RawDeployment"}},
			"spec": spec,
		}
	}
	model := func(uri any) map[string]any {
		return map[string]any{"predictor": map[string]any{"model": map[string]any{"modelFormat": map[string]any{"name": "sklearn"}, "storageUri": uri}}}
	}
	env := func(name, uri string) map[string]any {
		return map[string]any{"name": name, "image": "i", "env": []any{
			"not an object", map[string]any{"name": "OTHER", "value": "x"}, map[string]any{"name": "STORAGE_URI", "value": uri}}}
	}
	const si = "storage-initializer="
	for _, tc := range []struct {
		name string
		spec map[string]any
		want [][]string
	}{
		{"s3", model("s3://b/m"), [][]string{{si + "s3://b/m"}}},
		{"gs", model("gs://b/m"), [][]string{{si + "gs://b/m"}}},
		{"hf", model("hf://org/model"), [][]string{{si + "hf://org/model"}}},
		{"https", model("https://host/m.tar.gz"), [][]string{{si + "https://host/m.tar.gz"}}},
		{"pvc is mounted, not downloaded", model("pvc://claim/models/m"), [][]string{nil}},
		{"oci is a modelcar", model("oci://registry/m:1"), [][]string{nil}},
		{"no storageUri", model(nil), [][]string{nil}},
		{"an empty storageUri", model(""), [][]string{nil}},
		{"a storageUri that is not a string", model(int64(3)), [][]string{nil}},
		{"a framework key", map[string]any{"predictor": map[string]any{"sklearn": map[string]any{"storageUri": "gs://b/s"}}},
			[][]string{{si + "gs://b/s"}}},
		{"a storage spec", map[string]any{"predictor": map[string]any{"model": map[string]any{
			"storage": map[string]any{"key": "localMinIO", "path": "/sklearn/model.joblib"}}}},
			[][]string{{si + "<scheme-placeholder>://sklearn/model.joblib"}}},
		{"a custom predictor's STORAGE_URI, after its own init containers", map[string]any{"predictor": map[string]any{
			"initContainers": []any{map[string]any{"name": "setup"}},
			"containers":     []any{env("sidecar", "s3://no"), env("kserve-container", "s3://b/c")}}},
			[][]string{{"setup", si + "s3://b/c"}}},
		{"own init containers only", map[string]any{"predictor": map[string]any{
			"initContainers": []any{map[string]any{"name": "setup"}}, "containers": []any{map[string]any{"name": "kserve-container"}}}},
			[][]string{{"setup"}}},
		{"a transformer and an ART explainer", map[string]any{
			"predictor":   model("gs://b/p")["predictor"],
			"transformer": map[string]any{"containers": []any{env("kserve-container", "s3://b/t")}},
			"explainer":   map[string]any{"art": map[string]any{"type": "SquareAttack", "storageUri": "pvc://c/e"}}},
			[][]string{{si + "gs://b/p"}, {si + "s3://b/t"}, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, initContainerArgs(t, p, isvc(tc.spec)))
		})
	}

	// The container, as the shipped inferenceservice-config makes it.
	specs, err := p.GetPodSpecs(context.Background(), &unstructured.Unstructured{Object: isvc(model("s3://b/m"))})
	require.NoError(t, err)
	assert.Equal(t, []any{map[string]any{
		"name": "storage-initializer", "image": "kserve/storage-initializer:v0.15.0", "args": []any{"s3://b/m", "/mnt/models"},
		"resources": map[string]any{
			"limits":   map[string]any{"cpu": "1", "memory": "1Gi"},
			"requests": map[string]any{"cpu": "100m", "memory": "100Mi"},
		},
		"terminationMessagePolicy": "FallbackToLogsOnError",
		"volumeMounts":             []any{map[string]any{"name": "kserve-provision-location", "mountPath": "/mnt/models"}},
	}}, specs.Items[0].Fragmented.InitContainers)
}
