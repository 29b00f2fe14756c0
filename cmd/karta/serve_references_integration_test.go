//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/webhook"
)

// karta serve --kubeconfig answers Karmada for the built-in TrainJob with
// the ClusterTrainingRuntime it names, read from the cluster: the
// runtime's jobs, the node's template with the TrainJob's node selector,
// and the runtime's volume claim and the model initializer's secret as
// dependencies. Its /readyz is "ok" once its cache of the referenced
// kinds is synced, and its /metrics holds the webhook's and the cache's
// series. The controller's SchemaChecked condition refutes a Karta whose
// expression misreads the runtime ($cluster.spek) through the runtime's
// CRD in the cluster.
func TestIntegrationServeReferences(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	ctx := t.Context()

	runtime := createRuntime(t, dyn, ns)

	tj := readExample(t, "examples/trainjob/running.yaml")
	tj.SetNamespace(ns)
	require.NoError(t, unstructured.SetNestedField(tj.Object, runtime.GetName(), "spec", "runtimeRef", "name"))

	addr, _, stderr := startServe(t, ctx, regexp.MustCompile(`serving \d+ kinds on http://(127\.0\.0\.1:\d+)`),
		"serve", "--listen", "127.0.0.1:0", "--kubeconfig", testenv.Kubeconfig(t))
	require.Eventually(t, func() bool {
		code, body := httpGet(addr, readyzPath)
		return code == http.StatusOK && body == "ok"
	}, time.Minute, 100*time.Millisecond, "serve's /readyz; stderr: %s", stderr.String())

	ask := func(op string) (*webhook.ResourceInterpreterResponse, []string) {
		body, err := json.Marshal(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "request": map[string]any{
			"uid": "u-" + op, "operation": op, "object": tj.Object,
			"kind": map[string]string{"group": "trainer.kubeflow.org", "version": "v1alpha1", "kind": "TrainJob"},
		}})
		require.NoError(t, err)
		resp, err := http.Post("http://"+addr+webhook.InterpretPath, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		var out webhook.ResourceInterpreterContext
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.NotNil(t, out.Response)
		require.True(t, out.Response.Successful, "%s: %+v", op, out.Response.Status)
		return out.Response, resp.Header.Values("Warning")
	}
	resp, warnings := ask("InterpretComponent")
	assert.Empty(t, warnings)
	var names []string
	for _, c := range resp.Components {
		names = append(names, c.Name)
		if c.Name == "node" {
			require.NotNil(t, c.ReplicaRequirements)
			require.NotNil(t, c.ReplicaRequirements.NodeClaim, "the runtime's node template, with the TrainJob's override")
			assert.Equal(t, map[string]string{"node.kubernetes.io/instance-type": "g6e.12xlarge"}, c.ReplicaRequirements.NodeClaim.NodeSelector)
		}
	}
	assert.Equal(t, []string{"dataset-initializer", "model-initializer", "node"}, names)
	resp, warnings = ask("InterpretDependency")
	assert.Empty(t, warnings)
	var deps []string
	for _, d := range resp.Dependencies {
		deps = append(deps, d.Kind+" "+d.Namespace+"/"+d.Name)
	}
	assert.Equal(t, []string{"PersistentVolumeClaim " + ns + "/initializer", "Secret " + ns + "/hf-token"}, deps)
	_, metrics := httpGet(addr, webhook.MetricsPath)
	assert.Contains(t, metrics, `karta_webhook_calls_total{api_version="trainer.kubeflow.org/v1alpha1",kind="TrainJob",operation="InterpretComponent"} 1`)
	assert.NotContains(t, metrics, "karta_watch_failing{", "every referenced kind's watch answers")

	// The controller checks a Karta's expressions over the runtime
	// through the runtime's CRD.
	testLabel := "karta.run.ai/test=" + ns
	k := readExample(t, "examples/kartas/trainjob-runtime.yaml")
	k.SetName(ns + "-runtime-drifted")
	k.SetLabels(map[string]string{"karta.run.ai/test": ns})
	children, _, err := unstructured.NestedSlice(k.Object, "spec", "structureDefinition", "childComponents")
	require.NoError(t, err)
	children[0].(map[string]any)["instanceIdPath"] = "$cluster.spek.template.spec.replicatedJobs[]?.name"
	require.NoError(t, unstructured.SetNestedSlice(k.Object, children, "spec", "structureDefinition", "childComponents"))
	kartas := dyn.Resource(controller.KartaResource)
	_, err = kartas.Create(ctx, k, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kartas.Delete(context.Background(), k.GetName(), metav1.DeleteOptions{}) })
	c := startController(t, "--kubeconfig", testenv.Kubeconfig(t), "--leader-elect=false", "-l", testLabel,
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--serve", "127.0.0.1:0")
	var got string
	require.Eventually(t, func() bool {
		obj, err := kartas.Get(ctx, k.GetName(), metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == controller.ConditionSchemaChecked {
				got = fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"])
			}
		}
		return strings.HasPrefix(got, "False "+controller.ReasonSchemaMismatch)
	}, 2*time.Minute, 100*time.Millisecond, "SchemaChecked: %s; stderr: %s", got, c.stderr.String())
	assert.Contains(t, got, `spec.structureDefinition.childComponents[0].instanceIdPath: $cluster has no field "spek"; did you mean "spec"?`)
	assert.Contains(t, got, "(schema: trainer.kubeflow.org/v1alpha1 ClusterTrainingRuntime $cluster)")
}
