package gangoutput

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/podgroups"
)

// The JobSet example's groups, as coscheduling names their PodGroups.
const (
	jobSetNS     = "ml-research"
	driverGroup  = "pg-3d8f2b61-7c4e-4a19-b5d2-9e0a6c1f48b7-replicatedjob-ac154eba"
	workersGroup = "pg-3d8f2b61-7c4e-4a19-b5d2-9e0a6c1f48b7-replicatedjob-6df8fad9"
	// The same groups as the other targets name their objects.
	driverSubdomain  = "pg-3d8f2b61-7c4e-4a19-b5d2-9e0a6c1f48b7-replicatedjob-llama3-pretrain-driver"
	workersSubdomain = "pg-3d8f2b61-7c4e-4a19-b5d2-9e0a6c1f48b7-replicatedjob-llama3-pretrain-workers"
	driverJobUID     = "653fc8de-67a1-4e1c-baf5-699eb51f69e7"
	workers0UID      = "a6e76e3c-872f-46d6-8606-e12fb18e463d"
	workers1UID      = "0e3b28b5-6d8e-4849-a391-c4f24b461311"
	pyTorchJobNS     = "nlp"
	pyTorchGroup     = "pg-9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04-job"
	pyTorchJobUID    = "9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04"
)

// jobSet creates the JobSet example and its Jobs (owners, metadata only).
func (e *env) jobSet() (*unstructured.Unstructured, []*unstructured.Unstructured) {
	js := example(e.t, "jobset", "running.yaml")[0]
	e.create(js)
	for name, uid := range map[string]string{"llama3-pretrain-driver-0": driverJobUID, "llama3-pretrain-workers-0": workers0UID, "llama3-pretrain-workers-1": workers1UID} {
		e.owner(jobGVK, jobSetNS, name, uid, js, jobSetGVK)
	}
	return js, podsOwnedBy(example(e.t, "jobset", "pods.yaml"), driverJobUID, workers0UID, workers1UID)
}

// A JobSet's gangs are formed from its pods: nothing is written before
// them; each replicated job's PodGroup appears with its first pod (the
// chain pod → Job → JobSet resolved from the caches), owned by the
// JobSet, and goes when its pods do.
func TestAlphaGroupsFollowThePods(t *testing.T) {
	e := newEnv(t)
	e.start(podgroups.Coscheduling, Options{})
	js, pods := e.jobSet()
	require.Len(t, pods, 9)
	assert.Never(t, func() bool { return len(e.objects(coschedPGGVK, jobSetNS)) > 0 }, 300*time.Millisecond, tick, "no group without pods")

	e.create(pods[0]) // the driver
	got := e.waitObjects(coschedPGGVK, jobSetNS, driverGroup)
	pg := got[driverGroup]
	assert.Equal(t, []metav1.OwnerReference{*metav1.NewControllerRef(js, jobSetGVK)}, pg.GetOwnerReferences())
	assert.Equal(t, "karta", pg.GetLabels()[podgroups.ManagedByLabel])
	n, _, _ := unstructured.NestedInt64(pg.Object, "spec", "minMember")
	assert.Equal(t, int64(1), n)
	assert.Contains(t, e.waitEvent("Normal "+ReasonWritten), "coscheduling PodGroup/"+driverGroup)

	for _, p := range pods[1:] {
		e.create(p)
	}
	got = e.waitObjects(coschedPGGVK, jobSetNS, driverGroup, workersGroup)
	n, _, _ = unstructured.NestedInt64(got[workersGroup].Object, "spec", "minMember")
	assert.Equal(t, int64(8), n, "2 replicas × parallelism 4")
	assert.Equal(t, map[string]any{"cpu": "1600", "memory": "12800Gi", "nvidia.com/gpu": "64"}, got[workersGroup].Object["spec"].(map[string]any)["minResources"])

	// The driver's pod goes: so does its group.
	e.remove(pods[0])
	e.waitObjects(coschedPGGVK, jobSetNS, workersGroup)
	assert.Contains(t, e.waitEvent("Normal "+ReasonDeleted), "PodGroup/"+driverGroup+" (their groups are gone)")
	assert.Equal(t, 1.0, testutil.ToFloat64(e.ctrl.metrics.writes.WithLabelValues("PodGroup", "delete")))
	assert.Equal(t, 1.0, testutil.ToFloat64(e.ctrl.metrics.workloads.WithLabelValues(stateWritten)))
}

// A workload's objects are applied once: not again for each pod that
// arrives before the cache shows the object, nor on a resync or a pod's
// status change; a field karta owns that someone changed is applied back,
// and an object someone deleted is made again.
func TestNoRewrite(t *testing.T) {
	e := newEnv(t)
	e.start(podgroups.Coscheduling, Options{ResyncPeriod: time.Second})
	_, pods := e.jobSet()
	for _, p := range pods {
		e.create(p)
	}
	e.waitObjects(coschedPGGVK, jobSetNS, driverGroup, workersGroup)
	time.Sleep(1500 * time.Millisecond) // resyncs (the informers' minimum is 1 s)
	status := pods[1].DeepCopy()
	require.NoError(t, unstructured.SetNestedField(status.Object, "Pending", "status", "phase"))
	e.update(status)
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, 1, e.appliesOf("PodGroup", jobSetNS, workersGroup), "applied once")
	assert.Equal(t, 1, e.appliesOf("PodGroup", jobSetNS, driverGroup), "applied once")

	// Someone edits a field karta owns: it is applied back.
	pg := e.objects(coschedPGGVK, jobSetNS)[workersGroup]
	require.NoError(t, unstructured.SetNestedField(pg.Object, int64(3), "spec", "minMember"))
	_, err := e.dyn.Resource(resourceOf(coschedPGGVK)).Namespace(jobSetNS).Update(context.Background(), pg, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return nestedInt64(e.objects(coschedPGGVK, jobSetNS)[workersGroup], "spec", "minMember") == 8
	}, waitFor, tick)

	e.remove(e.objects(coschedPGGVK, jobSetNS)[driverGroup])
	e.waitObjects(coschedPGGVK, jobSetNS, driverGroup, workersGroup)
}

// A v2 group exists without pods, and the Workload API's Workload from the
// Karta and the object alone: both are written as the workload appears,
// before any pod. Scaling the workload updates them.
func TestWrittenBeforePods(t *testing.T) {
	cases := []struct {
		target podgroups.Target
		gvk    schema.GroupVersionKind
	}{
		{podgroups.KAI, kaiPGGVK},
		{podgroups.Volcano, volcanoPGGVK},
		{podgroups.Coscheduling, coschedPGGVK},
		{podgroups.WorkloadAPI, workloadPGGVK},
	}
	const group = "pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang"
	for _, c := range cases {
		t.Run(string(c.target), func(t *testing.T) {
			e := newEnv(t)
			e.start(c.target, Options{})
			tj := example(t, "tutorial-trainjob", "running.yaml")[0]
			e.create(tj)
			pg := e.waitObjects(c.gvk, "ml", group)[group]
			assert.Equal(t, "TrainJob", pg.GetOwnerReferences()[0].Kind)
			minPath := []string{"spec", "minMember"}
			if c.target == podgroups.WorkloadAPI {
				minPath = []string{"spec", "schedulingPolicy", "gang", "minCount"}
				wl := e.waitObjects(workloadGVK, "ml", "llm-finetune")["llm-finetune"]
				assert.Equal(t, "llm-finetune", wl.Object["spec"].(map[string]any)["controllerRef"].(map[string]any)["name"])
			}
			n, _, _ := unstructured.NestedInt64(pg.Object, minPath...)
			assert.Equal(t, int64(4), n, "a launcher and three workers")

			// Scaled up: the object follows.
			scaled := e.objects(trainJobGVK, "ml")["llm-finetune"]
			require.NoError(t, unstructured.SetNestedField(scaled.Object, int64(6), "spec", "workers", "count"))
			require.NoError(t, unstructured.SetNestedField(scaled.Object, int64(5), "spec", "workers", "minCount"))
			e.update(scaled)
			require.Eventually(t, func() bool {
				return nestedInt64(e.objects(c.gvk, "ml")[group], minPath...) == 6
			}, waitFor, tick, "minimum follows the workload's scale")
		})
	}
}

// The Workload API's Workload is written from the Karta and the object
// alone, before the pods of alpha groups; the PodGroups follow the pods.
func TestWorkloadBeforeAlphaPods(t *testing.T) {
	e := newEnv(t)
	e.start(podgroups.WorkloadAPI, Options{})
	js, pods := e.jobSet()
	wl := e.waitObjects(workloadGVK, jobSetNS, js.GetName())[js.GetName()]
	tmpl, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podGroupTemplates")
	assert.Equal(t, []any{map[string]any{"name": "replicatedjob", "schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": int64(1)}}}}, tmpl)
	assert.Empty(t, e.objects(workloadPGGVK, jobSetNS))
	for _, p := range pods {
		e.create(p)
	}
	e.waitObjects(workloadPGGVK, jobSetNS, driverSubdomain, workersSubdomain)
}

// The skip list leaves a kind alone; a Karta's annotation turns it on, a
// workload's turns it off again, and what was written for it is deleted.
func TestSkipListAndSwitches(t *testing.T) {
	e := newEnv(t)
	e.start(podgroups.Volcano, Options{})
	assert.Contains(t, DefaultSkip(podgroups.Volcano), pyTorchJobGVK.GroupKind())
	job := example(t, "pytorchjob", "running.yaml")[0]
	e.create(job)
	for _, p := range podsOwnedBy(example(t, "pytorchjob", "pods.yaml"), pyTorchJobUID) {
		e.create(p)
	}
	assert.Never(t, func() bool { return len(e.objects(volcanoPGGVK, pyTorchJobNS)) > 0 }, 300*time.Millisecond, tick, "skipped")
	require.Eventually(t, func() bool { return testutil.ToFloat64(e.ctrl.metrics.workloads.WithLabelValues(stateSkipped)) == 1 }, waitFor, tick)

	// A Karta of the kind says "true": the operator's gang scheduling is off.
	on := kartaWith(t, e.reg, pyTorchJobGVK, map[string]string{SwitchAnnotation: "true"})
	e.ctrl.KindChanged(pyTorchJobGVK, on)
	pg := e.waitObjects(volcanoPGGVK, pyTorchJobNS, pyTorchGroup)[pyTorchGroup]
	assert.Equal(t, "pytorchjob-on", pg.GetAnnotations()[podgroups.KartaAnnotation])

	// The workload says "false".
	off := e.objects(pyTorchJobGVK, pyTorchJobNS)[job.GetName()]
	off.SetAnnotations(map[string]string{SwitchAnnotation: "false"})
	e.update(off)
	e.waitObjects(volcanoPGGVK, pyTorchJobNS)
	assert.Contains(t, e.waitEvent("Normal "+ReasonDeleted), `left alone: the workload's annotation karta.run.ai/gang-output is "false"`)
}

// kartaWith registers a copy of the registry's Karta for gvk with
// annotations, named NAME-on.
func kartaWith(t *testing.T, reg *interpreter.Registry, gvk schema.GroupVersionKind, ann map[string]string) *interpreter.Program {
	t.Helper()
	p, ok := reg.Get(gvk)
	require.True(t, ok)
	k := p.Karta().DeepCopy()
	k.Name += "-on"
	k.Annotations = ann
	checked, problems := karta.Analyze(k, interpreter.ValidateOptions())
	require.False(t, problems.HasErrors(), "%v", problems)
	np, err := interpreter.CompileChecked(checked, interpreter.Options{})
	require.NoError(t, err)
	reg.Put(np)
	return np
}

// A RayCluster that a RayJob created belongs to the RayJob, whose Karta
// gangs its pods: the RayJob's objects are written, none for the
// RayCluster (the topmost workload decides).
func TestNestedWorkloads(t *testing.T) {
	e := newEnv(t)
	e.start(podgroups.Volcano, Options{})
	rj := example(t, "rayjob", "running.yaml")[0]
	// The RayCluster the RayJob made (examples/rayjob/pods.yaml's owner).
	rc := example(t, "raycluster", "running.yaml")[0]
	rc.SetNamespace(rj.GetNamespace())
	rc.SetName("resnet-train-raycluster-7bq8l")
	rc.SetUID("6f1a3c5e-8b0d-4f2a-a4c6-e8f0a2b4c6d8")
	rc.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(rj, rayJobGVK)})
	e.create(rc) // first: until its owner is seen, it is a workload of its own
	pods := example(t, "rayjob", "pods.yaml")
	for _, p := range pods {
		e.create(p)
	}
	e.create(rj)
	require.Eventually(t, func() bool { return testutil.ToFloat64(e.ctrl.metrics.workloads.WithLabelValues(stateNested)) == 1 }, waitFor, tick)
	var objs map[string]*unstructured.Unstructured
	require.Eventually(t, func() bool {
		objs = e.objects(volcanoPGGVK, rj.GetNamespace())
		return len(objs) > 0
	}, waitFor, tick)
	for _, o := range objs {
		assert.Equal(t, "RayJob", o.GetOwnerReferences()[0].Kind, "%s", o.GetName())
	}
}

// Pods linked by their operator to a PodGroup karta did not write: the
// workload is left alone and karta's objects deleted.
func TestForeignLinks(t *testing.T) {
	e := newEnv(t)
	e.start(podgroups.Volcano, Options{})
	_, pods := e.jobSet()
	driver := pods[0].DeepCopy() // not linked yet
	unstructured.RemoveNestedField(driver.Object, "metadata", "annotations", "scheduling.k8s.io/group-name")
	e.create(driver)
	e.waitObjects(volcanoPGGVK, jobSetNS, driverSubdomain)
	// The JobSet's operator links its workers to its own PodGroup (the
	// example's pods carry scheduling.k8s.io/group-name).
	theirs := &unstructured.Unstructured{Object: map[string]any{"apiVersion": volcanoPGGVK.GroupVersion().String(), "kind": "PodGroup",
		"metadata": map[string]any{"name": "llama3-pretrain-workers", "namespace": jobSetNS}, "spec": map[string]any{"minMember": int64(8)}}}
	e.create(theirs)
	for _, p := range pods[1:] {
		e.create(p)
	}
	e.waitObjects(volcanoPGGVK, jobSetNS, "llama3-pretrain-workers")
	assert.Contains(t, e.waitEvent("Normal "+ReasonLeftAlone), "which karta did not write")
	require.Eventually(t, func() bool { return testutil.ToFloat64(e.ctrl.metrics.workloads.WithLabelValues(stateForeign)) == 1 }, waitFor, tick)
}

// A standby writes nothing; leading, it writes what it missed.
func TestStandby(t *testing.T) {
	e := newEnv(t)
	c := e.start(podgroups.KAI, Options{Standby: true})
	e.create(example(t, "tutorial-trainjob", "running.yaml")[0])
	assert.Never(t, func() bool { return len(e.objects(kaiPGGVK, "ml")) > 0 }, 300*time.Millisecond, tick)
	c.SetLeading(true)
	e.waitObjects(kaiPGGVK, "ml", "pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang")
	assert.True(t, c.Leading())
}

// A refused write is an event on the workload and an error metric, and is
// retried; a field that cannot change makes the object anew.
func TestWriteFailures(t *testing.T) {
	e := newEnv(t)
	e.start(podgroups.KAI, Options{})
	e.mu.Lock()
	e.failApply = apierrors.NewForbidden(schema.GroupResource{Group: "scheduling.run.ai", Resource: "podgroups"}, "x", errors.New("RBAC"))
	e.mu.Unlock()
	tj := example(t, "tutorial-trainjob", "running.yaml")[0]
	e.create(tj)
	ev := e.waitEvent("Warning " + ReasonFailed)
	assert.Contains(t, ev, "kai: apply of PodGroup pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang")
	assert.Contains(t, ev, "forbidden")
	assert.GreaterOrEqual(t, testutil.ToFloat64(e.ctrl.metrics.errors.WithLabelValues("apply")), 1.0)

	e.mu.Lock()
	e.failApply = nil
	e.mu.Unlock()
	const group = "pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang"
	first := e.waitObjects(kaiPGGVK, "ml", group)[group]

	// The queue is immutable, says this server.
	e.mu.Lock()
	e.refuse = func(old, next *unstructured.Unstructured) bool {
		a, _, _ := unstructured.NestedString(old.Object, "spec", "queue")
		b, _, _ := unstructured.NestedString(next.Object, "spec", "queue")
		return a != b
	}
	e.mu.Unlock()
	queued := e.objects(trainJobGVK, "ml")["llm-finetune"]
	queued.SetLabels(map[string]string{podgroups.KAIQueueLabel: "research"})
	e.update(queued)
	require.Eventually(t, func() bool {
		pg := e.objects(kaiPGGVK, "ml")[group]
		if pg == nil { // between the delete and the create of a recreate
			return false
		}
		q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue")
		return q == "research" && pg.GetUID() != first.GetUID()
	}, waitFor, tick, "made anew")
	assert.Equal(t, 1.0, testutil.ToFloat64(e.ctrl.metrics.writes.WithLabelValues("PodGroup", "recreate")))
}

// A target whose kinds the cluster does not serve fails Run at once.
func TestTargetNotServed(t *testing.T) {
	e := newEnv(t)
	c, err := New(e.dyn, e.meta, meta.NewDefaultRESTMapper(nil), e.reg, Options{Target: podgroups.WorkloadAPI})
	require.NoError(t, err)
	err = c.Run(context.Background())
	var ns *NotServedError
	require.ErrorAs(t, err, &ns)
	assert.Equal(t, "gang output workload-api: the cluster does not serve scheduling.k8s.io/v1beta1, Kind=Workload "+
		"(it needs Kubernetes 1.37 with the GenericWorkload feature gate and --runtime-config=scheduling.k8s.io/v1beta1=true)", err.Error())
}

func TestOptions(t *testing.T) {
	_, err := New(newEnv(t).dyn, newEnv(t).meta, meta.NewDefaultRESTMapper(nil), interpreter.NewRegistry(), Options{Target: "yunikorn"})
	require.EqualError(t, err, `gang output: unknown target "yunikorn" (want workload-api, kai, volcano, coscheduling)`)
	kinds, err := ParseKinds([]string{"PyTorchJob.kubeflow.org", " Job.batch.volcano.sh ", "", "PyTorchJob.kubeflow.org", "Pod"})
	require.NoError(t, err)
	assert.Equal(t, []schema.GroupKind{{Group: "kubeflow.org", Kind: "PyTorchJob"}, {Group: "batch.volcano.sh", Kind: "Job"}, {Kind: "Pod"}}, kinds)
	assert.Equal(t, []string{"PyTorchJob.kubeflow.org", "Job.batch.volcano.sh", "Pod"}, FormatKinds(kinds))
	_, err = ParseKinds([]string{"kubeflow.org/v1 PyTorchJob"})
	require.Error(t, err)
	assert.Empty(t, DefaultSkip(podgroups.WorkloadAPI))
	assert.NotNil(t, DefaultSkip(podgroups.WorkloadAPI), "empty, not nil: nothing is skipped")
}

// Two built-ins describe two versions of MPIJob, which one CRD serves: the
// version the cluster prefers is watched, and its Karta interprets.
func TestPreferredVersion(t *testing.T) {
	e := newEnv(t)
	e.start(podgroups.Volcano, Options{Skip: []schema.GroupKind{}})
	w := e.ctrl.kinds.Load().Roots[schema.GroupKind{Group: "kubeflow.org", Kind: "MPIJob"}]
	require.NotNil(t, w)
	assert.Equal(t, "v2beta1", w.GVK.Version)
}

// Kubernetes' own kinds are owners, not workloads, unless their Karta
// switches them on; a bare Pod never is a workload.
func TestKubernetesKindsOffUnlessSwitchedOn(t *testing.T) {
	e := newEnv(t)
	// Copies of the built-ins for Job and Pod, switched on, replace them.
	kartaWith(t, e.reg, jobGVK, map[string]string{SwitchAnnotation: "true"})
	kartaWith(t, e.reg, podGVK, map[string]string{SwitchAnnotation: "true"})
	e.start(podgroups.Volcano, Options{Skip: []schema.GroupKind{}})
	set := e.ctrl.kinds.Load()
	for _, gk := range KubernetesKinds() {
		_, root := set.Roots[gk]
		assert.Equal(t, gk == jobGVK.GroupKind(), root, "%s watched as a workload", gk)
	}
	for _, gvk := range []schema.GroupVersionKind{replicaSetGVK, deploymentGVK, statefulSetGVK} {
		assert.NotNil(t, set.Owners[gvk.GroupKind()], "%s watched as an owner", gvk.Kind)
	}
}
