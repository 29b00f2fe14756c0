package exporter

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector is a Prometheus collector of the workload series, computed
// from the summaries at each scrape (the package documentation says why),
// for an embedder that gathers them with its own registry. Handler
// serves the same series faster: at 10,000 workloads client_golang's
// gathering (a protobuf message per sample, sorted and checked) costs
// seconds per scrape where writing the text format directly costs a
// fraction of one (BenchmarkExporterScrape).
func (e *Exporter) Collector() prometheus.Collector { return collector{e} }

type collector struct{ e *Exporter }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range families {
		ch <- f.desc
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	all, now := c.e.snapshot()
	for _, f := range families {
		out := func(v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(f.desc, prometheus.GaugeValue, v, labels...)
		}
		if f.once != nil {
			f.once(all, out)
			continue
		}
		for _, s := range all {
			f.each(s, now, out)
		}
	}
}

// snapshot is every summary and the time of the scrape. The summaries are
// never modified once stored: the lock is held only to copy the pointers,
// not while the series are built.
func (e *Exporter) snapshot() ([]*summary, time.Time) {
	e.mu.RLock()
	all := make([]*summary, 0, len(e.summaries))
	for _, s := range e.summaries {
		all = append(all, s)
	}
	e.mu.RUnlock()
	return all, e.opts.Now()
}
