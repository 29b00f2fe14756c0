package exporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

const (
	gib = 1 << 30
	// The workload labels of the examples' workloads, as labelString
	// writes them (their other labels are added around).
	pytorch = "group=kubeflow.org,kind=PyTorchJob,namespace=nlp"
	jobset  = "group=jobset.x-k8s.io,kind=JobSet,namespace=ml-research"
)

// pytorchJob creates examples/pytorchjob's running PyTorchJob (FILE) and
// the pods it owns.
func (e *env) pytorchJob(file string) *unstructured.Unstructured {
	e.t.Helper()
	job := example(e.t, "pytorchjob", file)[0]
	e.create(job)
	for _, p := range example(e.t, "pytorchjob", "pods.yaml") {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == job.GetUID() {
			e.create(p)
		}
	}
	return job
}

// jobSet creates examples/jobset's running JobSet, its three Jobs (a
// described kind: components, not workloads) and their pods.
func (e *env) jobSet() *unstructured.Unstructured {
	e.t.Helper()
	js := example(e.t, "jobset", "running.yaml")[0]
	e.create(js)
	jobs := map[string]string{
		"653fc8de-67a1-4e1c-baf5-699eb51f69e7": "llama3-pretrain-driver-0",
		"a6e76e3c-872f-46d6-8606-e12fb18e463d": "llama3-pretrain-workers-0",
		"0e3b28b5-6d8e-4849-a391-c4f24b461311": "llama3-pretrain-workers-1",
	}
	for uid, name := range jobs {
		e.create(jobOf("ml-research", name, uid, js, 4))
	}
	for _, p := range example(e.t, "jobset", "pods.yaml") {
		if ref := metav1.GetControllerOf(p); ref != nil && jobs[string(ref.UID)] != "" {
			e.create(p)
		}
	}
	return js
}

func TestSeriesOfAWorkload(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.pytorchJob("running.yaml")
	w := pytorch + ",workload=mistral-7b-sft"
	e.waitSeries("karta_pod_owner", map[string]float64{
		"component=master,group=kubeflow.org,instance=,kind=PyTorchJob,namespace=nlp,pod=mistral-7b-sft-master-0,workload=mistral-7b-sft": 1,
		"component=worker,group=kubeflow.org,instance=,kind=PyTorchJob,namespace=nlp,pod=mistral-7b-sft-worker-0,workload=mistral-7b-sft": 1,
		"component=worker,group=kubeflow.org,instance=,kind=PyTorchJob,namespace=nlp,pod=mistral-7b-sft-worker-1,workload=mistral-7b-sft": 1,
		"component=worker,group=kubeflow.org,instance=,kind=PyTorchJob,namespace=nlp,pod=mistral-7b-sft-worker-2,workload=mistral-7b-sft": 1,
	})
	statuses := map[string]float64{}
	for _, st := range Statuses {
		statuses["group=kubeflow.org,kind=PyTorchJob,namespace=nlp,status="+st+",workload=mistral-7b-sft"] = bit(st == "Running")
	}
	for _, c := range []struct {
		series string
		want   map[string]float64
	}{
		{"karta_exporter_info", map[string]float64{"version=1": 1}},
		{"karta_exporter_workloads", map[string]float64{"": 1}},
		{"karta_workload_info", map[string]float64{"group=kubeflow.org,karta=pytorchjob,kind=PyTorchJob,namespace=nlp,version=v1,workload=mistral-7b-sft": 1}},
		{"karta_workload_status", statuses},
		{"karta_workload_status_duration_seconds", map[string]float64{w: 0}},
		{"karta_workload_replicas_desired", map[string]float64{
			"component=master," + w + ",instance=": 1, "component=worker," + w + ",instance=": 3}},
		{"karta_workload_replicas_observed", map[string]float64{
			"component=master," + w + ",instance=": 1, "component=worker," + w + ",instance=": 3}},
		{"karta_workload_replicas_ready", map[string]float64{
			"component=master," + w + ",instance=": 1, "component=worker," + w + ",instance=": 3}},
		// 1 master and 3 workers of 90 cores, 900 GiB and 8 GPUs each.
		{"karta_workload_resource_requests", map[string]float64{
			w + ",resource=cpu,unit=core":               360,
			w + ",resource=memory,unit=byte":            4 * 900 * gib,
			w + ",resource=nvidia_com_gpu,unit=integer": 32,
		}},
		{"karta_workload_component_resource_requests", map[string]float64{
			"component=master," + w + ",resource=cpu,unit=core":               90,
			"component=master," + w + ",resource=memory,unit=byte":            900 * gib,
			"component=master," + w + ",resource=nvidia_com_gpu,unit=integer": 8,
			"component=worker," + w + ",resource=cpu,unit=core":               270,
			"component=worker," + w + ",resource=memory,unit=byte":            3 * 900 * gib,
			"component=worker," + w + ",resource=nvidia_com_gpu,unit=integer": 24,
		}},
		{"karta_workload_gang_min_member", map[string]float64{"gang=pg-9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04-job," + w: 4}},
		{"karta_workload_gang_pods_present", map[string]float64{"gang=pg-9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04-job," + w: 4}},
		{"karta_workload_gang_pods_ready", map[string]float64{"gang=pg-9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04-job," + w: 4}},
		{"karta_workload_gang_complete", map[string]float64{"gang=pg-9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04-job," + w: 1}},
		{"karta_exporter_evaluation_errors_total", map[string]float64{}},
	} {
		t.Run(c.series, func(t *testing.T) {
			require.Equal(t, norm(c.want), e.series(c.series))
		})
	}
	require.NotEmpty(t, e.series("karta_exporter_evaluation_duration_seconds"), "evaluation time histogram")
	// Every kind the built-ins describe is served by the fake cluster and
	// watched whole; the default owner kinds are described kinds too.
	described := map[string]bool{}
	for _, entry := range e.reg.Entries() {
		described[entry.GVK.GroupKind().String()] = true
	}
	require.Equal(t, map[string]float64{"role=described": float64(len(described)), "role=owner": 0}, e.series("karta_exporter_watched_kinds"))
	require.Equal(t, map[string]float64{"": 1}, e.series("karta_exporter_synced"))
	e.waitSeries("karta_exporter_queue_depth", map[string]float64{"": 0})
}

func TestNestedKindIsAComponentOfTheTopmost(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.jobSet()
	// A Job no JobSet owns is a workload of its own.
	e.create(jobOf("batch", "standalone", "5e000000-0000-4000-8000-000000000001", nil, 2))
	e.waitSeriesWhere("karta_workload_info", "", map[string]float64{
		"group=jobset.x-k8s.io,karta=jobset,kind=JobSet,namespace=ml-research,version=v1alpha2,workload=llama3-pretrain": 1,
		"group=batch,karta=job,kind=Job,namespace=batch,version=v1,workload=standalone":                                  1,
	})
	w := jobset + ",workload=llama3-pretrain"
	// Every pod of the three Jobs counts once, for the JobSet.
	e.waitSeriesWhere("karta_workload_replicas_observed", "kind=JobSet", map[string]float64{
		"component=replicatedjob," + w + ",instance=driver":  1,
		"component=replicatedjob," + w + ",instance=workers": 8,
	})
	owners := e.series("karta_pod_owner")
	require.Len(t, owners, 9)
	for k := range owners {
		require.Contains(t, k, "kind=JobSet", k)
	}
	// 1 driver of 4 cores; 2 × 4 workers of 200 cores and 8 GPUs; the
	// standalone Job's 2 pods of a core.
	require.Equal(t, norm(map[string]float64{
		"group=batch,kind=Job,namespace=batch,resource=cpu,unit=core,workload=standalone": 2,
		w + ",resource=cpu,unit=core":               1604,
		w + ",resource=memory,unit=byte":            16*gib + 8*1600*gib,
		w + ",resource=nvidia_com_gpu,unit=integer": 64,
	}), e.series("karta_workload_resource_requests"))
	e.waitSeriesWhere("karta_workload_gang_pods_present", "kind=JobSet", map[string]float64{
		"gang=pg-3d8f2b61-7c4e-4a19-b5d2-9e0a6c1f48b7-jobset," + w: 9,
	})
	require.Equal(t, norm(map[string]float64{"gang=pg-3d8f2b61-7c4e-4a19-b5d2-9e0a6c1f48b7-jobset," + w: 1}),
		filter(e.series("karta_workload_gang_complete"), "kind=JobSet"))
}

func TestSeriesFollowChanges(t *testing.T) {
	e := newEnv(t)
	e.start()
	job := e.pytorchJob("running.yaml")
	w := pytorch + ",workload=mistral-7b-sft"
	e.waitSeriesWhere("karta_workload_status", "status=Running", map[string]float64{w + ",status=Running": 1})

	// Time passes in the same status.
	e.setNow(e.clock().Add(90 * time.Second))
	require.Equal(t, norm(map[string]float64{w: 90}), e.series("karta_workload_status_duration_seconds"))

	// The job completes: the one-hot moves, the time restarts.
	done := example(t, "pytorchjob", "completed.yaml")[0]
	done.SetResourceVersion("")
	e.update(done)
	e.waitSeriesWhere("karta_workload_status", "status=Completed", map[string]float64{w + ",status=Completed": 1})
	require.Equal(t, norm(map[string]float64{w + ",status=Running": 0}), filter(e.series("karta_workload_status"), "status=Running"))
	require.Equal(t, norm(map[string]float64{w: 0}), e.series("karta_workload_status_duration_seconds"))

	// A pod goes: it is no longer attributed, the count follows.
	e.remove(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": "nlp", "name": "mistral-7b-sft-worker-2"}}})
	e.waitSeriesWhere("karta_workload_replicas_observed", "component=worker", map[string]float64{"component=worker," + w + ",instance=": 2})
	require.Len(t, e.series("karta_pod_owner"), 3)

	// The workload goes: its series go, its pods become their own (a pod
	// whose controller the caches do not hold is a workload of its own).
	e.remove(job)
	e.waitSeriesWhere("karta_workload_info", "kind=PyTorchJob", map[string]float64{})
	e.waitSeriesWhere("karta_pod_owner", "kind=PyTorchJob", map[string]float64{})
}

// brokenKarta describes example.com/v1 Broken, whose status expression
// fails on every object (a hook error).
func brokenKarta(t testing.TB) *interpreter.Program {
	t.Helper()
	ks, err := karta.Load([]byte(`apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: broken}
spec:
  structureDefinition:
    rootComponent:
      name: broken
      kind: {group: example.com, version: v1, kind: Broken}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: ".metadata.name | tonumber > 0", expectedResult: "true"}}]
`), "broken.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	return p
}

func TestHookErrorsAreCountedPerKind(t *testing.T) {
	e := newEnv(t, brokenKarta(t))
	e.start()
	e.create(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Broken",
		"metadata": map[string]any{"name": "not-a-number", "namespace": "ml", "uid": "b0000000-0000-4000-8000-000000000001"}}})
	e.waitSeries("karta_exporter_evaluation_errors_total", map[string]float64{"kind=Broken.example.com": 1})
	require.Equal(t, norm(map[string]float64{"group=example.com,kind=Broken,namespace=ml,status=Error,workload=not-a-number": 1}),
		filter(e.series("karta_workload_status"), "status=Error"))
}
