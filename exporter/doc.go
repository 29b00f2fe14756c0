// Package exporter serves Prometheus series about the workloads a Karta
// describes: their status, replicas, requested resources, gangs, and which
// workload, component and instance each pod belongs to (docs/metrics.md,
// the versioned interface: SchemaVersion).
//
// The Exporter watches, with informers, every kind the registry holds a
// Program for (the built-ins and the cluster's Kartas), their pods, and
// the owner kinds between the two (metadata only), on the informers of
// the process when Options.Informers shares them (internal/kindwatch:
// one per resource with the gang output and the references cache). A workload is an
// object of a described kind with no described kind above it in its
// controller chain: a JobSet's Jobs, a Deployment's ReplicaSets or a
// TrainJob's JobSet are components of the topmost one, never workloads of
// their own, and every pod counts once, for its topmost described owner.
// A Job that no JobSet owns is a workload.
//
// For each workload the exporter keeps a summary (status, the time it
// entered it, components with desired, observed and ready pods, requests,
// gangs, the pods' placements) and no object of its own: the informers'
// caches hold the objects, the summaries what the series need. A change
// of a workload, of an object under it or of one of its pods queues the
// workload, which is summarized again (its hooks run once per change, not
// per scrape).
//
// Why series are computed at scrape time from the summaries rather than
// kept in gauge vectors updated on events: a gauge vector keeps every
// label set until it is deleted, so a workload that goes, a pod that
// moves to another instance or a status that changes would each need the
// old series found and deleted by hand, and a missed delete is a series
// that lives forever. Computed from the summaries, a scrape shows exactly
// the workloads that exist. The cost is building the series of every
// workload on each scrape, which Handler keeps low by writing Prometheus'
// text format straight from the summaries (about 2 µs of CPU a sample,
// where client_golang's gathering took 13 µs), measured by
// BenchmarkExporterScrape (10,000 workloads, 100,000 pods).
package exporter
