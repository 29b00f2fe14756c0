//go:build integration

package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
	"github.com/kartalua/karta/internal/exampledir"
	"github.com/kartalua/karta/internal/testenv"
)

// hangPoll is how often a wait for the cluster looks again.
const hangPoll = 200 * time.Millisecond

// live connects to the test cluster with its CRDs installed.
func live(t *testing.T) (*rest.Config, *cluster.Client, dynamic.Interface) {
	t.Helper()
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	c, err := cluster.NewClient(cfg)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	return cfg, c, dyn
}

// liveList lists a namespace as karta get -n [KIND] does: without KIND,
// what a listed workload owns is part of its row.
func liveList(t *testing.T, c *cluster.Client, kind, ns string) []cluster.Workload {
	t.Helper()
	reg, err := c.Registry(t.Context(), cluster.RegistryOptions{Base: builtins(t), Warn: func(l string) { t.Log("warning: " + l) }})
	require.NoError(t, err)
	kinds, err := c.Kinds(reg, kind)
	require.NoError(t, err)
	ws, err := c.List(t.Context(), kinds, cluster.ListOptions{Namespace: ns, TopLevel: kind == "", Warn: func(l string) { t.Error(l) }})
	require.NoError(t, err)
	return ws
}

// liveListNamed lists the objects of one named kind (or Karta) in a
// namespace, as karta get KIND -n does.
func liveListNamed(t *testing.T, c *cluster.Client, kind, ns string) []cluster.Workload {
	t.Helper()
	require.NotEmpty(t, kind)
	return liveList(t, c, kind, ns)
}

// Every built-in kind, created as a user would, with its pods on kwok's
// fake nodes: get shows each with its status, its pods per component and
// its gangs. The operators' kinds are driven to Running through the status
// subresource as their operators would, with their pods labelled and owned
// as the operators make them. The API server's own kinds (Deployment,
// ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, Pod) are run by the
// real controllers: their ReplicaSets, Jobs and pods, and what kwok makes
// of the pods (Running and Ready; a Job's pods complete). The CronJob runs
// once, every minute's schedule, and is suspended after. All share one
// namespace, so the pods of one workload must not count for another of a
// kind that places them (PyTorchJob and MPIJob v1, RayCluster and RayJob),
// and what a workload owns (a Deployment's ReplicaSet, the CronJob's Job,
// every pod) is part of its row, not a row of its own.
func TestLiveGetEveryBuiltinKind(t *testing.T) {
	cfg, c, dyn := live(t)
	ns := testenv.Namespace(t, cfg)
	node := testenv.FakeNode(t, cfg)
	for _, name := range builtinExamples {
		if !clustertest.IsNative(name) {
			clustertest.Deploy(t, dyn, c.Mapper, "..", name, ns, node)
			continue
		}
		obj := clustertest.Submit(clustertest.Read(t, "../examples/"+name+"/running.yaml")[0])
		clustertest.ForFakeNodes(obj)
		if name == "cronjob" {
			// A run now, not at 02:00: every minute, until it has run once.
			require.NoError(t, unstructured.SetNestedField(obj.Object, "* * * * *", "spec", "schedule"))
		}
		clustertest.Create(t, dyn, c.Mapper, obj, ns, false)
	}
	cronJobs := dyn.Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}).Namespace(ns)
	err := wait.PollUntilContextTimeout(t.Context(), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		cj, err := cronJobs.Get(ctx, "model-eval-nightly", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, ran, _ := unstructured.NestedString(cj.Object, "status", "lastSuccessfulTime")
		return ran, nil
	})
	require.NoError(t, err, "the CronJob never completed a run")
	_, err = cronJobs.Patch(t.Context(), "model-eval-nightly", types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{})
	require.NoError(t, err)

	// Both MPIJobs are listed through the version the cluster prefers
	// (v1: GA before beta), so with the mpijob-v1 Karta, whose selector
	// label the mpi-operator's pods of resnet50-horovod do not carry. Both
	// DynamoGraphDeployments likewise through v1beta1: the stand-in CRD
	// converts nothing, so llama3-70b-disagg, written as v1alpha1, has
	// services and no components there. Both LLMInferenceServices read the
	// same through v1alpha2. The Job of the CronJob's run and the pods of
	// both Jobs finished: their pods no longer count.
	// want reads the DaemonSet with the test's context, not the poll's: a
	// read cut short by the poll's deadline would fail the test before the
	// comparison below shows what differs.
	want := func() []string {
		ds, err := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}).Namespace(ns).Get(t.Context(), "dcgm-exporter", metav1.GetOptions{})
		require.NoError(t, err)
		nodes, _, _ := unstructured.NestedInt64(ds.Object, "status", "desiredNumberScheduled")
		return []string{
			"AppWrapper granite-ft Running [podset/granite-ft-data 1/1 podset/granite-ft/master 1/1 podset/granite-ft/worker 3/3] [5/5]",
			"CronJob model-eval-nightly Suspended [pod 0/0] []",
			fmt.Sprintf("DaemonSet dcgm-exporter Running [pod %d/%d] [%d/1]", nodes, nodes, nodes),
			"Deployment vllm-llama3-8b Running [pod 3/3] [1/1,1/1,1/1]",
			"DynamoGraphDeployment llama3-70b-disagg Running [] []",
			"DynamoGraphDeployment qwen3-32b-disagg Running [component/frontend 1/1 component/decode 4/4 component/prefill 2/2] [5/4,2/2]",
			"FlinkDeployment fraud-scoring Running [jobmanager 1/1 taskmanager 4/4] [5/1]",
			"InferenceService mnist-classifier Running [predictor 2/2 transformer 1/1] [3/3]",
			"JAXJob llama2-7b-maxtext Running [worker 4/4] [4/4]",
			"Job bert-pretrain Running [task/master 1/1 task/worker 4/4] [5/4]",
			"Job llm-eval-harness Completed [pod 0/4] []",
			"JobSet llama3-pretrain Running [replicatedjob/driver 1/1 replicatedjob/workers 8/8] [9/9]",
			"LLMInferenceService deepseek-r1-0528 Running [leader 1/1 worker 1/1 scheduler 1/1] [2/2,1/1]",
			"LLMInferenceService llama-3-3-70b Running [main 2/2 prefill 2/2 scheduler 1/1] [2/1,1/1,2/1]",
			"LeaderWorkerSet vllm-llama3-405b Running [leader 2/2 worker 6/6] [4/4,4/4]",
			"MPIJob imdb-horovod Running [launcher 1/1 worker 2/2] [3/3]",
			"MPIJob resnet50-horovod Running [launcher 0/1 worker 0/4] []",
			"Milvus milvus-prod Running [proxy 2/2 mixcoord 1/1 querynode 2/? datanode 1/1 indexnode 0/0 streamingnode 1/1] [7/7]",
			"NIMCache nemotron-super-49b Running [nimcache 1/1] [1/1]",
			"NIMService meta-llama3-8b-instruct Running [nimservice 2/1] [2/2]",
			"Notebook alice-pytorch Running [server 1/1] [1/1]",
			"PaddleJob ernie-finetune Running [worker 4/4] [4/4]",
			"Pod nccl-tests-gpu-h100-05 Running [pod 1/1] [1/1]",
			"PodCliqueSet sglang-disagg Running [clique/router 2/2 clique/decode 2/2 clique/pleader 2/2 clique/pworker 2/2] [6/5,2/2]",
			"PyTorchJob mistral-7b-sft Running [master 1/1 worker 3/3] [4/4]",
			"RayCluster llm-train Running [head 1/1 worker/cpu-workers 2/2 worker/tpu-v6e-2x4 2/2] [5/4]",
			"RayJob resnet-train Running [head 1/1 worker/gpu-workers 4/4 submitter 1/1] [5/5]",
			"RayService llama-serve Running [head 1/1 worker/gpu-group 2/2] [3/2]",
			"ReplicaSet triton-resnet50-7c9d5b8f64 Running [pod 2/2] [2/1]",
			"Sandbox swe-agent-4821 Running [sandbox 1/1] [1/1]",
			"Service thumbnailer Running [revision 3/3] [3/2]",
			"SparkApplication clickstream-etl Running [driver 1/1 executor 4/4] [5/1]",
			"StatefulSet qdrant Running [pod 3/3] [3/1]",
			"TFJob wide-deep-ctr Running [chief 1/1 ps 2/2 worker 4/4 evaluator 1/1] [8/7]",
			"TrainJob llama32-3b-alpaca Running [dataset-initializer 1/1 model-initializer 1/1 node 1/1] [3/3]",
			"Workflow fraud-model-9hq2w Running [step/preprocess 0/? step/train 1/? step/evaluate 0/? step/publish 0/?] [1/1]",
			"XGBoostJob fraud-gbdt Running [master 1/1 worker 3/3] [4/4]",
		}
	}
	rows := func() []string {
		var got []string
		for _, w := range liveList(t, c, "", ns) {
			got = append(got, strings.Replace(row(w), ns+"/", "", 1))
		}
		return got
	}
	// The controllers and kwok settle in their own time.
	_ = wait.PollUntilContextTimeout(t.Context(), 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		return reflect.DeepEqual(want(), rows()), nil
	})
	if !assert.Equal(t, want(), rows()) {
		clustertest.LogPods(t, dyn, ns)
	}

	// Naming the Karta picks its version.
	ws := liveListNamed(t, c, "mpijob", ns)
	require.Len(t, ws, 2)
	assert.Equal(t, "MPIJob resnet50-horovod Running [launcher 1/1 worker 4/4] [5/5]", strings.Replace(row(ws[1]), ns+"/", "", 1))

	// Named, a kind lists what other workloads own too: the CronJob's Job.
	ws = liveListNamed(t, c, "jobs", ns)
	var jobs []string
	for _, w := range ws {
		jobs = append(jobs, w.Name)
	}
	assert.Contains(t, jobs, "llm-eval-harness")
	assert.Len(t, jobs, 2, "the Job of the example and the one run of the CronJob: %v", jobs)
}

// Every state of the examples of the API server's own kinds is an object
// the API server accepts as a user would submit it (a dry run: validated
// and admitted, not stored).
func TestLiveNativeExamplesAreValid(t *testing.T) {
	cfg, c, dyn := live(t)
	ns := testenv.Namespace(t, cfg)
	checked := 0
	for _, name := range clustertest.NativeExamples {
		files, err := filepath.Glob(filepath.Join("..", "examples", name, "*.yaml"))
		require.NoError(t, err)
		for _, file := range files {
			base := filepath.Base(file)
			if !exampledir.IsState(base) {
				continue // pods (which name service accounts and claims the namespace lacks), revisions, the karta test
			}
			for _, obj := range clustertest.Read(t, file) {
				t.Run(name+"/"+base, func(t *testing.T) {
					clustertest.Create(t, dyn, c.Mapper, clustertest.Submit(obj), ns, true)
				})
				checked++
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 30)
}

// A Karta stored in the cluster makes a kind get knows: here a made-up
// TrainJob (examples/kartas/trainjob.yaml), in a group of this test's own
// so that no other test's Karta competes for it.
func TestLiveClusterKarta(t *testing.T) {
	cfg, c, dyn := live(t)
	ns := testenv.Namespace(t, cfg)
	node := testenv.FakeNode(t, cfg)
	group := "clustertest.karta.example.com"
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "TrainJob"}
	installTrainJobCRD(t, cfg, group)

	k := clustertest.Read(t, "../examples/kartas/trainjob.yaml")[0]
	k.SetName("trainjob-" + ns)
	require.NoError(t, unstructured.SetNestedField(k.Object, group, "spec", "structureDefinition", "rootComponent", "kind", "group"))
	created, err := dyn.Resource(schema.GroupVersionResource{Group: "run.ai", Version: "v1alpha1", Resource: "kartas"}).Create(t.Context(), k, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = dyn.Resource(schema.GroupVersionResource{Group: "run.ai", Version: "v1alpha1", Resource: "kartas"}).Delete(context.Background(), created.GetName(), metav1.DeleteOptions{})
	})

	job := clustertest.Read(t, "../examples/tutorial-trainjob/running.yaml")[0]
	job.SetAPIVersion(gvk.GroupVersion().String())
	c.Mapper.Reset() // the CRD is new: discover again
	obj := clustertest.CreateWithStatus(t, dyn, c.Mapper, job, ns)
	for _, pod := range clustertest.Read(t, "../examples/tutorial-trainjob/pods.yaml") {
		clustertest.CreatePod(t, dyn, pod, obj, ns, node)
	}

	ws := liveList(t, c, "trainjob-"+ns, ns)
	require.Len(t, ws, 1)
	assert.Equal(t, "TrainJob llm-finetune Running [launcher 1/1 worker 4/4] [5/4]", strings.Replace(row(ws[0]), ns+"/", "", 1))
	assert.Equal(t, "trainjob-"+ns, ws[0].Karta)
}

// installTrainJobCRD installs a CRD for the made-up TrainJob in group.
func installTrainJobCRD(t *testing.T, cfg *rest.Config, group string) {
	t.Helper()
	cs, err := apiextensionsclient.NewForConfig(cfg)
	require.NoError(t, err)
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "trainjobs." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "TrainJob", ListKind: "TrainJobList", Plural: "trainjobs", Singular: "trainjob"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", XPreserveUnknownFields: &preserve},
						"status": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
			}},
		},
	}
	_, err = cs.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), crd, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), hangPoll, hangGuard, true, func(ctx context.Context) (bool, error) {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	require.NoError(t, err, "CRD %s never established", crd.Name)
}

// revise --live on a real API server: the patch is applied; with DryRun the
// server answers with the result and stores nothing; and a concurrent
// writer between our read and our patch makes the guarded patch fail once,
// after which the revision is recomputed and both changes are stored.
func TestLiveRevise(t *testing.T) {
	cfg, c, dyn := live(t)
	ns := testenv.Namespace(t, cfg)
	obj, _ := clustertest.Deploy(t, dyn, c.Mapper, "..", "pytorchjob", ns, testenv.FakeNode(t, cfg))
	kinds, err := c.Kinds(builtins(t), "pytorchjob")
	require.NoError(t, err)
	kind := kinds[0]
	jobs := dyn.Resource(kind.Mapping.Resource).Namespace(ns)
	schedulerOf := func(u *unstructured.Unstructured) string {
		s, _, _ := unstructured.NestedString(u.Object, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "schedulerName")
		return s
	}
	stored := func() *unstructured.Unstructured {
		u, err := jobs.Get(t.Context(), obj.GetName(), metav1.GetOptions{})
		require.NoError(t, err)
		return u
	}

	t.Run("dry run", func(t *testing.T) {
		before := stored()
		out, err := c.Revise(t.Context(), kind, kind.Program, ns, obj.GetName(), kaiRevisions(t), cluster.ReviseOptions{DryRun: true})
		require.NoError(t, err)
		assert.Equal(t, "kai-scheduler", schedulerOf(out.Object), "the server computed the change")
		after := stored()
		assert.Equal(t, before.GetResourceVersion(), after.GetResourceVersion(), "and stored nothing")
		assert.Equal(t, "", schedulerOf(after))
	})

	t.Run("concurrent writer", func(t *testing.T) {
		writer := func(ctx context.Context, attempt int) error {
			if attempt > 1 {
				return nil
			}
			// Another client labels the job between our read and our patch.
			_, err := jobs.Patch(ctx, obj.GetName(), types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"nlp-research"}}}`), metav1.PatchOptions{})
			return err
		}
		out, err := c.Revise(t.Context(), kind, kind.Program, ns, obj.GetName(), kaiRevisions(t), cluster.ReviseOptions{BeforePatch: writer})
		require.NoError(t, err)
		assert.Equal(t, 2, out.Attempts, "the first patch failed its resourceVersion test")
		after := stored()
		assert.Equal(t, "nlp-research", after.GetLabels()["team"], "the concurrent write is kept")
		assert.Equal(t, "kai-scheduler", schedulerOf(after), "the revision is applied")
		assert.Equal(t, out.Object.GetResourceVersion(), after.GetResourceVersion())
	})

	t.Run("nothing to change", func(t *testing.T) {
		before := stored()
		out, err := c.Revise(t.Context(), kind, kind.Program, ns, obj.GetName(), kaiRevisions(t), cluster.ReviseOptions{})
		require.NoError(t, err)
		assert.Empty(t, out.Patch)
		assert.Equal(t, before.GetResourceVersion(), stored().GetResourceVersion())
	})
}

// Watch against a real API server: the initial list, then a row when a
// pod of the workload appears.
func TestLiveWatch(t *testing.T) {
	cfg, c, dyn := live(t)
	ns := testenv.Namespace(t, cfg)
	node := testenv.FakeNode(t, cfg)
	obj, _ := clustertest.Deploy(t, dyn, c.Mapper, "..", "pytorchjob", ns, node)
	// The last worker comes later.
	last := find(t, clustertest.Read(t, "../examples/pytorchjob/pods.yaml"), "Pod", "mistral-7b-sft-worker-2")
	require.NoError(t, dyn.Resource(cluster.PodResource).Namespace(ns).Delete(t.Context(), last.GetName(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}))
	require.NoError(t, wait.PollUntilContextTimeout(t.Context(), hangPoll, hangGuard, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(cluster.PodResource).Namespace(ns).Get(ctx, last.GetName(), metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}))

	reg, err := c.Registry(t.Context(), cluster.RegistryOptions{Base: builtins(t)})
	require.NoError(t, err)
	kinds, err := c.Kinds(reg, "pytorchjob")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	initial := make(chan []cluster.Workload, 1)
	changed := make(chan cluster.Workload, 64)
	done := make(chan error, 1)
	go func() {
		done <- c.Watch(ctx, kinds, cluster.WatchOptions{Namespace: ns},
			func(ws []cluster.Workload) error { initial <- ws; return nil },
			func(w cluster.Workload) error { changed <- w; return nil })
	}()
	first := receive(t, initial)
	require.Len(t, first, 1)
	assert.Equal(t, fmt.Sprintf("PyTorchJob %s/%s Running [master 1/1 worker 2/3] [3/4]", ns, obj.GetName()), row(first[0]))

	clustertest.CreatePod(t, dyn, last, obj, ns, node)
	// kwok then moves the pod to Running: more events, no new row unless
	// the counts change.
	for w := receive(t, changed); ; w = receive(t, changed) {
		if row(w) == fmt.Sprintf("PyTorchJob %s/%s Running [master 1/1 worker 3/3] [4/4]", ns, obj.GetName()) {
			break
		}
	}
	cancel()
	assert.NoError(t, receive(t, done))
}
