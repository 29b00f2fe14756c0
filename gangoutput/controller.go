package gangoutput

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kartalua/karta/internal/reconcile"
	"github.com/kartalua/karta/internal/watchguard"
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
	// watches guards the informers' lists and watches.
	watches *watchguard.Guard

	started atomic.Bool

	// set is the current watch set: read without a lock (the webhook's hot
	// path), replaced whole under setMu.
	set   atomic.Pointer[watchSet]
	setMu sync.Mutex
	// runCtx is Run's context, for the informers started later.
	runCtx context.Context
	// kick asks Run's loop to discover the watched kinds again.
	kick chan struct{}

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
	switch {
	case dyn == nil:
		return nil, errors.New("gang output: no dynamic client")
	case meta == nil:
		return nil, errors.New("gang output: no metadata client")
	case mapper == nil:
		return nil, errors.New("gang output: no REST mapper")
	case reg == nil:
		return nil, errors.New("gang output: no registry")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	sel, err := labels.Parse(opts.Selector)
	if err != nil {
		return nil, fmt.Errorf("gang output: selector: %w", err)
	}
	c := &Controller{
		dyn: dyn, meta: meta, mapper: mapper, registry: reg, opts: opts, log: opts.Logger, selector: sel,
		skip:     map[schema.GroupKind]bool{},
		live:     newLiveOwners(),
		kick:     make(chan struct{}, 1),
		states:   map[rootKey]string{},
		applied:  map[objectKey]string{},
		reported: map[rootKey]string{},
	}
	for _, gk := range opts.Skip {
		c.skip[gk] = true
	}
	c.set.Store(&watchSet{roots: map[schema.GroupKind]*watch{}, owners: map[schema.GroupKind]*watch{}, targets: map[schema.GroupKind]*watch{}})
	c.loop = reconcile.New("karta-gang-output", c.reconcile, func(k rootKey, err error) {
		c.log.Error("gang output failed; retrying", "workload", k.String(), "err", err)
	})
	c.loop.SetLeading(!opts.Standby)
	if c.watches, err = watchguard.New(watchguard.Options{Probe: opts.ServerProbe, Logger: c.log, Registerer: opts.Registerer,
		Bound: opts.WatchFailureBound}); err != nil {
		return nil, fmt.Errorf("gang output: %w", err)
	}
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.setMu.Lock()
	c.runCtx = ctx
	c.setMu.Unlock()
	if err := c.startFixed(ctx); err != nil {
		return err
	}
	c.syncWatches(ctx, false)

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	set := c.set.Load()
	if !waitSynced(ctx, append(set.targetList(), set.pods)...) {
		return nil // ctx ended first
	}
	wg.Go(func() { c.rediscover(ctx) })
	c.loop.Work(ctx, c.opts.Workers)
	return nil
}

// HasSynced reports whether the caches hold the pods, the target's
// objects and every kind watched at the start (or the kind's list
// failed: a kind the controller may not read does not hold the others
// back; its error is logged).
func (c *Controller) HasSynced() bool {
	set := c.set.Load()
	if set.pods == nil || !set.pods.inf.HasSynced() {
		return false
	}
	for _, w := range set.targets {
		if !w.inf.HasSynced() {
			return false
		}
	}
	// Nil until the first syncWatches has started the workload and owner
	// watches (an empty slice when there are none): the pods' and
	// targets' caches can sync before that.
	if set.initial == nil {
		return false
	}
	for _, w := range set.initial {
		if !w.inf.HasSynced() && !w.failed.Load() {
			return false
		}
	}
	return true
}

// Ready is nil once the caches are synced (HasSynced) and while the API
// server answers their watches, or has not for less than
// Options.WatchFailureBound; else it says why not.
func (c *Controller) Ready() error {
	if !c.HasSynced() {
		return ErrNotSynced
	}
	return c.watches.Err()
}

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
	if w := c.set.Load().roots[gvk.GroupKind()]; w != nil {
		c.requeueWatch(w)
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// requeueAll queues every cached workload.
func (c *Controller) requeueAll() {
	for _, w := range c.set.Load().roots {
		c.requeueWatch(w)
	}
}

func (c *Controller) requeueWatch(w *watch) {
	for _, key := range w.inf.GetStore().ListKeys() {
		ns, name, err := splitKey(key)
		if err == nil {
			c.loop.Add(rootKey{gk: w.gvk.GroupKind(), namespace: ns, name: name})
		}
	}
}
