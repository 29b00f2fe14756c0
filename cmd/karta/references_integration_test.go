//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/podgroups"
	"github.com/kartalua/karta/webhook"
)

var (
	trainJobGVR       = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}
	clusterRuntimeGVR = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "clustertrainingruntimes"}
)

// A TrainJob with its ClusterTrainingRuntime, through the Karta that reads
// the runtime (examples/kartas/trainjob-runtime.yaml) stored in the
// cluster, end to end (issue 32's "Done when"): `karta controller`'s gang
// output writes the runtime's gang (its three jobs) and its webhook
// answers Karmada's InterpretComponent with the runtime's jobs, as does
// `karta serve --kubeconfig` with the Karta given by file; the runtime
// gains a job, and the gang and both answers follow it. The cluster's
// Karta runs isolated (a worker process), as the controller runs every
// Karta of the cluster: the supervisor resolves its references.
func TestIntegrationReferences(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	ctx := t.Context()
	testLabel := "karta.run.ai/test=" + ns

	// The runtime (cluster-scoped: named after the test's namespace), the
	// TrainJob that names it, and the Karta, labelled for this test's
	// controller.
	runtime := createRuntime(t, dyn, ns)
	runtimes := dyn.Resource(clusterRuntimeGVR)
	k := readExample(t, "examples/kartas/trainjob-runtime.yaml")
	k.SetName(ns + "-trainjob-runtime")
	k.SetLabels(map[string]string{"karta.run.ai/test": ns})
	kartas := dyn.Resource(controller.KartaResource)
	_, err = kartas.Create(ctx, k, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kartas.Delete(context.Background(), k.GetName(), metav1.DeleteOptions{}) })

	c := startController(t, "--kubeconfig", testenv.Kubeconfig(t), "--leader-elect=false",
		"-l", testLabel, "--gang-output", "volcano", "--gang-output-selector", testLabel,
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--serve", "127.0.0.1:0")

	tj := readExample(t, "examples/trainjob/running.yaml")
	tj.SetNamespace(ns)
	tj.SetUID("")
	tj.SetResourceVersion("")
	tj.SetCreationTimestamp(metav1.Time{})
	tj.SetLabels(map[string]string{"karta.run.ai/test": ns})
	require.NoError(t, unstructured.SetNestedField(tj.Object, runtime.GetName(), "spec", "runtimeRef", "name"))
	delete(tj.Object, "status")
	tj, err = dyn.Resource(trainJobGVR).Namespace(ns).Create(ctx, tj, metav1.CreateOptions{})
	require.NoError(t, err)

	// The gang output writes the runtime's gang.
	group := podgroups.ObjectName(podgroups.Volcano, fmt.Sprintf("pg-%s-trainjob", tj.GetUID()))
	podGroups := dyn.Resource(volcanoGroupGVR).Namespace(ns)
	minMember := func() int64 {
		pg, err := podGroups.Get(ctx, group, metav1.GetOptions{})
		if err != nil {
			return -1
		}
		n, _, _ := unstructured.NestedInt64(pg.Object, "spec", "minMember")
		return n
	}
	require.Eventually(t, func() bool { return minMember() == 3 }, 2*time.Minute, 100*time.Millisecond,
		"PodGroup %s of the runtime's three jobs (min member %d); stderr: %s", group, minMember(), c.stderr.String())

	// karta serve, resolving from the same cluster.
	serveAddr, _, serveErr := startServe(t, ctx, regexp.MustCompile(`serving \d+ kinds on http://(127\.0\.0\.1:\d+)`), "serve", "--listen", "127.0.0.1:0", "--kubeconfig", testenv.Kubeconfig(t),
		"--builtins=false", "-k", "../../examples/kartas/trainjob-runtime.yaml")

	// Karmada's InterpretComponent on the TrainJob: the runtime's jobs.
	body, err := json.Marshal(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "request": map[string]any{
		"uid": "c-1", "operation": "InterpretComponent", "object": tj.Object,
		"kind": map[string]string{"group": "trainer.kubeflow.org", "version": "v1alpha1", "kind": "TrainJob"},
	}})
	require.NoError(t, err)
	components := func(addr string) ([]string, []string) {
		resp, err := http.Post("http://"+addr+webhook.InterpretPath, "application/json", bytes.NewReader(body))
		if err != nil {
			return nil, []string{err.Error()}
		}
		defer func() { _ = resp.Body.Close() }()
		var out webhook.ResourceInterpreterContext
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Response == nil || !out.Response.Successful {
			return nil, []string{fmt.Sprintf("%v %+v", err, out.Response)}
		}
		var names []string
		for _, comp := range out.Response.Components {
			names = append(names, comp.Name)
		}
		return names, resp.Header.Values("Warning")
	}
	servers := map[string]string{"controller": c.addrs["the interpreter webhook"], "serve": serveAddr}
	for what, addr := range servers {
		var got, warnings []string
		require.Eventually(t, func() bool {
			got, warnings = components(addr)
			return len(got) == 3 && len(warnings) == 0
		}, time.Minute, 100*time.Millisecond, "%s: components %v, warnings %v; stderr: %s%s", what, got, warnings, c.stderr.String(), serveErr.String())
		assert.Equal(t, []string{"dataset-initializer", "model-initializer", "node"}, got, what)
	}

	// The runtime gains a job: the gang and the answers follow.
	runtime, err = runtimes.Get(ctx, runtime.GetName(), metav1.GetOptions{})
	require.NoError(t, err)
	jobs, _, err := unstructured.NestedSlice(runtime.Object, "spec", "template", "spec", "replicatedJobs")
	require.NoError(t, err)
	evaluator := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(`
name: evaluator
template:
  spec:
    template:
      spec:
        containers: [{name: eval, image: registry.example.com/eval:1}]
`), &evaluator))
	require.NoError(t, unstructured.SetNestedSlice(runtime.Object, append(jobs, evaluator), "spec", "template", "spec", "replicatedJobs"))
	_, err = runtimes.Update(ctx, runtime, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return minMember() == 4 }, 2*time.Minute, 100*time.Millisecond,
		"the gang follows the runtime (min member %d); stderr: %s", minMember(), c.stderr.String())
	for what, addr := range servers {
		var got []string
		require.Eventually(t, func() bool {
			got, _ = components(addr)
			return len(got) == 4
		}, time.Minute, 100*time.Millisecond, "%s follows the runtime: %v", what, got)
		assert.Equal(t, []string{"dataset-initializer", "model-initializer", "node", "evaluator"}, got, what)
	}
}

// createRuntime creates the torchtune ClusterTrainingRuntime of
// examples/trainjob/refs, named rt-NS (it is cluster-scoped), until the
// test ends.
func createRuntime(t *testing.T, dyn dynamic.Interface, ns string) *unstructured.Unstructured {
	t.Helper()
	runtime := readExample(t, "examples/trainjob/refs/torchtune-llama3.2-3b.yaml")
	runtime.SetName("rt-" + ns)
	runtimes := dyn.Resource(clusterRuntimeGVR)
	runtime, err := runtimes.Create(t.Context(), runtime, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = runtimes.Delete(context.Background(), runtime.GetName(), metav1.DeleteOptions{}) })
	return runtime
}

// readExample reads a repository file of one object.
func readExample(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	data, err := os.ReadFile("../../" + path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &u.Object))
	return u
}
