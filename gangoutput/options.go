package gangoutput

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"

	"github.com/kartalua/karta/internal/kindwatch"
	"github.com/kartalua/karta/internal/reconcile"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// FieldManager is the field manager of the gang objects' server-side
// applies.
const FieldManager = "karta-gang-output"

// SwitchAnnotation, "true" or "false" on a Karta (for every workload of
// its kind) or on a workload (for that one), turns the gang output on or
// off regardless of the skip list; the workload's wins over its Karta's.
const SwitchAnnotation = "karta.run.ai/gang-output"

// DefaultResyncPeriod is how often, by default, the informers replay
// every object: each workload is then reconciled again.
const DefaultResyncPeriod = 10 * time.Minute

// DefaultRediscoverPeriod is how often, by default, the controller asks
// discovery again which workload and owner kinds the cluster serves, so
// that a CRD installed after the start is watched.
const DefaultRediscoverPeriod = time.Minute

// DefaultWorkers is how many workloads are reconciled at once by default.
const DefaultWorkers = 2

// Options configure New. Target is required.
type Options struct {
	// Target is the gang scheduler whose objects are written.
	Target podgroups.Target

	// Build are the podgroups options of every object (the queue, the
	// topology gate). AllowNoGroups is always on: a workload's objects
	// that exist without groups are written before its pods.
	Build podgroups.Options

	// Skip are the workload kinds left alone (their operator writes the
	// target's objects itself). Nil: DefaultSkip(Target); empty: none. A
	// SwitchAnnotation on the Karta or the workload overrides it.
	Skip []schema.GroupKind

	// Selector, when set, is a label selector a workload must match to
	// be looked after; the others, and their pods, are left alone.
	Selector string

	// OwnerKinds are the kinds watched (metadata only) to resolve a pod's
	// owner chain, besides the Kartas' own child kinds. Nil:
	// DefaultOwnerKinds. An owner of another kind is read from the API
	// server once and remembered.
	OwnerKinds []schema.GroupVersionKind

	// ServerProbe, when set, asks whether the API server answers (karta
	// controller passes watchguard.ReadyzProbe: GET /readyz): a list or
	// watch the server does not answer waits for it and is retried as soon
	// as it answers, instead of client-go's backoff of up to 30 s. Without
	// it the call retries itself every half second.
	ServerProbe func(ctx context.Context) error

	// WatchFailureBound is how long the server may leave the lists and
	// watches unanswered before Ready fails (default watchguard's, 10 s).
	WatchFailureBound time.Duration

	// Informers, when set, are the process's informers, shared with its
	// other watchers of the same cluster (the metrics exporter): one
	// informer per resource. They guard their lists and watches with
	// their own probe, bound and Registerer (ServerProbe and
	// WatchFailureBound are then unused) and run under the context of
	// their Start. Nil: the controller's own.
	Informers *Informers

	// Logger receives the controller's log records (default: none).
	Logger *slog.Logger

	// Registerer, when set, gets the Prometheus collectors
	// (karta_gang_output_* and karta_pod_webhook_*).
	Registerer prometheus.Registerer

	// Recorder, when set, gets the events written on workloads: the
	// objects written or deleted, and the failures.
	Recorder record.EventRecorder

	// Standby starts the controller without writes: it watches and keeps
	// its caches for the pod webhook; SetLeading(true) starts the writes.
	Standby bool

	// Workers is how many workloads are reconciled at once (default
	// DefaultWorkers).
	Workers int

	// ResyncPeriod is how often the informers replay every object
	// (default DefaultResyncPeriod; negative for never).
	ResyncPeriod time.Duration

	// RediscoverPeriod is how often served kinds are discovered again
	// (default DefaultRediscoverPeriod; negative for never).
	RediscoverPeriod time.Duration

	// References resolves the Kartas' references for the reconciler's
	// and the pod webhook's hook calls: the process's refs.Cache, which
	// the Karta controller's webhook shares (give ReferenceChanged to its
	// OnChange). Nil: every reference is absent, and logged so.
	References interpreter.Resolver

	// Hooks gives what the reconciler and the pod webhook call of a
	// registered Program: by default the Program itself; a server that
	// isolates untrusted Kartas gives their calls in worker processes
	// (isolation.Supervisor.Program).
	Hooks func(*interpreter.Program) Hooks
}

// Informers are the informers of a process, one per resource, which the
// gang output and the metrics exporter of one cluster share
// (Options.Informers).
type Informers = kindwatch.Informers

// Hooks are the calls the gang output makes of a Program.
type Hooks interface {
	podgroups.Hooks
	PlacePod(ctx context.Context, obj, pod *unstructured.Unstructured) (*interpreter.PodPlacement, error)
}

func (o Options) withDefaults() (Options, error) {
	if _, err := podgroups.ParseTarget(string(o.Target)); err != nil {
		return o, fmt.Errorf("gang output: %w", err)
	}
	o.Build.AllowNoGroups = true
	if o.Skip == nil {
		o.Skip = DefaultSkip(o.Target)
	}
	if o.OwnerKinds == nil {
		o.OwnerKinds = DefaultOwnerKinds()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Hooks == nil {
		o.Hooks = func(p *interpreter.Program) Hooks { return p }
	}
	o.ResyncPeriod = reconcile.Period(o.ResyncPeriod, DefaultResyncPeriod)
	o.RediscoverPeriod = reconcile.Period(o.RediscoverPeriod, DefaultRediscoverPeriod)
	return o, nil
}

// DefaultSkip lists the workload kinds whose own operator (or, for KAI,
// KAI's podgrouper) writes target's objects, so the gang output leaves
// them alone unless a SwitchAnnotation says otherwise:
//
//   - kai: the kinds KAI-Scheduler's podgrouper has a grouper of its own
//     for (Kubeflow's PyTorchJob and MPIJob, KubeRay's RayCluster and
//     RayJob, JobSet, LeaderWorkerSet, Knative's Service, Dynamo's
//     DynamoGraphDeployment through Grove);
//   - volcano: Volcano's own Job, and Kubeflow's PyTorchJob and MPIJob,
//     whose operators (training-operator, mpi-operator) write a Volcano
//     PodGroup and link their pods to it when their gang scheduling is
//     on, which it is in a cluster that gangs with Volcano;
//   - coscheduling: Kubeflow's PyTorchJob and MPIJob, whose operators do
//     the same for scheduler-plugins' PodGroup;
//   - workload-api: none (no operator of a built-in writes Workloads).
//
// Kubernetes' own kinds are not on it: they are off unless their Karta
// switches them on (KubernetesKinds). Operators that link their pods
// themselves are also noticed at run time: a workload whose pods name an
// object of the target's kind that karta did not write is left alone.
func DefaultSkip(target podgroups.Target) []schema.GroupKind {
	kubeflow := []schema.GroupKind{{Group: "kubeflow.org", Kind: "PyTorchJob"}, {Group: "kubeflow.org", Kind: "MPIJob"}}
	switch target {
	case podgroups.KAI:
		return append(kubeflow,
			schema.GroupKind{Group: "ray.io", Kind: "RayCluster"},
			schema.GroupKind{Group: "ray.io", Kind: "RayJob"},
			schema.GroupKind{Group: "jobset.x-k8s.io", Kind: "JobSet"},
			schema.GroupKind{Group: "leaderworkerset.x-k8s.io", Kind: "LeaderWorkerSet"},
			schema.GroupKind{Group: "serving.knative.dev", Kind: "Service"},
			schema.GroupKind{Group: "nvidia.com", Kind: "DynamoGraphDeployment"})
	case podgroups.Volcano:
		return append(kubeflow, schema.GroupKind{Group: "batch.volcano.sh", Kind: "Job"})
	case podgroups.Coscheduling:
		return kubeflow
	}
	return []schema.GroupKind{}
}

// KubernetesKinds are Kubernetes' own workload kinds that karta has
// built-in Kartas for. Their built-ins make every pod a gang of one (a
// Job's too, unless KAI's kai.scheduler/batch-min-member says otherwise):
// nothing for a scheduler to hold together, and KAI's podgrouper and
// Volcano's PodGroup controller group such pods themselves. So the gang
// output does not watch them as workloads unless their Karta carries
// SwitchAnnotation "true" (a team's Karta that gangs a Job's pods); they
// stay owner kinds, watched by their metadata, so a JobSet's Jobs still
// lead to the JobSet. A bare Pod is never a workload of the gang output.
func KubernetesKinds() []schema.GroupKind {
	return []schema.GroupKind{
		{Kind: "Pod"},
		{Group: "apps", Kind: "Deployment"},
		{Group: "apps", Kind: "ReplicaSet"},
		{Group: "apps", Kind: "StatefulSet"},
		{Group: "apps", Kind: "DaemonSet"},
		{Group: "batch", Kind: "Job"},
		{Group: "batch", Kind: "CronJob"},
	}
}

// DefaultOwnerKinds are the owners between a pod and its workload that
// most workloads go through: the ReplicaSets of Deployments, StatefulSets
// and Jobs. The Kartas add the child kinds they name.
func DefaultOwnerKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Group: "batch", Version: "v1", Kind: "Job"},
	}
}

// ParseKinds reads kinds written Kind.group (Kind for the core group), as
// --gang-output-skip takes them.
func ParseKinds(list []string) ([]schema.GroupKind, error) {
	out := make([]schema.GroupKind, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		gk := schema.ParseGroupKind(s)
		if gk.Kind == "" || strings.ContainsAny(s, "/ ") {
			return nil, fmt.Errorf("%q is not a kind: write Kind.group, e.g. PyTorchJob.kubeflow.org", s)
		}
		if !slices.Contains(out, gk) {
			out = append(out, gk)
		}
	}
	return out, nil
}

// FormatKinds writes kinds as ParseKinds reads them.
func FormatKinds(kinds []schema.GroupKind) []string {
	out := make([]string, len(kinds))
	for i, gk := range kinds {
		out[i] = gk.String()
	}
	return out
}
