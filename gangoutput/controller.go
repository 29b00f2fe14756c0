package gangoutput

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kartalua/karta/internal/kindwatch"
	"github.com/kartalua/karta/internal/reconcile"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// Controller keeps the target's objects in step with the workloads of a
// cluster. Create it with New and start it with Run.
type Controller struct {
	dyn      dynamic.Interface
	meta     metadata.Interface
	mapper   meta.RESTMapper
	registry *interpreter.Registry
	opts     Options
	log      *slog.Logger
	selector labels.Selector
	skip     map[schema.GroupKind]bool
	loop     *reconcile.Loop[rootKey]
	metrics  *metrics
	live     *liveOwners
	// kinds are the watched kinds, on the process's informers; its set is
	// read without a lock (the webhook's hot path).
	kinds *kindwatch.Tracker

	started atomic.Bool

	// mu guards the fields below it.
	mu sync.Mutex
	// states are the workloads' states, for karta_gang_output_workloads.
	states map[rootKey]string
	// applied are the objects applied, by namespace/kind/name: the hash of
	// what was applied, to skip writing it again.
	applied map[objectKey]string
	// reported are the workloads' last event reason and message, so that
	// a state is told once.
	reported map[rootKey]string
}

// rootKey names a workload: its kind (as the registry's watch knows it)
// and namespace/name.
type rootKey struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

func (k rootKey) String() string {
	return k.gk.String() + " " + k.namespace + "/" + k.name
}

// objectKey names a gang object.
type objectKey struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

// New returns a Controller for the registry's workloads. dyn reads the
// workloads and pods and writes the target's objects, meta reads owners,
// mapper maps kinds to resources (a restmapper.DeferredDiscoveryRESTMapper
// is reset before each rediscovery).
func New(dyn dynamic.Interface, meta metadata.Interface, mapper meta.RESTMapper, reg *interpreter.Registry, opts Options) (*Controller, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	kinds, err := kindwatch.NewTracker(dyn, meta, mapper, reg, opts.Informers, kindwatch.Options{Probe: opts.ServerProbe,
		Logger: opts.Logger, Registerer: opts.Registerer, Bound: opts.WatchFailureBound, ResyncCheck: opts.ResyncPeriod})
	if err != nil {
		return nil, fmt.Errorf("gang output: %w", err)
	}
	sel, err := labels.Parse(opts.Selector)
	if err != nil {
		return nil, fmt.Errorf("gang output: selector: %w", err)
	}
	c := &Controller{
		dyn: dyn, meta: meta, mapper: mapper, registry: reg, opts: opts, log: opts.Logger, selector: sel,
		skip:     map[schema.GroupKind]bool{},
		live:     newLiveOwners(),
		kinds:    kinds,
		states:   map[rootKey]string{},
		applied:  map[objectKey]string{},
		reported: map[rootKey]string{},
	}
	for _, gk := range opts.Skip {
		c.skip[gk] = true
	}
	c.loop = reconcile.New("karta-gang-output", c.reconcile, func(k rootKey, err error) {
		c.log.Error("gang output failed; retrying", "workload", k.String(), "err", err)
	})
	c.loop.SetLeading(!opts.Standby)
	if c.metrics, err = newMetrics(c, opts.Registerer); err != nil {
		return nil, err
	}
	return c, nil
}

// Target is the scheduler whose objects the controller writes.
func (c *Controller) Target() podgroups.Target { return c.opts.Target }

// NotServedError is returned by Run when the cluster does not serve a
// kind of the target's objects.
type NotServedError struct {
	Target podgroups.Target
	GVK    schema.GroupVersionKind
}

func (e *NotServedError) Error() string {
	hint := "is its CRD installed?"
	if e.Target == podgroups.WorkloadAPI {
		hint = "it needs Kubernetes 1.37 with the GenericWorkload feature gate and --runtime-config=" + e.GVK.GroupVersion().String() + "=true"
	}
	return fmt.Sprintf("gang output %s: the cluster does not serve %s, Kind=%s (%s)", e.Target, e.GVK.GroupVersion(), e.GVK.Kind, hint)
}

// Run watches until ctx ends, then returns nil once the workers have
// finished. It fails at once with a *NotServedError when the cluster does
// not serve the target's kinds. Run may be called once.
func (c *Controller) Run(ctx context.Context) error {
	if c.started.Swap(true) {
		return errors.New("gang output: Run called twice")
	}
	defer c.loop.ShutDown()
	return c.kinds.Run(ctx, c.opts.RediscoverPeriod, func(ctx context.Context) error {
		if err := c.startFixed(ctx); err != nil {
			return err
		}
		c.syncWatches(false)
		set := c.kinds.Load()
		if !waitSynced(ctx, append(slices.Collect(maps.Values(set.Fixed)), set.Pods)...) {
			return ctx.Err() // ctx ended first
		}
		return nil
	}, c.syncWatches, func(ctx context.Context) { c.loop.Work(ctx, c.opts.Workers) })
}

// HasSynced reports whether the caches hold the pods, the target's
// objects and every kind watched at the start (or the kind's list
// failed: a kind the controller may not read does not hold the others
// back; its error is logged).
func (c *Controller) HasSynced() bool { return c.kinds.Load().Synced() }

// Ready is nil once the caches are synced (HasSynced) and while the API
// server answers their watches, or has not for less than
// Options.WatchFailureBound; else it says why not.
func (c *Controller) Ready() error { return c.kinds.Ready(ErrNotSynced) }

// ErrNotSynced is Ready's error before the caches are synced.
var ErrNotSynced = errors.New("the gang output's caches are not synced yet")

// Leading reports whether the controller writes.
func (c *Controller) Leading() bool { return c.loop.Leading() }

// SetLeading starts or stops the writes. Starting them requeues every
// workload.
func (c *Controller) SetLeading(leading bool) {
	if !c.loop.SetLeading(leading) {
		return
	}
	c.requeueAll()
}

// KindChanged tells the controller that the registry's Program for gvk
// changed (p, nil when the kind has none left): its workloads are
// reconciled again and the watched kinds discovered again. It is quick
// and does not block: give it to controller.Options.OnChange.
func (c *Controller) KindChanged(gvk schema.GroupVersionKind, _ *interpreter.Program) {
	if w := c.kinds.Load().Roots[gvk.GroupKind()]; w != nil {
		c.requeueWatch(w)
	}
	c.kinds.Kick()
}

// requeueAll queues every cached workload.
func (c *Controller) requeueAll() {
	for _, w := range c.kinds.Load().Roots {
		c.requeueWatch(w)
	}
}

func (c *Controller) requeueWatch(w *kindwatch.Watch) {
	gk := w.GVK.GroupKind()
	kindwatch.EachKey(w, func(ns, name string) { c.loop.Add(rootKey{gk: gk, namespace: ns, name: name}) })
}
