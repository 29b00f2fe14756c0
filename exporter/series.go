package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kartalua/karta/karta"
)

// SchemaVersion is the version of the series' interface: their names,
// labels and meaning (docs/metrics.md, "Stability"). It changes only when
// a series is renamed or removed or a label's meaning changes;
// karta_exporter_info carries it.
const SchemaVersion = "1"

// Statuses are the values of karta_workload_status' status label, one
// series each per workload: the Karta's generic statuses and StatusError.
var Statuses = []string{
	string(karta.StatusInitializing), string(karta.StatusRunning), string(karta.StatusCompleted),
	string(karta.StatusFailed), string(karta.StatusDegraded), string(karta.StatusSuspended),
	string(karta.StatusSuspending), string(karta.StatusResuming), string(karta.StatusUndefined), StatusError,
}

// The labels every workload series starts with, kube-state-metrics'
// style: the workload's namespace and name, its kind and API group.
var workloadLabels = []string{"namespace", "workload", "kind", "group"}

func withLabels(extra ...string) []string {
	return append(append([]string{}, workloadLabels...), extra...)
}

// The workload series (docs/metrics.md lists them; a test holds the two
// equal).
var (
	descInfo = prometheus.NewDesc("karta_exporter_info",
		"The exporter's interface version (docs/metrics.md); always 1.", []string{"version"}, nil)
	descWorkloads = prometheus.NewDesc("karta_exporter_workloads",
		"Workloads summarized.", nil, nil)
	descWorkloadInfo = prometheus.NewDesc("karta_workload_info",
		"A workload a Karta describes: its version and the Karta that interprets it; always 1.", withLabels("version", "karta"), nil)
	descStatus = prometheus.NewDesc("karta_workload_status",
		"The workload's karta status, one-hot: 1 for the current status, 0 for the others.", withLabels("status"), nil)
	descStatusSeconds = prometheus.NewDesc("karta_workload_status_duration_seconds",
		"Seconds since the workload entered its current status (or since the exporter first saw it).", workloadLabels, nil)
	descDesired = prometheus.NewDesc("karta_workload_replicas_desired",
		"Pods the workload asks for in a component instance (replicas times those of scaled ancestors).", withLabels("component", "instance"), nil)
	descObserved = prometheus.NewDesc("karta_workload_replicas_observed",
		"Pods of the workload placed in a component instance.", withLabels("component", "instance"), nil)
	descReady = prometheus.NewDesc("karta_workload_replicas_ready",
		"Pods of the workload placed in a component instance whose Ready condition is True.", withLabels("component", "instance"), nil)
	descRequests = prometheus.NewDesc("karta_workload_resource_requests",
		"Resources the workload's pods request, from the pod specs its Karta computes times the desired replicas.", withLabels("resource", "unit"), nil)
	descComponentRequests = prometheus.NewDesc("karta_workload_component_resource_requests",
		"Resources a component's pods request (all its instances), from the pod specs its Karta computes times the desired replicas.",
		withLabels("component", "resource", "unit"), nil)
	descPodOwner = prometheus.NewDesc("karta_pod_owner",
		"A pod's topmost described owner and where its Karta places it (empty component: nowhere); always 1.",
		[]string{"namespace", "pod", "workload", "kind", "group", "component", "instance"}, nil)
	descGangMinMember = prometheus.NewDesc("karta_workload_gang_min_member",
		"The pods a gang needs to be scheduled together.", withLabels("gang"), nil)
	descGangPresent = prometheus.NewDesc("karta_workload_gang_pods_present",
		"The workload's pods in a gang.", withLabels("gang"), nil)
	descGangReady = prometheus.NewDesc("karta_workload_gang_pods_ready",
		"The workload's pods in a gang whose Ready condition is True.", withLabels("gang"), nil)
	descGangComplete = prometheus.NewDesc("karta_workload_gang_complete",
		"1 when a gang has at least its minMember pods, else 0.", withLabels("gang"), nil)
)

// descs are the Collector's series.
var descs = []*prometheus.Desc{descInfo, descWorkloads, descWorkloadInfo, descStatus, descStatusSeconds, descDesired,
	descObserved, descReady, descRequests, descComponentRequests, descPodOwner, descGangMinMember, descGangPresent,
	descGangReady, descGangComplete}

// health are the exporter's own series.
type health struct {
	errors   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	kinds    *prometheus.GaugeVec
}

func newHealth(e *Exporter, reg prometheus.Registerer) (*health, error) {
	h := &health{
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "exporter", Name: "evaluation_errors_total",
			Help: "Hook calls that failed while summarizing a workload, by kind (Kind.group).",
		}, []string{"kind"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "karta", Subsystem: "exporter", Name: "evaluation_duration_seconds",
			Help:    "Time to summarize one workload (its hooks and the placement of its pods), by kind (Kind.group).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 9), // 0.1 ms to 6.5 s
		}, []string{"kind"}),
		kinds: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karta", Subsystem: "exporter", Name: "watched_kinds",
			Help: "Kinds watched, by role (described, owner).",
		}, []string{"role"}),
	}
	if reg == nil {
		return h, nil
	}
	// The loop's queue_depth and synced (not leading: the exporter writes
	// nothing and runs on every replica).
	loop := e.loop.Gauges("exporter", "Workloads", "1 once the exporter's caches are synced and the API server answers their watches.", e.Ready)
	for _, c := range []prometheus.Collector{h.errors, h.duration, h.kinds, e.Collector(), loop[0], loop[2]} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return h, nil
}
