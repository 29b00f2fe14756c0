package gangoutput

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the gang output's and the pod webhook's collectors.
type metrics struct {
	writes     *prometheus.CounterVec
	errors     *prometheus.CounterVec
	workloads  *prometheus.GaugeVec
	kinds      *prometheus.GaugeVec
	ownerReads prometheus.Counter

	admissions *prometheus.CounterVec
	failOpen   *prometheus.CounterVec
	latency    prometheus.Histogram
}

func newMetrics(c *Controller, reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "gang_output", Name: "writes_total",
			Help: "Gang objects written, by kind and operation (create, update, recreate, delete).",
		}, []string{"kind", "operation"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "gang_output", Name: "errors_total",
			Help: "Workload reconciles that failed, by reason (apply, delete, invalid, hook, owners, other).",
		}, []string{"reason"}),
		workloads: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karta", Subsystem: "gang_output", Name: "workloads",
			Help: "Workloads by state (written, waiting, skipped, nested, foreign, failed).",
		}, []string{"state"}),
		kinds: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karta", Subsystem: "gang_output", Name: "watched_kinds",
			Help: "Kinds watched, by role (workload, owner).",
		}, []string{"role"}),
		ownerReads: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "gang_output", Name: "owner_reads_total",
			Help: "Owners of unwatched kinds read from the API server (each once).",
		}),
		admissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "pod_webhook", Name: "admissions_total",
			Help: "Pod admissions by result (linked, already_linked, no_workload, skipped, unmatched, ignored, fail_open).",
		}, []string{"result"}),
		failOpen: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "pod_webhook", Name: "fail_open_total",
			Help: "Pods admitted unchanged because the webhook could not tell their group, by reason (unknown_workload, lookup_failed, hook_error, bad_request).",
		}, []string{"reason"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "karta", Subsystem: "pod_webhook", Name: "duration_seconds",
			Help:    "Time to answer a pod admission review.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .1, .5},
		}),
	}
	for _, s := range workloadStates {
		m.workloads.WithLabelValues(s)
	}
	for _, r := range []role{roleWorkload, roleOwner} {
		m.kinds.WithLabelValues(string(r))
	}
	for _, r := range admissionResults {
		m.admissions.WithLabelValues(r)
	}
	for _, r := range failOpenReasons {
		m.failOpen.WithLabelValues(r)
	}
	if reg == nil {
		return m, nil
	}
	collectors := []prometheus.Collector{m.writes, m.errors, m.workloads, m.kinds, m.ownerReads, m.admissions, m.failOpen, m.latency}
	collectors = append(collectors, c.loop.Gauges("gang_output", "Workloads",
		"1 while the gang output is ready: the caches hold the pods, the target's objects and the kinds watched at the start, and the API server answers their watches.",
		c.Ready)...)
	for _, col := range collectors {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("gang output: registering metrics: %w", err)
		}
	}
	return m, nil
}
