package exporter

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

// waitFor is how long the tests wait for the exporter: generous, the
// machine is shared.
const (
	waitFor = 30 * time.Second
	tick    = 10 * time.Millisecond
)

var (
	jobSetGVK     = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}
	pyTorchJobGVK = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}
	jobGVK        = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}

	clusterRuntimeGVK = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"}
)

// env is a fake cluster: a dynamic client (workloads and pods), a metadata
// client (owners), a REST mapper serving the built-ins' kinds and their
// owners, and the built-ins' registry.
type env struct {
	t       testing.TB
	dyn     *dynamicfake.FakeDynamicClient
	meta    *metadatafake.FakeMetadataClient
	mapper  *meta.DefaultRESTMapper
	reg     *interpreter.Registry
	metrics *prometheus.Registry
	// now is the exporter's clock, which the tests move.
	now atomic.Pointer[time.Time]
	exp *Exporter
}

func resourceOf(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	return gvr
}

// newEnv returns a fake cluster with the built-ins and extra Programs.
func newEnv(t testing.TB, extra ...*interpreter.Program) *env {
	t.Helper()
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	for _, p := range extra {
		reg.Put(p)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	listKinds := map[schema.GroupVersionResource]string{}
	add := func(gvk schema.GroupVersionKind) {
		mapper.Add(gvk, meta.RESTScopeNamespace)
		listKinds[resourceOf(gvk)] = gvk.Kind + "List"
	}
	for _, e := range reg.Entries() {
		add(e.GVK)
	}
	for _, gvk := range DefaultOwnerKinds() {
		add(gvk)
	}
	// The runtime examples/kartas/trainjob-runtime.yaml references
	// (references_test.go): cluster-scoped.
	mapper.Add(clusterRuntimeGVK, meta.RESTScopeRoot)
	listKinds[resourceOf(clusterRuntimeGVK)] = clusterRuntimeGVK.Kind + "List"
	e := &env{t: t, mapper: mapper, reg: reg, metrics: prometheus.NewRegistry()}
	e.setNow(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	e.dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	mscheme := metadatafake.NewTestScheme()
	require.NoError(t, metav1.AddMetaToScheme(mscheme))
	e.meta = metadatafake.NewSimpleMetadataClient(mscheme)
	return e
}

// start runs an exporter until the test ends and waits for its caches.
func (e *env) start() *Exporter {
	e.t.Helper()
	return e.startWith(Options{})
}

// startWith is start with opts, whose registerer, clock, resync and
// rediscovery are the env's (never: only events reach the exporter).
func (e *env) startWith(opts Options) *Exporter {
	e.t.Helper()
	opts.Registerer, opts.Now, opts.ResyncPeriod, opts.RediscoverPeriod = e.metrics, e.clock, -1, -1
	x, err := New(e.dyn, e.meta, e.mapper, e.reg, opts)
	require.NoError(e.t, err)
	require.NoError(e.t, e.metrics.Register(x.Collector()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		require.NoError(e.t, <-done)
	})
	require.Eventually(e.t, x.HasSynced, waitFor, tick, "caches synced")
	e.exp = x
	return x
}

func (e *env) create(objs ...*unstructured.Unstructured) {
	e.t.Helper()
	for _, obj := range objs {
		_, err := e.dyn.Resource(resourceOf(obj.GroupVersionKind())).Namespace(obj.GetNamespace()).Create(context.Background(), obj, metav1.CreateOptions{})
		require.NoError(e.t, err)
	}
}

func (e *env) update(obj *unstructured.Unstructured) {
	e.t.Helper()
	_, err := e.dyn.Resource(resourceOf(obj.GroupVersionKind())).Namespace(obj.GetNamespace()).Update(context.Background(), obj, metav1.UpdateOptions{})
	require.NoError(e.t, err)
}

func (e *env) remove(obj *unstructured.Unstructured) {
	e.t.Helper()
	err := e.dyn.Resource(resourceOf(obj.GroupVersionKind())).Namespace(obj.GetNamespace()).Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{})
	require.NoError(e.t, err)
}

// series are the gathered series of one name, each as its labels
// (name=value, sorted, joined by ",") → value.
func (e *env) series(name string) map[string]float64 {
	e.t.Helper()
	return gather(e.t, e.metrics, name)
}

func gather(t testing.TB, g prometheus.Gatherer, name string) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[labelString(m)] = value(m)
		}
	}
	return out
}

func labelString(m *dto.Metric) string {
	var ls []string
	for _, l := range m.GetLabel() {
		ls = append(ls, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(ls)
	return strings.Join(ls, ",")
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

// waitSeries waits until the series of name are want.
func (e *env) waitSeries(name string, want map[string]float64) {
	e.t.Helper()
	want = norm(want)
	var got map[string]float64
	if !assertEventually(func() bool {
		got = e.series(name)
		return equalSeries(got, want)
	}) {
		require.Equal(e.t, want, got, name)
	}
}

// waitSeriesWhere waits until the series of name whose labels contain
// every one of match are want.
func (e *env) waitSeriesWhere(name string, match string, want map[string]float64) {
	e.t.Helper()
	want = norm(want)
	var got map[string]float64
	if !assertEventually(func() bool {
		got = filter(e.series(name), match)
		return equalSeries(got, want)
	}) {
		require.Equal(e.t, want, got, name)
	}
}

func filter(all map[string]float64, match string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range all {
		ok := true
		for _, m := range strings.Split(match, ",") {
			if m != "" && !strings.Contains(","+k+",", ","+m+",") {
				ok = false
			}
		}
		if ok {
			out[k] = v
		}
	}
	return out
}

func equalSeries(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if got, ok := a[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func assertEventually(cond func() bool) bool {
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(tick)
	}
	return cond()
}

// example reads examples/NAME/FILE: its objects.
func example(t testing.TB, name, file string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join("..", "examples", name, file)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	docs, err := object.Decode(data, path)
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, it := range object.Items(docs) {
		u := &unstructured.Unstructured{Object: it}
		u.SetResourceVersion("")
		out = append(out, u)
	}
	return out
}

// jobOf is a batch/v1 Job named name with uid, controlled by owner (nil:
// none), running pods pods at once.
func jobOf(ns, name, uid string, owner *unstructured.Unstructured, parallelism int64) *unstructured.Unstructured {
	j := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"namespace": ns, "name": name, "uid": uid},
		"spec": map[string]any{"parallelism": parallelism, "completions": parallelism, "template": map[string]any{
			"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "main", "image": "busybox",
				"resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}}},
		}},
	}}
	if owner != nil {
		j.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(owner, owner.GroupVersionKind())})
	}
	return j
}

// withUID sets a uid on an object the example leaves without one.
func withUID(u *unstructured.Unstructured, uid string) *unstructured.Unstructured {
	u.SetUID(types.UID(uid))
	return u
}

// norm sorts the labels of each key as labelString does: the tests write
// a workload's labels as one block.
func norm(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		parts := strings.Split(k, ",")
		sort.Strings(parts)
		out[strings.Join(parts, ",")] = v
	}
	return out
}

func (e *env) setNow(t time.Time) { e.now.Store(&t) }
func (e *env) clock() time.Time   { return *e.now.Load() }
