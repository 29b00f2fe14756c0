package exporter

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/internal/kindwatch"
	"github.com/kartalua/karta/internal/reconcile"
	"github.com/kartalua/karta/interpreter"
)

// DefaultResyncPeriod is how often, by default, the informers replay
// every workload: each is then summarized again.
const DefaultResyncPeriod = 10 * time.Minute

// DefaultRediscoverPeriod is how often, by default, the exporter asks
// discovery again which kinds the cluster serves, so that a CRD installed
// after the start is watched.
const DefaultRediscoverPeriod = time.Minute

// DefaultWorkers is how many workloads are summarized at once by default.
const DefaultWorkers = 2

// Options configure New.
type Options struct {
	// Registerer, when set, gets the exporter's collectors: the workload
	// series (Collector) and its own health series.
	Registerer prometheus.Registerer

	// Logger receives the exporter's log records (default: none).
	Logger *slog.Logger

	// ServerProbe, when set, asks whether the API server answers
	// (watchguard.ReadyzProbe): a list or watch the server does not answer
	// waits for it and is retried as soon as it answers.
	ServerProbe func(ctx context.Context) error

	// WatchFailureBound is how long the server may leave the lists and
	// watches unanswered before Ready fails (default watchguard's, 10 s).
	WatchFailureBound time.Duration

	// Informers, when set, are the process's informers, shared with its
	// other watchers of the same cluster (the gang output): one informer
	// per resource. They guard their lists and watches with their own
	// probe, bound and Registerer (ServerProbe and WatchFailureBound are
	// then unused) and run under the context of their Start. Nil: the
	// exporter's own.
	Informers *Informers

	// OwnerKinds are the kinds watched (metadata only) between pods and
	// workloads besides the described kinds and the Kartas' child kinds.
	// Nil: DefaultOwnerKinds.
	OwnerKinds []schema.GroupVersionKind

	// References resolves the Kartas' references for the hooks (the
	// process's refs.Cache). Nil: every reference is absent.
	References interpreter.Resolver

	// Workers is how many workloads are summarized at once (default
	// DefaultWorkers).
	Workers int

	// ResyncPeriod is how often the informers replay every object
	// (default DefaultResyncPeriod; negative for never).
	ResyncPeriod time.Duration

	// RediscoverPeriod is how often served kinds are discovered again
	// (default DefaultRediscoverPeriod; negative for never).
	RediscoverPeriod time.Duration

	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
}

// Informers are the informers of a process, one per resource, which the
// metrics exporter and the gang output of one cluster share
// (Options.Informers).
type Informers = kindwatch.Informers

// DefaultOwnerKinds are the owners between a pod and its workload that
// most workloads go through and that no built-in describes on its own
// (a Deployment's ReplicaSets and the like are described kinds, watched
// whole).
func DefaultOwnerKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		{Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Group: "batch", Version: "v1", Kind: "Job"},
	}
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.OwnerKinds == nil {
		o.OwnerKinds = DefaultOwnerKinds()
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.ResyncPeriod = reconcile.Period(o.ResyncPeriod, DefaultResyncPeriod)
	o.RediscoverPeriod = reconcile.Period(o.RediscoverPeriod, DefaultRediscoverPeriod)
	return o
}
