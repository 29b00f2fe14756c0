//go:build integration

package exporter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/restmapper"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/interpreter"
)

// reflectedWithin is issue 34's bound on a change reaching /metrics.
const reflectedWithin = 30 * time.Second

// The exporter on the test cluster, scraped over HTTP: a PyTorchJob (a
// gang) with its pods, a JobSet with its Jobs (a nested described kind:
// components, not workloads) and their pods, and a Job that no JobSet
// owns (its own workload). The series name each pod's topmost owner and
// count what the examples hold; then the PyTorchJob completes, a pod goes
// and the JobSet goes, and the series follow within 30 s.
func TestIntegrationExporter(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, cfg)
	ctx := t.Context()
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	meta, err := metadata.NewForConfig(cfg)
	require.NoError(t, err)
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	x, err := New(dyn, meta, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), reg, Options{Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- x.Run(runCtx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	require.Eventually(t, x.HasSynced, time.Minute, 100*time.Millisecond, "caches synced")
	srv := httptest.NewServer(x.Handler(prometheus.NewRegistry()))
	t.Cleanup(srv.Close)

	res := func(gvk schema.GroupVersionKind) dynamic.ResourceInterface {
		gvr, _ := restMapping(gvk)
		return dyn.Resource(gvr).Namespace(ns)
	}
	// create creates obj in ns (its status, which the server drops, written
	// after) and returns it as created.
	create := func(obj *unstructured.Unstructured) *unstructured.Unstructured {
		t.Helper()
		obj = obj.DeepCopy()
		obj.SetNamespace(ns)
		obj.SetUID("")
		obj.SetResourceVersion("")
		obj.SetCreationTimestamp(metav1.Time{})
		status, hasStatus := obj.Object["status"]
		out, err := res(obj.GroupVersionKind()).Create(ctx, obj, metav1.CreateOptions{})
		require.NoError(t, err, obj.GetName())
		if hasStatus && obj.GetKind() != "Pod" && obj.GetKind() != "Job" {
			out.Object["status"] = status
			out, err = res(obj.GroupVersionKind()).UpdateStatus(ctx, out, metav1.UpdateOptions{})
			require.NoError(t, err, obj.GetName())
		}
		return out
	}
	ownedBy := func(pod, owner *unstructured.Unstructured) *unstructured.Unstructured {
		pod = pod.DeepCopy()
		pod.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(owner, owner.GroupVersionKind())})
		if owner.GetKind() == "Job" {
			// The Job's selector (the server's), or the Job controller
			// releases the pod.
			labels := pod.GetLabels()
			labels["batch.kubernetes.io/controller-uid"] = string(owner.GetUID())
			labels["controller-uid"] = string(owner.GetUID())
			pod.SetLabels(labels)
		}
		delete(pod.Object, "status")
		// Not yet linked to a group by a scheduler: the example's link
		// names its own pod's uid, which the server gives anew.
		unstructured.RemoveNestedField(pod.Object, "metadata", "annotations", "scheduling.k8s.io/group-name")
		unstructured.RemoveNestedField(pod.Object, "spec", "nodeName")
		return pod
	}

	// The PyTorchJob and its 4 pods.
	pj := create(example(t, "pytorchjob", "running.yaml")[0])
	for _, p := range example(t, "pytorchjob", "pods.yaml") {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "PyTorchJob" {
			create(ownedBy(p, pj))
		}
	}
	// The JobSet, its 3 Jobs (managed by the JobSet controller, as a
	// JobSet's are: the Job controller leaves them and their pods alone)
	// and their 9 pods.
	js := create(example(t, "jobset", "running.yaml")[0])
	jobs := map[types.UID]*unstructured.Unstructured{}
	for uid, name := range map[types.UID]string{
		"653fc8de-67a1-4e1c-baf5-699eb51f69e7": "llama3-pretrain-driver-0",
		"a6e76e3c-872f-46d6-8606-e12fb18e463d": "llama3-pretrain-workers-0",
		"0e3b28b5-6d8e-4849-a391-c4f24b461311": "llama3-pretrain-workers-1",
	} {
		jobs[uid] = create(managedByJobSet(jobOf(ns, name, "", js, 4)))
	}
	for _, p := range example(t, "jobset", "pods.yaml") {
		if ref := metav1.GetControllerOf(p); ref != nil && jobs[ref.UID] != nil {
			create(ownedBy(p, jobs[ref.UID]))
		}
	}
	// A Job of its own.
	create(suspended(jobOf(ns, "standalone", "", nil, 2)))

	scrape := newScraper(t, srv.URL, ns)
	pytorchW := "group=kubeflow.org,kind=PyTorchJob,namespace=" + ns + ",workload=mistral-7b-sft"
	jobsetW := "group=jobset.x-k8s.io,kind=JobSet,namespace=" + ns + ",workload=llama3-pretrain"
	scrape.wait(reflectedWithin, "karta_workload_info", "", map[string]float64{
		"group=kubeflow.org,karta=pytorchjob,kind=PyTorchJob,namespace=" + ns + ",version=v1,workload=mistral-7b-sft":   1,
		"group=jobset.x-k8s.io,karta=jobset,kind=JobSet,namespace=" + ns + ",version=v1alpha2,workload=llama3-pretrain": 1,
		"group=batch,karta=job,kind=Job,namespace=" + ns + ",version=v1,workload=standalone":                            1,
	})
	scrape.wait(reflectedWithin, "karta_workload_replicas_observed", "kind=PyTorchJob", map[string]float64{
		"component=master,instance=," + pytorchW: 1,
		"component=worker,instance=," + pytorchW: 3,
	})
	scrape.wait(reflectedWithin, "karta_workload_replicas_observed", "kind=JobSet", map[string]float64{
		"component=replicatedjob,instance=driver," + jobsetW:  1,
		"component=replicatedjob,instance=workers," + jobsetW: 8,
	})
	owners := scrape.series("karta_pod_owner")
	require.Len(t, owners, 13, "every pod once: %v", owners)
	for k := range owners {
		require.True(t, strings.Contains(k, "kind=PyTorchJob") || strings.Contains(k, "kind=JobSet"), k)
	}
	require.Equal(t, norm(map[string]float64{
		pytorchW + ",resource=nvidia_com_gpu,unit=integer": 32,
		jobsetW + ",resource=nvidia_com_gpu,unit=integer":  64,
	}), filter(scrape.series("karta_workload_resource_requests"), "resource=nvidia_com_gpu"))
	require.Equal(t, norm(map[string]float64{
		"gang=pg-" + string(pj.GetUID()) + "-job," + pytorchW:   4,
		"gang=pg-" + string(js.GetUID()) + "-jobset," + jobsetW: 9,
	}), scrape.series("karta_workload_gang_pods_present"))
	require.Equal(t, norm(map[string]float64{pytorchW + ",status=Running": 1}), filter(scrape.series("karta_workload_status"), "kind=PyTorchJob,status=Running"))

	// The PyTorchJob completes.
	start := time.Now()
	cur, err := res(pj.GroupVersionKind()).Get(ctx, pj.GetName(), metav1.GetOptions{})
	require.NoError(t, err)
	cur.Object["status"] = example(t, "pytorchjob", "completed.yaml")[0].Object["status"]
	_, err = res(pj.GroupVersionKind()).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	require.NoError(t, err)
	scrape.wait(reflectedWithin, "karta_workload_status", "kind=PyTorchJob,status=Completed", map[string]float64{pytorchW + ",status=Completed": 1})
	t.Logf("a status change reached /metrics in %s", time.Since(start).Round(time.Millisecond))

	// A worker goes.
	zero := int64(0)
	require.NoError(t, res(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}).Delete(ctx, "mistral-7b-sft-worker-2", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	scrape.wait(reflectedWithin, "karta_workload_replicas_observed", "kind=PyTorchJob,component=worker", map[string]float64{"component=worker,instance=," + pytorchW: 2})

	// The JobSet goes, its Jobs and pods with it (or, until the garbage
	// collector has them, left without a described owner).
	require.NoError(t, res(js.GroupVersionKind()).Delete(ctx, js.GetName(), metav1.DeleteOptions{}))
	scrape.wait(reflectedWithin, "karta_workload_info", "kind=JobSet", map[string]float64{})
}

// managedByJobSet sets the Job's spec.managedBy to the JobSet
// controller's: the Job controller neither makes pods for it nor releases
// or deletes the ones the test makes.
func managedByJobSet(job *unstructured.Unstructured) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(job.Object, "jobset.sigs.k8s.io/jobset-controller", "spec", "managedBy")
	return job
}

func suspended(job *unstructured.Unstructured) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(job.Object, true, "spec", "suspend")
	return job
}

// restMapping is the resource of the kinds the test creates.
func restMapping(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool) {
	return resourceOf(gvk), true
}

// scraper scrapes an exporter's /metrics and keeps the samples of one
// namespace.
type scraper struct {
	t   *testing.T
	url string
	ns  string
}

func newScraper(t *testing.T, url, ns string) *scraper { return &scraper{t: t, url: url, ns: ns} }

// series are the samples of name in the namespace, as labelString writes
// their labels.
func (s *scraper) series(name string) map[string]float64 {
	s.t.Helper()
	resp, err := http.Get(s.url)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(s.t, err)
	out := map[string]float64{}
	if mf, ok := mfs[name]; ok {
		for k, v := range samples(mf) {
			if strings.Contains(","+k+",", ",namespace="+s.ns+",") {
				out[k] = v
			}
		}
	}
	return out
}

// wait waits until the samples of name that match (filter) are want.
func (s *scraper) wait(within time.Duration, name, match string, want map[string]float64) {
	s.t.Helper()
	want = norm(want)
	var got map[string]float64
	deadline := time.Now().Add(within)
	for {
		got = filter(s.series(name), match)
		if equalSeries(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.Equal(s.t, want, got, "%s within %s; the pods' owners: %v", name, within, s.series("karta_pod_owner"))
}
