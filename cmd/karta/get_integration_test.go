//go:build integration

package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
	"github.com/kartalua/karta/internal/testenv"
)

// liveCluster deploys examples into a fresh namespace of the test cluster
// (CRDs installed, pods on a kwok node) and returns the kubeconfig, the
// namespace and a dynamic client.
func liveCluster(t *testing.T, examples ...string) (kubeconfig, ns string, dyn dynamic.Interface, c *cluster.Client) {
	t.Helper()
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns = testenv.Namespace(t, cfg)
	node := testenv.FakeNode(t, cfg)
	c, err := cluster.NewClient(cfg)
	require.NoError(t, err)
	dyn, err = dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	for _, name := range examples {
		if clustertest.IsNative(name) {
			// The API server's own kinds: the real controllers run them.
			clustertest.DeployNative(t, dyn, c.Mapper, "../..", name, ns)
			continue
		}
		clustertest.Deploy(t, dyn, c.Mapper, "../..", name, ns, node)
	}
	return testenv.Kubeconfig(t), ns, dyn, c
}

// karta get -A against a real API server shows every built-in workload of
// the test's namespace with its status (other tests' namespaces may hold
// more), once: what a workload owns (a Deployment's ReplicaSet, every pod)
// is part of its row. The API server's own kinds are run by the real
// controllers on kwok's nodes, so the listing is read again until they have
// settled (the Job's pods complete; the CronJob waits for 02:00). get -n
// KIND shows the table.
func TestLiveGetCommand(t *testing.T) {
	kubeconfig, ns, dyn, _ := liveCluster(t, exampleNames...)

	want := map[string]string{
		"CronJob/model-eval-nightly":              "Running",
		"DaemonSet/dcgm-exporter":                 "Running",
		"Deployment/vllm-llama3-8b":               "Running",
		"DynamoGraphDeployment/llama3-70b-disagg": "Running",
		"DynamoGraphDeployment/qwen3-32b-disagg":  "Running",
		"LLMInferenceService/deepseek-r1-0528":    "Running",
		"LLMInferenceService/llama-3-3-70b":       "Running",
		"NIMCache/nemotron-super-49b":             "Running",
		"PodCliqueSet/sglang-disagg":              "Running",
		"InferenceService/mnist-classifier":       "Running",
		"JAXJob/llama2-7b-maxtext":                "Running",
		"Job/llm-eval-harness":                    "Completed",
		"JobSet/llama3-pretrain":                  "Running",
		"LeaderWorkerSet/vllm-llama3-405b":        "Running",
		"MPIJob/imdb-horovod":                     "Running",
		"MPIJob/resnet50-horovod":                 "Running",
		"Milvus/milvus-prod":                      "Running",
		"NIMService/meta-llama3-8b-instruct":      "Running",
		"Notebook/alice-pytorch":                  "Running",
		"PaddleJob/ernie-finetune":                "Running",
		"Pod/nccl-tests-gpu-h100-05":              "Running",
		"PyTorchJob/mistral-7b-sft":               "Running",
		"RayCluster/llm-train":                    "Running",
		"RayJob/resnet-train":                     "Running",
		"ReplicaSet/triton-resnet50-7c9d5b8f64":   "Running",
		"Service/thumbnailer":                     "Running",
		"AppWrapper/granite-ft":                   "Running",
		"FlinkDeployment/fraud-scoring":           "Running",
		"Job/bert-pretrain":                       "Running",
		"RayService/llama-serve":                  "Running",
		"Sandbox/swe-agent-4821":                  "Running",
		"SparkApplication/clickstream-etl":        "Running",
		"StatefulSet/qdrant":                      "Running",
		"TFJob/wide-deep-ctr":                     "Running",
		"TrainJob/llama32-3b-alpaca":              "Running",
		"Workflow/fraud-model-9hq2w":              "Running",
		"XGBoostJob/fraud-gbdt":                   "Running",
	}
	statuses := func() map[string]string {
		stdout, stderr, code := runCLI(t, "", "get", "-A", "-o", "json", "--kubeconfig", kubeconfig)
		require.Equal(t, exitOK, code, stderr)
		var list struct {
			Items []cluster.Workload `json:"items"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &list))
		got := map[string]string{}
		for _, w := range list.Items {
			if w.Namespace == ns {
				got[w.Kind+"/"+w.Name] = w.Status
			}
		}
		return got
	}
	_ = wait.PollUntilContextTimeout(t.Context(), 3*time.Second, 3*time.Minute, true, func(context.Context) (bool, error) {
		return reflect.DeepEqual(want, statuses()), nil
	})
	if !assert.Equal(t, want, statuses()) {
		clustertest.LogPods(t, dyn, ns)
	}

	stdout, stderr, code := runCLI(t, "", "get", "pytorchjobs", "-n", ns, "-o", "table", "--kubeconfig", kubeconfig)
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2, stdout)
	assert.Regexp(t, `^NAME +KIND +STATUS +PODS +GANGS +AGE$`, lines[0])
	assert.Regexp(t, `^mistral-7b-sft +PyTorchJob +Running +master 1/1 worker 3/3 +4/4 +\S+$`, lines[1])

	_, stderr, code = runCLI(t, "", "get", "pytorchjob/nope", "-n", ns, "--kubeconfig", kubeconfig)
	assert.Equal(t, exitInvalid, code)
	assert.Equal(t, `karta: pytorchjobs.kubeflow.org "nope" not found in namespace "`+ns+`"`+"\n", stderr)
}

// karta revise --live against a real API server: --dry-run=server prints
// the result and stores nothing; without it the change is stored; and a
// concurrent writer between read and patch costs one more round, keeping
// both changes.
func TestLiveReviseCommand(t *testing.T) {
	kubeconfig, ns, dyn, c := liveCluster(t, "pytorchjob")
	reg, err := builtinRegistry()
	require.NoError(t, err)
	kinds, err := c.Kinds(reg, "pytorchjob")
	require.NoError(t, err)
	jobs := dyn.Resource(kinds[0].Mapping.Resource).Namespace(ns)
	stored := func() *unstructured.Unstructured {
		u, err := jobs.Get(context.Background(), "mistral-7b-sft", metav1.GetOptions{})
		require.NoError(t, err)
		return u
	}
	scheduler := func(u *unstructured.Unstructured) string {
		s, _, _ := unstructured.NestedString(u.Object, "spec", "pytorchReplicaSpecs", "Master", "template", "spec", "schedulerName")
		return s
	}
	args := []string{"revise", "--live", "pytorchjob/mistral-7b-sft", "-n", ns, "-r", pytorchRevisions, "--kubeconfig", kubeconfig}

	before := stored()
	stdout, stderr, code := runCLI(t, "", append(args, "--dry-run=server", "-o", "json")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"schedulerName": "kai-scheduler"`)
	assert.Equal(t, before.GetResourceVersion(), stored().GetResourceVersion(), "a dry run stores nothing")

	writes := 0
	beforeLivePatch = func(ctx context.Context, attempt int) error {
		if attempt > 1 {
			return nil
		}
		writes++
		_, err := jobs.Patch(ctx, "mistral-7b-sft", types.MergePatchType, []byte(`{"metadata":{"annotations":{"owner":"nlp-team"}}}`), metav1.PatchOptions{})
		return err
	}
	t.Cleanup(func() { beforeLivePatch = nil })
	stdout, stderr, code = runCLI(t, "", append(args, "-o", "patch")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 1, writes)
	var patch []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &patch))
	require.NotEmpty(t, patch)
	assert.Equal(t, "test", patch[0]["op"])
	assert.NotEqual(t, before.GetResourceVersion(), patch[0]["value"], "the patch sent is the one recomputed after the concurrent write")
	after := stored()
	assert.Equal(t, "nlp-team", after.GetAnnotations()["owner"], "the concurrent write is kept")
	assert.Equal(t, "kai-scheduler", scheduler(after), "the revision is stored")
}
