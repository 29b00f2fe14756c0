package exporter

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector is the Prometheus collector of the workload series, computed
// from the summaries at each scrape (the package documentation says why).
// New registers it with Options.Registerer.
func (e *Exporter) Collector() prometheus.Collector { return collector{e} }

type collector struct{ e *Exporter }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	// The summaries are never modified once stored: the lock is held only
	// to copy the pointers, not while the series are built.
	c.e.mu.RLock()
	all := make([]*summary, 0, len(c.e.summaries))
	for _, s := range c.e.summaries {
		all = append(all, s)
	}
	c.e.mu.RUnlock()
	now := c.e.opts.Now()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descInfo, 1, SchemaVersion)
	gauge(descWorkloads, float64(len(all)))
	for _, s := range all {
		w := []string{s.namespace, s.name, s.gvk.Kind, s.gvk.Group}
		with := func(extra ...string) []string { return append(slices.Clip(w), extra...) }
		gauge(descWorkloadInfo, 1, with(s.gvk.Version, s.karta)...)
		for _, st := range Statuses {
			gauge(descStatus, bit(st == s.status), with(st)...)
		}
		gauge(descStatusSeconds, now.Sub(s.since).Seconds(), w...)
		for _, comp := range s.components {
			if comp.desired != nil {
				gauge(descDesired, float64(*comp.desired), with(comp.component, comp.instance)...)
			}
			gauge(descObserved, float64(comp.observed), with(comp.component, comp.instance)...)
			gauge(descReady, float64(comp.ready), with(comp.component, comp.instance)...)
		}
		for _, r := range s.requests {
			resource, unit := resourceLabel(r.resource)
			if r.component == "" {
				gauge(descRequests, r.value, with(resource, unit)...)
			} else {
				gauge(descComponentRequests, r.value, with(r.component, resource, unit)...)
			}
		}
		for _, p := range s.pods {
			gauge(descPodOwner, 1, s.namespace, p.name, s.name, s.gvk.Kind, s.gvk.Group, p.component, p.instance)
		}
		for _, g := range s.gangs {
			gauge(descGangMinMember, float64(g.minMember), with(g.name)...)
			gauge(descGangPresent, float64(g.present), with(g.name)...)
			gauge(descGangReady, float64(g.ready), with(g.name)...)
			gauge(descGangComplete, bit(int64(g.present) >= g.minMember), with(g.name)...)
		}
	}
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
