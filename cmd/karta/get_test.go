package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
)

// clusterNow is the time the golden tables' ages are measured at.
var clusterNow = time.Date(2025, 9, 4, 12, 0, 0, 0, time.UTC)

// exampleNames are the examples of the built-in Kartas.
var exampleNames = []string{
	"dynamographdeployment", "dynamographdeployment-v1beta1", "inferenceservice", "jaxjob", "jobset", "knative-service", "leaderworkerset",
	"llminferenceservice", "llminferenceservice-v1alpha1", "milvus",
	"appwrapper", "cronjob", "daemonset", "deployment", "flinkdeployment", "job", "mpijob", "mpijob-v1", "nimcache",
	"nimservice", "notebook", "paddlejob", "pod", "podcliqueset", "pytorchjob", "raycluster", "rayjob", "rayservice",
	"replicaset", "sandbox", "sparkapplication", "statefulset", "tfjob", "trainjob", "volcano-job", "workflow",
	"xgboostjob",
}

var trainJobResource = clustertest.Resource{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "TrainJob"}, Namespaced: true}

// useFakeCluster points the commands at a fake cluster that serves the
// built-in kinds (and more) and holds objs, with a kubeconfig whose
// context's namespace is nlp, and pins the clock.
func useFakeCluster(t *testing.T, more []clustertest.Resource, objs ...*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	t.Helper()
	resources := append(append(clustertest.Core(), clustertest.Builtins(t)...), more...)
	c, dyn := clustertest.New(t, resources, objs...)
	oldClient, oldNow := newClusterClient, now
	newClusterClient = func(streams, *cluster.ConfigFlags) (*cluster.Client, error) { return c, nil }
	now = func() time.Time { return clusterNow }
	t.Cleanup(func() { newClusterClient, now = oldClient, oldNow })
	t.Setenv("KUBECONFIG", clusterKubeconfig(t, "https://fake.cluster.test", "nlp"))
	return dyn
}

// clusterKubeconfig writes a kubeconfig for server whose context's
// namespace is ns.
func clusterKubeconfig(t *testing.T, server, ns string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\ncurrent-context: test\n" +
		"clusters:\n- name: test\n  cluster: {server: " + server + ", insecure-skip-tls-verify: true}\n" +
		"users:\n- name: test\n  user: {token: secret}\n" +
		"contexts:\n- name: test\n  context: {cluster: test, user: test, namespace: " + ns + "}\n"
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// trainJobCluster is the TrainJob example with its Karta stored in the
// cluster (and a broken one next to it), its pods owned by it as an
// operator would own them.
func trainJobCluster(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	return append(trainJobObjects(t), clustertest.Read(t, "../../examples/kartas/broken.yaml")...)
}

// trainJobObjects is the TrainJob example with its Karta stored in the cluster.
func trainJobObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs := clustertest.Read(t, "../../examples/kartas/trainjob.yaml", "../../examples/tutorial-trainjob/running.yaml")
	job := objs[1]
	job.SetCreationTimestamp(metav1.NewTime(clusterNow.Add(-90 * time.Minute)))
	job.SetResourceVersion("5150")
	for _, pod := range clustertest.Read(t, "../../examples/tutorial-trainjob/pods.yaml") {
		pod.SetOwnerReferences([]metav1.OwnerReference{clustertest.OwnerRef(job)})
		objs = append(objs, pod)
	}
	return objs
}

// TestGoldenGet pins get's output against a fake cluster holding every
// built-in example. Regenerate with: go test ./cmd/karta -run TestGoldenGet -update
func TestGoldenGet(t *testing.T) {
	badJob := "testdata/in/pytorchjob-bad-replicas.yaml"
	cases := []struct {
		name string
		args []string
		// objs are the cluster's objects; nil is every built-in example.
		objs func(t *testing.T) []*unstructured.Unstructured
		more []clustertest.Resource
	}{
		{name: "get-all-table", args: []string{"get", "-A", "-o", "table"}},
		{name: "get-all-json", args: []string{"get", "-A", "-o", "json"}},
		{name: "get-namespace-table", args: []string{"get", "-o", "table"}},
		{name: "get-kind-table", args: []string{"get", "RayClusters", "-n", "ml-research", "-o", "table"}},
		{name: "get-top-level-table", args: []string{"get", "-n", "ml-training", "-o", "table"}},
		{name: "get-owned-by-kind-table", args: []string{"get", "rayclusters", "-n", "ml-training", "-o", "table"}},
		{name: "get-short-name-table", args: []string{"get", "isvc", "-A", "-o", "table"}},
		{name: "get-karta-name-table", args: []string{"get", "mpijob", "-A", "-o", "table"}},
		{name: "get-name-json", args: []string{"get", "pytorchjob/mistral-7b-sft", "-o", "json"}},
		{name: "get-name-yaml", args: []string{"get", "leaderworkerset", "vllm-llama3-405b", "-n", "inference", "-o", "yaml"}},
		{name: "get-empty-table", args: []string{"get", "-n", "nobody-here", "-o", "table"}},
		{name: "get-empty-json", args: []string{"get", "-n", "nobody-here", "-o", "json"}},
		{name: "get-hook-error", args: []string{"get", "pytorchjobs", "-A", "-o", "table"},
			objs: func(t *testing.T) []*unstructured.Unstructured {
				return append(clustertest.Examples(t, "../..", "pytorchjob"), clustertest.Read(t, badJob)...)
			}},
		{name: "get-cluster-karta", args: []string{"get", "-n", "ml", "-o", "table"}, objs: trainJobCluster, more: []clustertest.Resource{trainJobResource}},
		{name: "get-cluster-karta-json", args: []string{"get", "example-trainjob/llm-finetune", "-n", "ml", "-o", "json"}, objs: trainJobCluster, more: []clustertest.Resource{trainJobResource}},
		{name: "get-not-found", args: []string{"get", "pytorchjob/nope"}},
		{name: "get-unknown-kind", args: []string{"get", "configmaps"}},
		{name: "get-not-served", args: []string{"get", "example-trainjob", "-n", "ml"}, objs: trainJobObjects},
		{name: "get-name-all-namespaces", args: []string{"get", "pytorchjob/mistral-7b-sft", "-A"}},
		{name: "get-empty-name", args: []string{"get", "pytorchjob/"}},
		{name: "get-too-many-args", args: []string{"get", "pytorchjob", "a", "b"}},
		{name: "get-bad-output", args: []string{"get", "-o", "wide"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			if tc.objs != nil {
				objs = tc.objs(t)
			} else {
				objs = clustertest.Examples(t, "../..", exampleNames...)
			}
			useFakeCluster(t, tc.more, objs...)
			stdout, stderr, code := runCLI(t, "", tc.args...)
			checkGolden(t, tc.name, tc.args, stdout, stderr, code)
			assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
			if code != exitOK {
				assert.Empty(t, stdout, "a failed command prints nothing on standard output")
				assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line says why")
			}
		})
	}
}
