package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kartalua/karta/internal/heapwatch"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The scale of BenchmarkExporterScrape: issue 34's 10,000 workloads and
// 100,000 pods.
const (
	benchWorkloads = 10000
	benchPods      = 10 // per workload: a master and 9 workers
)

// BenchmarkExporterScrape summarizes 10,000 PyTorchJobs of 10 pods each
// (examples/pytorchjob's, renamed, with 9 workers) with the built-in's
// hooks, keeps their summaries in an Exporter and scrapes its Handler
// (the text format, uncompressed, counted and dropped). It reports
// "s/scrape" and "cpu-s/scrape" (the process's CPU time: the machine may
// be shared), the series of a scrape, "summary-B/workload" (the heap the
// summaries keep, per workload, after the objects are gone),
// "objects-B/workload" (the heap of a workload's object and pods, what an
// informer's cache holds for it) and "ms/summarize" (one workload's hooks
// and placement). Run it with -benchtime 1x (a scrape is 10,000
// workloads).
func BenchmarkExporterScrape(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b)
	x, err := New(e.dyn, e.meta, e.mapper, e.reg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	p, ok := e.reg.Get(pyTorchJobGVK)
	if !ok {
		b.Fatal("no pytorchjob Program")
	}
	job := example(b, "pytorchjob", "running.yaml")[0]
	var master, worker *unstructured.Unstructured
	for _, pod := range example(b, "pytorchjob", "pods.yaml") {
		switch pod.GetName() {
		case "mistral-7b-sft-master-0":
			master = pod
		case "mistral-7b-sft-worker-0":
			worker = pod
		}
	}

	h0 := heapInUse()
	type workload struct {
		obj  *unstructured.Unstructured
		pods []*unstructured.Unstructured
	}
	all := make([]workload, benchWorkloads)
	for i := range all {
		name, uid := fmt.Sprintf("sft-%05d", i), fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		w := workload{obj: renamed(b, job, name, uid, "")}
		if err := unstructured.SetNestedField(w.obj.Object, int64(benchPods-1), "spec", "pytorchReplicaSpecs", "Worker", "replicas"); err != nil {
			b.Fatal(err)
		}
		w.pods = append(w.pods, renamed(b, master, name, uid, ""))
		for j := range benchPods - 1 {
			w.pods = append(w.pods, renamed(b, worker, name, uid, fmt.Sprint(j)))
		}
		all[i] = w
	}
	h1 := heapInUse()

	start := time.Now()
	for _, w := range all {
		s, errs := summarize(ctx, p, w.obj, w.pods, start)
		if len(errs) > 0 {
			b.Fatalf("%s: %v", w.obj.GetName(), errs)
		}
		x.summaries[key{gk: pyTorchJobGVK.GroupKind(), namespace: s.namespace, name: s.name}] = s
	}
	perSummarize := time.Since(start).Seconds() / benchWorkloads
	all = nil
	h2 := heapInUse()
	runtime.KeepAlive(all)

	h := x.Handler(prometheus.NewRegistry())
	req := httptest.NewRequest("GET", "/metrics", nil)
	var w *countingWriter
	b.ResetTimer()
	cpu0, cpuOK := heapwatch.ProcessCPU()
	for range b.N {
		w = &countingWriter{header: http.Header{}}
		h.ServeHTTP(w, req)
	}
	cpu1, cpuOK1 := heapwatch.ProcessCPU()
	b.StopTimer()
	series := w.samples
	if cpuOK && cpuOK1 {
		// The CPU time the process spent (GC workers included): on a
		// machine other work shares, the wall time is this over the
		// cores it got.
		b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N), "cpu-s/scrape")
	}
	if want := benchWorkloads * benchPods; series < want {
		b.Fatalf("%d series, fewer than the %d pods", series, want)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/scrape")
	b.ReportMetric(float64(series), "series")
	b.ReportMetric(benchWorkloads, "workloads")
	b.ReportMetric(benchWorkloads*benchPods, "pods")
	b.ReportMetric((float64(h1)-float64(h0))/benchWorkloads, "objects-B/workload")
	b.ReportMetric((float64(h2)-float64(h0))/benchWorkloads, "summary-B/workload")
	b.ReportMetric(perSummarize*1000, "ms/summarize")
}

// renamed is a copy of obj (a PyTorchJob or one of its pods) for the
// workload name with uid; a worker pod gets index as its replica index.
func renamed(b *testing.B, obj *unstructured.Unstructured, name, uid, index string) *unstructured.Unstructured {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		b.Fatal(err)
	}
	s := strings.ReplaceAll(string(data), "mistral-7b-sft", name)
	s = strings.ReplaceAll(s, "9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04", uid)
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON([]byte(s)); err != nil {
		b.Fatal(err)
	}
	if index != "" {
		out.SetName(name + "-worker-" + index)
		out.SetUID("")
		labels := out.GetLabels()
		labels["training.kubeflow.org/replica-index"] = index
		out.SetLabels(labels)
	}
	if ref := metav1.GetControllerOf(out); ref != nil && ref.UID == "" {
		b.Fatal("no owner")
	}
	return out
}

// countingWriter is a ResponseWriter that counts the sample lines of a
// text exposition and keeps nothing.
type countingWriter struct {
	header  http.Header
	samples int
	// lineStart is set once a line has a byte, comment when that byte
	// was '#'.
	comment, lineStart bool
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(int)     {}
func (w *countingWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		switch {
		case c == '\n':
			if !w.comment {
				w.samples++
			}
			w.comment, w.lineStart = false, false
		case !w.lineStart:
			w.lineStart = true
			w.comment = c == '#'
		}
	}
	return len(p), nil
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
