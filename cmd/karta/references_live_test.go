package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/cluster/clustertest"
)

// The trainer's runtimes, which examples/kartas/trainjob-runtime.yaml
// references.
var runtimeResources = []clustertest.Resource{
	{GVK: schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"}},
	{GVK: schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainingRuntime"}, Namespaced: true},
}

// runtimeCluster holds the TrainJob example, its ClusterTrainingRuntime
// and, as a Karta of the cluster, examples/kartas/trainjob-runtime.yaml.
func runtimeCluster(t *testing.T, withRuntime bool) {
	t.Helper()
	files := []string{"../../examples/kartas/trainjob-runtime.yaml", "../../examples/trainjob/running.yaml"}
	if withRuntime {
		files = append(files, "../../examples/trainjob/refs/torchtune-llama3.2-3b.yaml")
	}
	useFakeCluster(t, runtimeResources, clustertest.Read(t, files...)...)
}

// The live commands resolve a Karta's references from the cluster: get
// and describe KIND/NAME through the cluster's Karta, the data commands
// with --live; a runtime the cluster lacks is absent, with a warning.
func TestLiveReferences(t *testing.T) {
	t.Run("get", func(t *testing.T) {
		runtimeCluster(t, true)
		stdout, stderr, code := runCLI(t, "", "get", "trainjobs.trainer.kubeflow.org/llama32-3b-alpaca", "-n", "llm-team", "-o", "json")
		require.Equal(t, exitOK, code, stderr)
		assert.NotContains(t, stderr, "reference")
		var w struct {
			Karta      string
			Components []struct{ Name, Instance string }
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &w), stdout)
		assert.Equal(t, "trainjob-runtime", w.Karta)
		var instances []string
		for _, c := range w.Components {
			instances = append(instances, c.Instance)
		}
		assert.Equal(t, []string{"dataset-initializer", "model-initializer", "node"}, instances)
	})
	t.Run("describe", func(t *testing.T) {
		runtimeCluster(t, true)
		stdout, stderr, code := runCLI(t, "", "describe", "trainjobs.trainer.kubeflow.org/llama32-3b-alpaca", "-n", "llm-team", "-o", "table")
		require.Equal(t, exitOK, code, stderr)
		assert.Regexp(t, `(?m)^  \$cluster +ClusterTrainingRuntime.trainer.kubeflow.org +torchtune-llama3.2-3b +torchtune-llama3.2-3b +<none>$`, stdout)
		assert.Regexp(t, `(?m)^      Images: +ghcr.io/kubeflow/trainer/torchtune-trainer$`, stdout)
		assert.Regexp(t, `(?m)^  pg-2b8e6d14-7c3f-4a95-9e01-5d7b3c8a6f29-trainjob +3 +0$`, stdout, "the runtime's gang")
	})
	t.Run("describe without the runtime", func(t *testing.T) {
		runtimeCluster(t, false)
		stdout, stderr, code := runCLI(t, "", "describe", "trainjobs.trainer.kubeflow.org/llama32-3b-alpaca", "-n", "llm-team", "-o", "table")
		require.Equal(t, exitOK, code, stderr)
		assert.Regexp(t, `(?m)^  \$cluster +ClusterTrainingRuntime.trainer.kubeflow.org +torchtune-llama3.2-3b +<none> +ClusterTrainingRuntime torchtune-llama3.2-3b not found: null$`, stdout)
		assert.Equal(t, "karta: warning: karta \"trainjob-runtime\": reference \"cluster\": ClusterTrainingRuntime torchtune-llama3.2-3b not found: null\n", stderr)
	})
	t.Run("pods --live", func(t *testing.T) {
		runtimeCluster(t, true)
		stdout, stderr, code := runCLI(t, "", "pods", "--live", "-k", "../../examples/kartas/trainjob-runtime.yaml", "-f", "../../examples/trainjob/running.yaml", "-o", "json")
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stderr)
		var specs struct{ Items []map[string]any }
		require.NoError(t, json.Unmarshal([]byte(stdout), &specs))
		require.Len(t, specs.Items, 3)
		containers, _, _ := unstructured.NestedSlice(specs.Items[2], "podTemplateSpec", "spec", "containers")
		require.NotEmpty(t, containers)
		assert.Equal(t, "ghcr.io/kubeflow/trainer/torchtune-trainer", containers[0].(map[string]any)["image"])
	})
	t.Run("--live and --ref", func(t *testing.T) {
		_, stderr, code := runCLI(t, "", "status", "--live", "--ref", "../../examples/trainjob/refs/torchtune-llama3.2-3b.yaml", "-k", "../../examples/kartas/trainjob-runtime.yaml", "-f", "../../examples/trainjob/running.yaml")
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "--live and --ref cannot be used together")
	})
}
