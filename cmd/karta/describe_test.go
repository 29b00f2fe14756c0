package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/cluster/clustertest"
	"github.com/kartalua/karta/workload"
)

// describeExamples are the built-ins whose running example and pods have
// golden descriptions, in the table and in JSON (a RayJob's submitter
// pod is outside its gang, placed in its component).
var describeExamples = []string{"pytorchjob", "jobset", "leaderworkerset", "raycluster", "rayjob", "milvus"}

// TestGoldenDescribe pins describe's output for files. Regenerate with:
// go test ./cmd/karta -run TestGoldenDescribe -update
func TestGoldenDescribe(t *testing.T) {
	type tc struct {
		name  string
		stdin []string
		args  []string
	}
	var cases []tc
	for _, ex := range describeExamples {
		running, pods := "../../examples/"+ex+"/running.yaml", "../../examples/"+ex+"/pods.yaml"
		cases = append(cases,
			tc{"describe-" + ex + "-table", nil, []string{"describe", "-f", running, "--pods", pods, "-o", "table"}},
			tc{"describe-" + ex + "-json", nil, []string{"describe", "-f", running, "--pods", pods, "-o", "json"}})
	}
	cases = append(cases, []tc{
		{"describe-yaml", nil, []string{"describe", "-f", pytorchRunning, "--pods", "../../examples/pytorchjob/pods.yaml", "-o", "yaml"}},
		{"describe-no-pods", nil, []string{"describe", "-f", "../../examples/jobset/running.yaml", "-o", "table"}},
		{"describe-no-pods-json", nil, []string{"describe", "-f", "../../examples/jobset/running.yaml", "-o", "json"}},
		{"describe-trainjob", nil, []string{"describe", "-k", trainKarta, "-f", trainJob, "--pods", trainPods, "-o", "table"}},
		{"describe-states", nil, []string{"describe", "-k", pytorchKarta, "-f", jobStates, "-o", "table"}},
		{"describe-pods-stdin", []string{"../../examples/raycluster/pods.yaml"}, []string{"describe", "-f", "../../examples/raycluster/running.yaml", "--pods", "-", "-o", "table"}},
		{"describe-pods-of-another-workload", nil, []string{"describe", "-f", pytorchRunning, "--pods", "../../examples/jobset/pods.yaml", "-o", "table"}},
		{"describe-no-object", nil, []string{"describe"}},
		{"describe-wrong-kind", nil, []string{"describe", "-k", "jobset", "-f", pytorchRunning}},
		{"describe-hook-error", nil, []string{"describe", "-k", pytorchKarta, "-f", "testdata/in/pytorchjob-bad-replicas.yaml"}},
		{"describe-both-stdin", nil, []string{"describe", "-f", "-", "--pods", "-"}},
		{"describe-file-and-name", nil, []string{"describe", "-f", pytorchRunning, "pytorchjob/mistral-7b-sft"}},
		{"describe-pods-without-file", nil, []string{"describe", "pytorchjob/mistral-7b-sft", "--pods", "../../examples/pytorchjob/pods.yaml"}},
		{"describe-kind-without-name", nil, []string{"describe", "pytorchjob"}},
		{"describe-missing-pods-file", nil, []string{"describe", "-f", pytorchRunning, "--pods", "testdata/in/no-such-file.yaml"}},
		{"describe-bad-output", nil, []string{"describe", "-f", pytorchRunning, "-o", "wide"}},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, joinDocuments(t, tc.stdin), tc.args...)
			checkGolden(t, tc.name, tc.args, stdout, stderr, code)
			assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
			if code != exitOK && !partialAnswers[tc.name] {
				assert.Empty(t, stdout, "a failed command prints nothing on standard output")
				assert.NotEmpty(t, stderr, "a failed command says why")
			}
		})
	}
}

// describe -o json prints the workload tree, which decodes as a
// workload.Node; pods of another workload are all unmatched, with a
// warning, and no pod is placed.
func TestDescribeJSONIsTheTree(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "describe", "-f", pytorchRunning, "--pods", "../../examples/pytorchjob/pods.yaml", "-o", "json")
	require.Equal(t, exitOK, code, stderr)
	var tree workload.Node
	require.NoError(t, json.Unmarshal([]byte(stdout), &tree))
	assert.Equal(t, workload.KindWorkload, tree.Kind)
	assert.Equal(t, 4, placed(&tree))

	stdout, stderr, code = runCLI(t, "", "describe", "-f", pytorchRunning, "--pods", "../../examples/jobset/pods.yaml", "-o", "json")
	require.Equal(t, exitOK, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &tree))
	assert.Equal(t, 0, placed(&tree))
	unmatched := 0
	for _, c := range tree.Children {
		if c.Kind == workload.KindPod {
			assert.NotEmpty(t, c.Fields.Reason, c.Name)
			unmatched++
		}
	}
	assert.Equal(t, 11, unmatched, "every pod of the JobSet example")
	assert.Contains(t, stderr, "warning: none of the 11 pods")
}

// TestGoldenDescribeLive pins describe KIND/NAME against a fake cluster
// holding every built-in example. Regenerate with:
// go test ./cmd/karta -run TestGoldenDescribeLive -update
func TestGoldenDescribeLive(t *testing.T) {
	cases := []struct {
		name string
		args []string
		// objs are the cluster's objects; nil is every built-in example.
		objs func(t *testing.T) []*unstructured.Unstructured
	}{
		{name: "describe-live-table", args: []string{"describe", "pytorchjob/mistral-7b-sft", "-o", "table"}},
		{name: "describe-live-json", args: []string{"describe", "leaderworkerset", "vllm-llama3-405b", "-n", "inference", "-o", "json"}},
		{name: "describe-live-owned", args: []string{"describe", "raycluster/resnet-train-raycluster-7bq8l", "-n", "ml-training", "-o", "table"}},
		{name: "describe-live-unplaced", args: []string{"describe", "jobsets/llama3-pretrain", "-n", "ml-research", "-o", "table"}, objs: jobSetWithStray},
		{name: "describe-live-karta-file", args: []string{"describe", "trainjob.example.com/llm-finetune", "-n", "ml", "-k", trainKarta, "-o", "table"}, objs: trainJobObjects},
		{name: "describe-live-not-found", args: []string{"describe", "pytorchjob/nope"}},
		{name: "describe-live-unknown-kind", args: []string{"describe", "configmap/web"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			if tc.objs != nil {
				objs = tc.objs(t)
			} else {
				objs = clustertest.Examples(t, "../..", exampleNames...)
			}
			useFakeCluster(t, []clustertest.Resource{trainJobResource}, objs...)
			stdout, stderr, code := runCLI(t, "", tc.args...)
			checkGolden(t, tc.name, tc.args, stdout, stderr, code)
			assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
			if code != exitOK && !partialAnswers[tc.name] {
				assert.Empty(t, stdout, "a failed command prints nothing on standard output")
				assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line says why")
			}
		})
	}
}

// jobSetWithStray is the JobSet example with a pod its driver Job owns
// that the Karta does not place (a debugging pod without JobSet's
// labels): live, describe shows it as unmatched, with why.
func jobSetWithStray(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs := clustertest.Examples(t, "../..", "jobset")
	for _, o := range objs {
		if o.GetKind() == "Pod" && o.GetName() == "llama3-pretrain-driver-0-0-8tfql" {
			stray := o.DeepCopy()
			stray.SetName("llama3-pretrain-driver-0-0-debug")
			stray.SetUID("e0000000-0000-4000-8000-000000000001")
			stray.SetLabels(map[string]string{"app": "debug"})
			stray.SetCreationTimestamp(metav1.Time{})
			return append(objs, stray)
		}
	}
	t.Fatal("no driver pod in the JobSet example")
	return nil
}
