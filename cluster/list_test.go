package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
)

// row is a workload summary in the words of get's table: existing/expected
// pods per component instance and present/minMember per gang.
func row(w cluster.Workload) string {
	var pods, gangs []string
	for _, c := range w.Components {
		existing, expected := "?", "?"
		if c.Existing != nil {
			existing = fmt.Sprint(*c.Existing)
		}
		if c.Expected != nil {
			expected = fmt.Sprint(*c.Expected)
		}
		pods = append(pods, fmt.Sprintf("%s %s/%s", c.Label(), existing, expected))
	}
	for _, g := range w.Groups {
		gangs = append(gangs, fmt.Sprintf("%d/%d", g.Present, g.MinMember))
	}
	return fmt.Sprintf("%s %s/%s %s [%s] [%s]", w.Kind, w.Namespace, w.Name, w.Status, strings.Join(pods, " "), strings.Join(gangs, ","))
}

func list(t *testing.T, c *cluster.Client, kind string, opts cluster.ListOptions) []cluster.Workload {
	t.Helper()
	reg, err := c.Registry(context.Background(), cluster.RegistryOptions{Base: builtins(t)})
	require.NoError(t, err)
	kinds, err := c.Kinds(reg, kind)
	require.NoError(t, err)
	ws, err := c.List(context.Background(), kinds, opts)
	require.NoError(t, err)
	return ws
}

// Every built-in example, listed together as get -A lists them: each
// workload with its status, the pods it owns per component instance and
// its gang groups. The fixtures' other pods count nowhere: those of a
// ReplicaSet, a StatefulSet or a Job (a tensorboard, a notebook, an
// evaluation Job, the staging copies in other namespaces) are part of
// their owners' rows, which the fixtures do not hold; the bare ones are
// Pods of their own (load tests, a debugging pod, a GPU burn-in, a finished
// volume initialiser). A RayJob's and a RayService's RayCluster, the
// PyTorchJob an AppWrapper wraps, a Workflow's pod and the ReplicaSet of a
// Deployment are part of their owners' rows. The fake cluster serves each
// kind in one version (MPIJob v1, DynamoGraphDeployment v1beta1,
// LLMInferenceService v1alpha2), so the examples written in the other
// version are not listed, and the pods of the v1alpha1
// DynamoGraphDeployment, under Grove's PodCliques (a kind not listed),
// show as Pods.
func TestListBuiltinExamples(t *testing.T) {
	c, _ := fakeCluster(t, examples(t, builtinExamples...)...)
	ws := list(t, c, "", cluster.ListOptions{TopLevel: true})
	var got []string
	for _, w := range ws {
		got = append(got, row(w))
	}
	assert.Equal(t, []string{
		"Sandbox agents/swe-agent-4821 Running [sandbox 1/1] [1/1]",
		"SparkApplication data-eng/clickstream-etl Running [driver 1/1 executor 4/4] [5/1]",
		"DynamoGraphDeployment dynamo-inference/qwen3-32b-disagg Running [component/frontend 1/1 component/decode 4/4 component/prefill 2/2] [5/4,2/2]",
		"Pod dynamo-inference/aiperf-llama3-70b Initializing [pod 1/1] [1/1]",
		"Pod dynamo-inference/aiperf-qwen3-32b Initializing [pod 1/1] [1/1]",
		"Pod dynamo-inference/llama3-70b-disagg-0-frontend-q7x2k Running [pod 1/1] [1/1]",
		"Pod dynamo-inference/llama3-70b-disagg-0-vllmdecodeworker-0-vllmdecodeworker-ldr-m4n8q Running [pod 1/1] [1/1]",
		"Pod dynamo-inference/llama3-70b-disagg-0-vllmdecodeworker-0-vllmdecodeworker-wkr-c2v6b Running [pod 1/1] [1/1]",
		"Pod dynamo-inference/llama3-70b-disagg-0-vllmprefillworker-f9d3s Running [pod 1/1] [1/1]",
		"Pod dynamo-inference/llama3-70b-disagg-0-vllmprefillworker-r5t1w Running [pod 1/1] [1/1]",
		"DaemonSet gpu-monitoring/dcgm-exporter Running [pod 4/4] [4/1]",
		"Pod gpu-monitoring/gpu-burn Running [pod 1/1] [1/1]",
		"Pod gpu-validation/nccl-tests-gpu-h100-05 Running [pod 1/1] [1/1]",
		"Pod gpu-validation/nccl-tests-gpu-h100-06 Running [pod 1/1] [1/1]",
		"Pod gpu-validation-staging/nccl-tests-gpu-h100-05 Running [pod 1/1] [1/1]",
		"Deployment inference/vllm-llama3-8b Running [pod 3/3] [1/1,1/1,1/1]",
		"LeaderWorkerSet inference/vllm-llama3-405b Running [leader 2/2 worker 6/6] [4/4,4/4]",
		"Pod inference/curl-debug Running [pod 1/1] [1/1]",
		"Pod inference/sglang-loadgen Initializing [pod 1/1] [1/1]",
		"PodCliqueSet inference/sglang-disagg Running [clique/router 2/2 clique/decode 2/2 clique/pleader 2/2 clique/pworker 2/2] [6/5,2/2]",
		"RayService inference/llama-serve Running [head 1/1 worker/gpu-group 2/2] [3/2]",
		"Notebook kubeflow-user-alice/alice-pytorch Running [server 1/1] [1/1]",
		"LLMInferenceService llm/llama-3-3-70b Running [main 2/2 prefill 2/2 scheduler 1/1] [2/1,1/1,2/1]",
		"Pod llm-d/pvc-init-deepseek Completed [pod 1/1] [1/1]",
		"TrainJob llm-team/llama32-3b-alpaca Running [dataset-initializer 1/1 model-initializer 1/1 node 1/1] [3/3]",
		"Service media/thumbnailer Running [revision 3/3] [3/2]",
		"Job ml-batch/bert-pretrain Running [task/master 1/1 task/worker 4/4] [5/4]",
		"Job ml-eval/llm-eval-harness Running [pod 4/4] [4/1]",
		"Workflow ml-pipelines/fraud-model-9hq2w Running [step/preprocess 0/? step/train 1/? step/evaluate 0/? step/publish 0/?] [1/1]",
		"CronJob ml-platform/model-eval-nightly Running [pod 2/2] [2/1]",
		"JobSet ml-research/llama3-pretrain Running [replicatedjob/driver 1/1 replicatedjob/workers 8/8] [9/9]",
		"RayCluster ml-research/llm-train Running [head 1/1 worker/cpu-workers 2/2 worker/tpu-v6e-2x4 2/2] [5/4]",
		"RayJob ml-training/resnet-train Running [head 1/1 worker/gpu-workers 4/4 submitter 1/1] [5/5]",
		"AppWrapper mlbatch-team-a/granite-ft Running [podset/granite-ft-data 1/1 podset/granite-ft/master 1/1 podset/granite-ft/worker 3/3] [5/5]",
		"NIMCache nim-service/nemotron-super-49b Running [nimcache 1/1] [1/1]",
		"NIMService nim-service/meta-llama3-8b-instruct Running [nimservice 2/1] [2/2]",
		"PyTorchJob nlp/mistral-7b-sft Running [master 1/1 worker 3/3] [4/4]",
		"PaddleJob nlp-cn/ernie-finetune Running [worker 4/4] [4/4]",
		"TFJob recsys/wide-deep-ctr Running [chief 1/1 ps 2/2 worker 4/4 evaluator 1/1] [8/7]",
		"JAXJob research/llama2-7b-maxtext Running [worker 4/4] [4/4]",
		"Pod research/maxtext-dev Running [pod 1/1] [1/1]",
		"MPIJob research-apac/imdb-horovod Running [launcher 1/1 worker 2/2] [3/3]",
		"XGBoostJob risk/fraud-gbdt Running [master 1/1 worker 3/3] [4/4]",
		"StatefulSet search/qdrant Running [pod 3/3] [3/1]",
		"FlinkDeployment streaming/fraud-scoring Running [jobmanager 1/1 taskmanager 4/4] [5/1]",
		"Milvus vector-db/milvus-prod Running [proxy 2/2 mixcoord 1/1 querynode 2/? datanode 1/1 indexnode 0/0 streamingnode 1/1] [7/7]",
		"InferenceService vision-serving/mnist-classifier Running [predictor 2/2 transformer 1/1] [3/3]",
		"Pod vision-serving/mnist-loadtest Initializing [pod 1/1] [1/1]",
	}, got)
	for _, w := range ws {
		assert.NotEmpty(t, w.Karta, w.Name)
		assert.Empty(t, w.Error, w.Name)
	}
}

// TopLevel folds what a listed workload owns into its row, and only when
// every kind is listed: the kind named, each of its objects is a row.
func TestListTopLevelFoldsOwned(t *testing.T) {
	c, _ := fakeCluster(t, examples(t, "deployment", "cronjob", "replicaset")...)
	rows := func(ws []cluster.Workload) []string {
		var got []string
		for _, w := range ws {
			got = append(got, row(w))
		}
		return got
	}
	assert.Equal(t, []string{
		"Deployment inference/vllm-llama3-8b Running [pod 3/3] [1/1,1/1,1/1]",
		"Pod inference/curl-debug Running [pod 1/1] [1/1]",
		"CronJob ml-platform/model-eval-nightly Running [pod 2/2] [2/1]",
	}, rows(list(t, c, "", cluster.ListOptions{TopLevel: true})),
		"the Deployment's ReplicaSet and pods, the CronJob's Jobs and their pods fold into their rows; "+
			"the ReplicaSet of a Deployment the fixtures lack, and its pods, are not listed either")

	assert.Equal(t, []string{
		"ReplicaSet inference/vllm-llama3-8b-6b8f9c7d54 Running [] []",
		"ReplicaSet serving/triton-resnet50-7c9d5b8f64 Running [pod 2/2] [2/1]",
	}, rows(list(t, c, "replicasets", cluster.ListOptions{TopLevel: true})),
		"a KIND named lists all of its objects (get sets TopLevel only without KIND; one kind owns none of its own)")

	jobs := rows(list(t, c, "jobs", cluster.ListOptions{Namespace: "ml-platform"}))
	assert.Equal(t, []string{
		"Job ml-platform/model-eval-nightly-29279640 Completed [] []",
		"Job ml-platform/model-eval-nightly-29281080 Running [] []",
	}, jobs, "the CronJob's Jobs of its running state (examples/cronjob/refs): the last run done, the next one running")

	pods := list(t, c, "pods", cluster.ListOptions{Namespace: "inference"})
	assert.Len(t, pods, 5, "every pod of the namespace, the Deployment's evicted one included")
}

// A pod counts for the workload that owns it: two PyTorchJobs in one
// namespace, whose pods all carry the operator's labels, each count their
// own; a pod with the same labels that nothing owns counts for neither.
func TestListCountsOwnedPodsOnly(t *testing.T) {
	objs := examples(t, "pytorchjob")
	first := find(t, objs, "PyTorchJob", "mistral-7b-sft")
	second := first.DeepCopy()
	second.SetName("mistral-7b-sft-b")
	second.SetUID("b0000000-0000-4000-8000-00000000000b")
	worker := find(t, objs, "Pod", "mistral-7b-sft-worker-0").DeepCopy()
	worker.SetName("mistral-7b-sft-b-worker-0")
	worker.SetUID("b0000000-0000-4000-8000-0000000000a1")
	labels := worker.GetLabels()
	labels["training.kubeflow.org/job-name"] = "mistral-7b-sft-b"
	worker.SetLabels(labels)
	worker.SetOwnerReferences([]metav1.OwnerReference{clustertest.OwnerRef(second)})
	stray := worker.DeepCopy()
	stray.SetName("hand-made-worker")
	stray.SetUID("b0000000-0000-4000-8000-0000000000a2")
	stray.SetOwnerReferences(nil)
	c, _ := fakeCluster(t, append(objs, second, worker, stray)...)

	ws := list(t, c, "pytorchjobs", cluster.ListOptions{Namespace: "nlp"})
	require.Len(t, ws, 2)
	assert.Equal(t, "PyTorchJob nlp/mistral-7b-sft Running [master 1/1 worker 3/3] [4/4]", row(ws[0]))
	assert.Equal(t, "PyTorchJob nlp/mistral-7b-sft-b Running [master 0/1 worker 1/3] [1/4]", row(ws[1]))
}

// Owners between a workload and its pods are read to follow the chain. An
// owner that is gone, or replaced by another object of the same name, ends
// it; one that cannot be read is reported, once, and ends it too.
func TestListOwnerChains(t *testing.T) {
	objs := examples(t, "jobset")
	driverJob := find(t, objs, "Job", "llama3-pretrain-driver-0")
	workersJob := find(t, objs, "Job", "llama3-pretrain-workers-1")
	cases := []struct {
		name string
		// change returns the objects of the cluster.
		change  func([]*unstructured.Unstructured) []*unstructured.Unstructured
		forbid  string // a Job whose read is forbidden
		want    string
		warning string
	}{{
		name:   "every owner there",
		change: func(o []*unstructured.Unstructured) []*unstructured.Unstructured { return o },
		want:   "JobSet ml-research/llama3-pretrain Running [replicatedjob/driver 1/1 replicatedjob/workers 8/8] [9/9]",
	}, {
		name:   "the driver's Job is gone",
		change: func(o []*unstructured.Unstructured) []*unstructured.Unstructured { return without(o, driverJob) },
		want:   "JobSet ml-research/llama3-pretrain Running [replicatedjob/driver 0/1 replicatedjob/workers 8/8] [8/9]",
	}, {
		name: "a Job of that name is another one",
		change: func(o []*unstructured.Unstructured) []*unstructured.Unstructured {
			other := workersJob.DeepCopy()
			other.SetUID(types.UID("c0000000-0000-4000-8000-000000000001"))
			return append(without(o, workersJob), other)
		},
		want: "JobSet ml-research/llama3-pretrain Running [replicatedjob/driver 1/1 replicatedjob/workers 4/8] [5/9]",
	}, {
		name:    "a Job cannot be read",
		change:  func(o []*unstructured.Unstructured) []*unstructured.Unstructured { return o },
		forbid:  "llama3-pretrain-driver-0",
		want:    "JobSet ml-research/llama3-pretrain Running [replicatedjob/driver 0/1 replicatedjob/workers 8/8] [8/9]",
		warning: `cannot read Job ml-research/llama3-pretrain-driver-0, an owner of pods: jobs.batch "llama3-pretrain-driver-0" is forbidden: User "karta-reader" cannot get resource "jobs"; its pods are not counted`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, dyn := fakeCluster(t, tc.change(objs)...)
			if tc.forbid != "" {
				dyn.PrependReactor("get", "jobs", func(a clienttesting.Action) (bool, runtime.Object, error) {
					if a.(clienttesting.GetAction).GetName() != tc.forbid {
						return false, nil, nil
					}
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, tc.forbid,
						fmt.Errorf(`User "karta-reader" cannot get resource "jobs"`))
				})
			}
			var warnings []string
			ws := list(t, c, "jobset", cluster.ListOptions{Namespace: "ml-research", Warn: func(l string) { warnings = append(warnings, l) }})
			require.Len(t, ws, 1)
			assert.Equal(t, tc.want, row(ws[0]))
			if tc.warning == "" {
				assert.Empty(t, warnings)
			} else {
				assert.Equal(t, []string{tc.warning}, warnings, "reported once, however many pods it owns")
			}
		})
	}
}

// A named workload is read, not listed; a missing one is a NotFoundError.
func TestListByName(t *testing.T) {
	c, dyn := fakeCluster(t, examples(t, "pytorchjob")...)
	ws := list(t, c, "pytorchjob", cluster.ListOptions{Namespace: "nlp", Name: "mistral-7b-sft"})
	require.Len(t, ws, 1)
	assert.Equal(t, "mistral-7b-sft", ws[0].Name)
	for _, a := range dyn.Actions() {
		if a.GetResource().Resource == "pytorchjobs" {
			assert.Equal(t, "get", a.GetVerb())
		}
	}

	reg, err := c.Registry(context.Background(), cluster.RegistryOptions{Base: builtins(t)})
	require.NoError(t, err)
	kinds, err := c.Kinds(reg, "pytorchjob")
	require.NoError(t, err)
	_, err = c.List(context.Background(), kinds, cluster.ListOptions{Namespace: "nlp", Name: "nope"})
	var nf *cluster.NotFoundError
	require.ErrorAs(t, err, &nf)
	assert.EqualError(t, err, `pytorchjobs.kubeflow.org "nope" not found in namespace "nlp"`)
}

// The pods of a namespace are listed once, however many workloads it has;
// when Pods are one of the kinds listed, their list serves for every
// namespace.
func TestListReadsPodsOncePerNamespace(t *testing.T) {
	podLists := func(dyn *dynamicfake.FakeDynamicClient) map[string]int {
		got := map[string]int{}
		for _, a := range dyn.Actions() {
			if a.GetVerb() == "list" && a.GetResource().Resource == "pods" {
				got[a.GetNamespace()]++
			}
		}
		return got
	}
	fixtures := examples(t, "jobset", "raycluster", "pytorchjob")

	c, dyn := fakeCluster(t, fixtures...)
	reg := builtins(t)
	var kinds []*cluster.Kind
	for _, kind := range []string{"jobsets", "rayclusters", "pytorchjobs"} {
		k, err := c.Kinds(reg, kind)
		require.NoError(t, err)
		kinds = append(kinds, k...)
	}
	ws, err := c.List(context.Background(), kinds, cluster.ListOptions{})
	require.NoError(t, err)
	require.Len(t, ws, 3)
	assert.Equal(t, map[string]int{"ml-research": 1, "nlp": 1}, podLists(dyn))

	c, dyn = fakeCluster(t, fixtures...)
	ws = list(t, c, "", cluster.ListOptions{TopLevel: true})
	assert.Len(t, ws, 3, "the fixtures' other pods belong to StatefulSets and ReplicaSets: not listed on their own")
	assert.Equal(t, map[string]int{"": 1}, podLists(dyn))
}

// A hook that fails makes its row an Error, with the reason, and the other
// rows are unaffected.
func TestListHookError(t *testing.T) {
	objs := examples(t, "pytorchjob")
	bad := clustertest.Read(t, "../cmd/karta/testdata/in/pytorchjob-bad-replicas.yaml")
	c, _ := fakeCluster(t, append(objs, bad...)...)
	ws := list(t, c, "", cluster.ListOptions{TopLevel: true})
	require.Len(t, ws, 2)
	assert.Equal(t, "PyTorchJob nlp/mistral-7b-sft Running [master 1/1 worker 3/3] [4/4]", row(ws[0]))
	assert.Equal(t, cluster.StatusError, ws[1].Status)
	assert.Contains(t, ws[1].Error, "GetPodSpecs")
	assert.NotNil(t, ws[1].Components, "lists are [] in JSON, never null")
	assert.NotNil(t, ws[1].Groups)
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s in the fixtures", kind, name)
	return nil
}

func without(objs []*unstructured.Unstructured, drop *unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o != drop {
			out = append(out, o)
		}
	}
	return out
}
