package exporter

import (
	"time"

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

// emit adds one sample of a family: its value and label values.
type emit func(v float64, labelValues ...string)

// family is one series of the interface (docs/metrics.md lists them; a
// test holds the two equal): its name, help and labels, and its samples
// for one workload's summary (each), or once per scrape (once). The
// Collector and the text writer both make their samples from these, so
// the two cannot disagree.
type family struct {
	name, help string
	labels     []string
	desc       *prometheus.Desc
	once       func(all []*summary, out emit)
	each       func(s *summary, now time.Time, out emit)
}

func newFamily(name, help string, labels []string, each func(s *summary, now time.Time, out emit)) *family {
	return &family{name: name, help: help, labels: labels, each: each, desc: prometheus.NewDesc(name, help, labels, nil)}
}

func withLabels(extra ...string) []string {
	return append(append([]string{}, workloadLabels...), extra...)
}

// wl are a summary's workload label values, then extra.
func (s *summary) wl(extra ...string) []string {
	return append([]string{s.namespace, s.name, s.gvk.Kind, s.gvk.Group}, extra...)
}

// families are the workload series, in the order they are written.
var families = []*family{
	{name: "karta_exporter_info", help: "The exporter's interface version (docs/metrics.md); always 1.", labels: []string{"version"},
		once: func(_ []*summary, out emit) { out(1, SchemaVersion) }},
	{name: "karta_exporter_workloads", help: "Workloads summarized.",
		once: func(all []*summary, out emit) { out(float64(len(all))) }},
	newFamily("karta_workload_info", "A workload a Karta describes: its version and the Karta that interprets it; always 1.",
		withLabels("version", "karta"), func(s *summary, _ time.Time, out emit) { out(1, s.wl(s.gvk.Version, s.karta)...) }),
	newFamily("karta_workload_status", "The workload's karta status, one-hot: 1 for the current status, 0 for the others.",
		withLabels("status"), func(s *summary, _ time.Time, out emit) {
			for _, st := range Statuses {
				out(bit(st == s.status), s.wl(st)...)
			}
		}),
	newFamily("karta_workload_status_duration_seconds", "Seconds since the workload entered its current status (or since the exporter first saw it).",
		workloadLabels, func(s *summary, now time.Time, out emit) { out(now.Sub(s.since).Seconds(), s.wl()...) }),
	newFamily("karta_workload_replicas_desired", "Pods the workload asks for in a component instance (replicas times those of scaled ancestors).",
		withLabels("component", "instance"), func(s *summary, _ time.Time, out emit) {
			for _, c := range s.components {
				if c.desired != nil {
					out(float64(*c.desired), s.wl(c.component, c.instance)...)
				}
			}
		}),
	newFamily("karta_workload_replicas_observed", "Pods of the workload placed in a component instance.",
		withLabels("component", "instance"), func(s *summary, _ time.Time, out emit) {
			for _, c := range s.components {
				out(float64(c.observed), s.wl(c.component, c.instance)...)
			}
		}),
	newFamily("karta_workload_replicas_ready", "Pods of the workload placed in a component instance whose Ready condition is True.",
		withLabels("component", "instance"), func(s *summary, _ time.Time, out emit) {
			for _, c := range s.components {
				out(float64(c.ready), s.wl(c.component, c.instance)...)
			}
		}),
	newFamily("karta_workload_resource_requests", "Resources the workload's pods request, from the pod specs its Karta computes times the desired replicas.",
		withLabels("resource", "unit"), func(s *summary, _ time.Time, out emit) {
			for _, r := range s.requests {
				if r.component == "" {
					resource, unit := resourceLabel(r.resource)
					out(r.value, s.wl(resource, unit)...)
				}
			}
		}),
	newFamily("karta_workload_component_resource_requests",
		"Resources a component's pods request (all its instances), from the pod specs its Karta computes times the desired replicas.",
		withLabels("component", "resource", "unit"), func(s *summary, _ time.Time, out emit) {
			for _, r := range s.requests {
				if r.component != "" {
					resource, unit := resourceLabel(r.resource)
					out(r.value, s.wl(r.component, resource, unit)...)
				}
			}
		}),
	newFamily("karta_pod_owner", "A pod's topmost described owner and where its Karta places it (empty component: nowhere); always 1.",
		[]string{"namespace", "pod", "workload", "kind", "group", "component", "instance"}, func(s *summary, _ time.Time, out emit) {
			for _, p := range s.pods {
				out(1, s.namespace, p.name, s.name, s.gvk.Kind, s.gvk.Group, p.component, p.instance)
			}
		}),
	newFamily("karta_workload_gang_min_member", "The pods a gang needs to be scheduled together.",
		withLabels("gang"), func(s *summary, _ time.Time, out emit) {
			for _, g := range s.gangs {
				out(float64(g.minMember), s.wl(g.name)...)
			}
		}),
	newFamily("karta_workload_gang_pods_present", "The workload's pods in a gang.",
		withLabels("gang"), func(s *summary, _ time.Time, out emit) {
			for _, g := range s.gangs {
				out(float64(g.present), s.wl(g.name)...)
			}
		}),
	newFamily("karta_workload_gang_pods_ready", "The workload's pods in a gang whose Ready condition is True.",
		withLabels("gang"), func(s *summary, _ time.Time, out emit) {
			for _, g := range s.gangs {
				out(float64(g.ready), s.wl(g.name)...)
			}
		}),
	newFamily("karta_workload_gang_complete", "1 when a gang has at least its minMember pods, else 0.",
		withLabels("gang"), func(s *summary, _ time.Time, out emit) {
			for _, g := range s.gangs {
				out(bit(int64(g.present) >= g.minMember), s.wl(g.name)...)
			}
		}),
}

func init() {
	for _, f := range families {
		if f.desc == nil {
			f.desc = prometheus.NewDesc(f.name, f.help, f.labels, nil)
		}
	}
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// health are the exporter's own series.
type health struct {
	errors   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	kinds    *prometheus.GaugeVec
}

// newHealth registers the exporter's own series with reg: not the
// workload series, which the Handler writes (or an embedder registers
// Collector).
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
	for _, c := range []prometheus.Collector{h.errors, h.duration, h.kinds, loop[0], loop[2]} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return h, nil
}
