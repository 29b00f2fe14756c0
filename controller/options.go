package controller

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsclientv1 "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/internal/watchguard"
	"github.com/kartalua/karta/interpreter"
)

// DefaultResyncPeriod is how often, by default, the informers replay every
// Karta. A replay of an unchanged Karta compiles nothing and writes
// nothing, unless someone else changed its conditions: then they are
// written back.
const DefaultResyncPeriod = 10 * time.Minute

// DefaultWorkers is how many Kartas are reconciled at once by default.
const DefaultWorkers = 2

// DefaultLimitInterval is how often, by default, the controller reads the
// registered Programs' limit errors (interpreter.Program.LimitStats) and
// reports them in the Evaluating condition.
const DefaultLimitInterval = time.Minute

// DefaultWatchFailureBound is how long, by default, the API server may
// leave the Kartas' watches unanswered before Ready fails: an API server's
// restart (a few seconds) does not flip readiness, an outage does.
const DefaultWatchFailureBound = watchguard.DefaultBound

// FieldManager is the field manager of the controller's status writes.
const FieldManager = "karta-controller"

// Options configure New. The zero value gives the defaults.
type Options struct {
	// Compile are the options every Karta is compiled with (limits, pool
	// size).
	Compile interpreter.Options

	// Discovery, when set, lets Run check that the Karta CRD is installed
	// (failing with a *CRDNotInstalledError instead of waiting forever for
	// a cache that cannot sync) and find out whether the cluster also
	// serves the legacy optimization.nvidia.com/v1alpha1
	// resourceinterfaces, which are then watched too. Without it only
	// run.ai/v1alpha1 kartas are watched.
	Discovery Discoverer

	// CRDs, when set, lets the controller check every accepted Karta
	// against the openAPIV3Schema of the CRD its kind is served from
	// (karta/schemacheck, as karta validate --live does) and report it in
	// the SchemaChecked condition. The CRD is found through Discovery when
	// it is set. A CRD change shows at the next reconcile of the Karta
	// (its next change, or the resync).
	CRDs apiextensionsclientv1.CustomResourceDefinitionInterface

	// LabelSelector, when set, restricts the controller to the Kartas
	// whose labels match it (e.g. "karta.run.ai/shard=a"); the others are
	// neither registered nor written to, and take no part in conflicts.
	LabelSelector string

	// Logger receives the controller's log records (default: none).
	Logger *slog.Logger

	// Registerer, when set, gets the controller's Prometheus collectors
	// (karta_controller_*).
	Registerer prometheus.Registerer

	// OnChange is called after the registry's Program for a kind changed,
	// with the Program now registered (nil when the kind has none left).
	// Calls are made one at a time, in the order of the changes, from the
	// controller's workers: keep them short.
	OnChange func(gvk schema.GroupVersionKind, p *interpreter.Program)

	// Standby starts the controller without writing status: it still
	// watches, compiles and updates the registry. SetLeading(true) starts
	// the writes (leader election).
	Standby bool

	// Workers is how many Kartas are reconciled at once (default
	// DefaultWorkers).
	Workers int

	// ResyncPeriod is how often the informers replay every Karta (default
	// DefaultResyncPeriod; negative for never).
	ResyncPeriod time.Duration

	// ServerProbe, when set, asks whether the API server answers (karta
	// controller passes watchguard.ReadyzProbe: GET /readyz). While the
	// server does not answer a list or watch, the call waits for a probe
	// to succeed, made every half second, and is retried at once: a change
	// made after the server's return is seen within seconds, not after
	// client-go's backoff of up to 30 s. Without it the call retries
	// itself every half second.
	ServerProbe func(ctx context.Context) error

	// WatchFailureBound is how long the server may leave the Kartas'
	// lists and watches unanswered before Ready fails (default
	// DefaultWatchFailureBound).
	WatchFailureBound time.Duration

	// LimitInterval is how often the controller reads the limit errors of
	// the Kartas' registered Programs (calls made in this process: the
	// webhook of `karta controller --serve`, an embedder) and reports them
	// in each Karta's Evaluating condition (default DefaultLimitInterval;
	// negative for never, and then no Evaluating condition is written).
	LimitInterval time.Duration
	// LimitStats reads a Program's limit errors for the Evaluating
	// condition (default Program.LimitStats). An adapter that runs some
	// Programs' calls elsewhere — isolation.Supervisor.LimitStats, whose
	// workers' failures count as limit errors — gives its own.
	LimitStats func(*interpreter.Program) interpreter.LimitStats
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	switch {
	case o.ResyncPeriod == 0:
		o.ResyncPeriod = DefaultResyncPeriod
	case o.ResyncPeriod < 0:
		o.ResyncPeriod = 0
	}
	if o.LimitStats == nil {
		o.LimitStats = (*interpreter.Program).LimitStats
	}
	switch {
	case o.LimitInterval == 0:
		o.LimitInterval = DefaultLimitInterval
	case o.LimitInterval < 0:
		o.LimitInterval = 0
	}
	return o
}
