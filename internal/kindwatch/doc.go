// Package kindwatch is the one watch machinery of karta's live consumers
// of workloads, the gang output and the metrics exporter: the informers of
// a process, one per resource whoever asks for it (Informers, which the
// references cache, cluster/refs, watches on too), the kinds a consumer
// watches and their discovery (Tracker, Set, Map, Owners), and which
// workloads a change of a referenced object concerns (Referencing).
//
// Why one informer per resource: `karta controller --metrics-exporter
// --gang-output` watches the same workload kinds, their owners and every
// pod twice otherwise (and a Deployment's ReplicaSets a third time, as its
// references), which multiplies the memory of the biggest caches of the
// process and the load on the API server. An informer is shared by
// its consumers' event handlers and stopped when the last one leaves. A
// kind one consumer reads whole and another by its metadata only is
// watched whole: a consumer that asks for metadata reads it through
// meta.Accessor, which a whole object answers too (a metadata informer
// already running is replaced by a whole one once that one has synced).
//
// Every informer's lists and watches go through one watchguard.Guard, so
// that they recover within seconds of the API server's return and are
// reported for /readyz while they cannot reach it.
package kindwatch
