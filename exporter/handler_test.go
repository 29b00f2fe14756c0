package exporter

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// The Handler writes the process's series and the same workload series as
// the Collector, sample for sample; label values that need escaping
// survive the round trip.
func TestHandlerWritesWhatTheCollectorCollects(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.pytorchJob("running.yaml")
	e.jobSet()
	e.waitSeriesWhere("karta_workload_replicas_observed", "kind=JobSet,instance=workers", map[string]float64{
		"component=replicatedjob," + jobset + ",workload=llama3-pretrain,instance=workers": 8,
	})
	// A summary whose labels need escaping, beside the cluster's.
	weird := &summary{namespace: "ns", name: "a\"b\\c\nd", karta: "k", status: "Running", since: e.clock()}
	weird.gvk.Kind, weird.gvk.Version = "Pod", "v1"
	e.exp.mu.Lock()
	e.exp.summaries[key{gk: weird.gvk.GroupKind(), namespace: "ns", name: weird.name}] = weird
	e.exp.mu.Unlock()

	own := prometheus.NewRegistry()
	own.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "karta_test_total", Help: "A series of the process."}))
	rec := httptest.NewRecorder()
	e.exp.Handler(own).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	require.Equal(t, "text/plain; version=0.0.4; charset=utf-8", rec.Header().Get("Content-Type"))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	written, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	require.NoError(t, err)
	require.Contains(t, written, "karta_test_total")

	collected, err := e.metrics.Gather()
	require.NoError(t, err)
	n := 0
	for _, mf := range collected {
		if !isFamily(mf.GetName()) {
			continue
		}
		n++
		w, ok := written[mf.GetName()]
		require.True(t, ok, mf.GetName())
		require.Equal(t, samples(mf), samples(w), mf.GetName())
		require.Equal(t, mf.GetHelp(), w.GetHelp())
	}
	require.Equal(t, len(families), n)
	require.Contains(t, samples(written["karta_workload_info"]), `group=,karta=k,kind=Pod,namespace=ns,version=v1,workload=a"b\c`+"\n"+`d`)

	// Gzip when asked.
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec = httptest.NewRecorder()
	e.exp.Handler(own).ServeHTTP(rec, req)
	require.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
}

func isFamily(name string) bool {
	for _, f := range families {
		if f.name == name {
			return true
		}
	}
	return false
}

// samples are a family's samples as label strings → value.
func samples(mf *dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mf.GetMetric() {
		out[labelString(m)] = value(m)
	}
	return out
}
