package gangoutput

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kartalua/karta/internal/kindwatch"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// The states of a workload (karta_gang_output_workloads).
const (
	// stateWritten: the objects are written and in step.
	stateWritten = "written"
	// stateWaiting: nothing to write yet (its groups form from pods, and
	// none has been placed).
	stateWaiting = "waiting"
	// stateSkipped: left alone by the skip list or a SwitchAnnotation.
	stateSkipped = "skipped"
	// stateNested: it belongs to another workload a Karta describes.
	stateNested = "nested"
	// stateForeign: its pods are linked to objects karta did not write.
	stateForeign = "foreign"
	// stateFailed: its objects could not be built or written.
	stateFailed = "failed"
)

var workloadStates = []string{stateWritten, stateWaiting, stateSkipped, stateNested, stateForeign, stateFailed}

// The event reasons on workloads.
const (
	// ReasonWritten: gang objects were created or updated.
	ReasonWritten = "GangObjectsWritten"
	// ReasonDeleted: gang objects were deleted (their groups are gone,
	// or the workload is left alone now).
	ReasonDeleted = "GangObjectsDeleted"
	// ReasonLeftAlone: the workload's pods are linked to objects of the
	// target's kind that karta did not write.
	ReasonLeftAlone = "GangOutputLeftAlone"
	// ReasonFailed: the objects could not be built or written.
	ReasonFailed = "GangOutputFailed"
)

// reconcile brings the objects of one workload in step with it.
func (c *Controller) reconcile(ctx context.Context, k rootKey) error {
	set := c.kinds.Load()
	w := set.Roots[k.gk]
	var obj *unstructured.Unstructured
	if w != nil {
		obj, _ = w.Get(k.namespace, k.name).(*unstructured.Unstructured)
	}
	if obj == nil {
		// Gone: the garbage collector deletes its objects (they are owned
		// by it); no longer watched: what was written stays with it.
		c.forget(k)
		return nil
	}
	if !c.loop.Leading() {
		return nil
	}
	if !c.selector.Empty() && !c.selector.Matches(labels.Set(obj.GetLabels())) {
		c.forget(k)
		return nil
	}
	p, ok := c.registry.Get(w.GVK)
	if !ok || !podgroups.HasGangInstructions(p.Karta()) {
		return c.leave(ctx, k, obj, "", "")
	}
	// Nested first: a workload another one owns (a JobSet's Job) is that
	// one's part, whatever the skip list says of its kind.
	parent, err := c.rootOf(ctx, obj.GetNamespace(), obj.GetOwnerReferences(), true)
	if err != nil {
		return c.failed(k, obj, fmt.Errorf("reading the workload's owners: %w", err))
	}
	if parent != nil {
		return c.leave(ctx, k, obj, stateNested, fmt.Sprintf("it belongs to %s %s, whose Karta gangs its pods", parent.obj.GetKind(), parent.obj.GetName()))
	}
	if on, why := c.enabled(p, obj); !on {
		return c.leave(ctx, k, obj, stateSkipped, why)
	}
	pods, err := c.podsOf(ctx, set, obj)
	if err != nil {
		return c.failed(k, obj, err)
	}
	hookCtx, logReferences := c.withReferences(ctx, k.String())
	res, err := podgroups.ForProgram(hookCtx, c.opts.Hooks(p), obj, pods, c.opts.Target, c.opts.Build)
	logReferences()
	if err != nil {
		var invalid *podgroups.InvalidError
		if errors.As(err, &invalid) {
			// Refused whatever the retries: the next change of the
			// workload, its pods or its Karta tries again.
			_ = c.failed(k, obj, err)
			return nil
		}
		return c.failed(k, obj, err)
	}
	ours := c.ours(set, obj)
	if who := c.foreign(set, pods, ours, res); who != "" {
		return c.leave(ctx, k, obj, stateForeign, who)
	}
	written, err := c.applyAll(ctx, set, res.Objects)
	if err != nil {
		return c.failed(k, obj, err)
	}
	want := map[objectKey]bool{}
	for _, o := range res.Objects {
		want[keyOf(o)] = true
	}
	var stale []*unstructured.Unstructured
	for _, o := range ours {
		if !want[keyOf(o)] {
			stale = append(stale, o)
		}
	}
	deleted, err := c.deleteAll(ctx, stale)
	if err != nil {
		return c.failed(k, obj, err)
	}
	state := stateWritten
	if len(res.Objects) == 0 {
		state = stateWaiting
	}
	c.setState(k, state)
	c.tell(k, obj, "", "")
	if len(written) > 0 {
		c.event(obj, corev1.EventTypeNormal, ReasonWritten, "%s %s", c.opts.Target, strings.Join(written, ", "))
	}
	if len(deleted) > 0 {
		c.event(obj, corev1.EventTypeNormal, ReasonDeleted, "%s (their groups are gone)", strings.Join(deleted, ", "))
	}
	if len(written)+len(deleted) > 0 {
		c.log.Info("gang output", "workload", k.String(), "written", written, "deleted", deleted, "warnings", res.Warnings)
	}
	return nil
}

// enabled decides whether the workload's objects are written: its
// SwitchAnnotation, else its Karta's, else the skip list.
func (c *Controller) enabled(p *interpreter.Program, obj *unstructured.Unstructured) (bool, string) {
	for _, from := range []struct {
		what string
		ann  map[string]string
	}{{"the workload's", obj.GetAnnotations()}, {fmt.Sprintf("Karta %q's", p.Name()), p.Karta().Annotations}} {
		switch v := from.ann[SwitchAnnotation]; v {
		case "true":
			return true, ""
		case "false":
			return false, fmt.Sprintf("%s annotation %s is \"false\"", from.what, SwitchAnnotation)
		case "":
		default:
			c.log.Warn("gang output: ignoring an annotation that is neither \"true\" nor \"false\"", "annotation", SwitchAnnotation, "value", v, "on", from.what)
		}
	}
	gk := obj.GroupVersionKind().GroupKind()
	if c.skip[gk] {
		return false, fmt.Sprintf("%s is on the skip list (--gang-output-skip)", gk)
	}
	return true, ""
}

// podsOf are the pods whose topmost workload is obj.
func (c *Controller) podsOf(ctx context.Context, set *kindwatch.Set, obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, pod := range cachedPods(set, obj.GetNamespace()) {
		if controllerOf(pod.GetOwnerReferences()) == nil {
			continue
		}
		h, err := c.rootOf(ctx, pod.GetNamespace(), pod.GetOwnerReferences(), true)
		var ce *chainError
		if errors.As(err, &ce) && ce.err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", pod.GetNamespace(), pod.GetName(), err)
		}
		// A chain through an object not cached (yet) is another
		// workload's, or this one's pending: its cache event queues it.
		if h != nil && h.obj.GetUID() == obj.GetUID() {
			out = append(out, pod)
		}
	}
	return out, nil
}

// ours are the objects of the target's kinds karta wrote for obj.
func (c *Controller) ours(set *kindwatch.Set, obj *unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, w := range set.Fixed {
		for _, m := range kindwatch.ByOwner(w, obj.GetUID()) {
			if u, ok := m.(*unstructured.Unstructured); ok && managed(u) {
				out = append(out, u)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

func managed(o metav1.Object) bool { return o.GetLabels()[podgroups.ManagedByLabel] == "karta" }

// foreign names a pod linked to an object of the target's kinds that
// exists and that karta did not write, "" when there is none.
func (c *Controller) foreign(set *kindwatch.Set, pods, ours []*unstructured.Unstructured, res *podgroups.Result) string {
	mine := map[string]bool{}
	for _, o := range append(append([]*unstructured.Unstructured{}, ours...), res.Objects...) {
		mine[o.GetName()] = true
	}
	for _, pod := range pods {
		name, linked := podgroups.LinkOf(c.opts.Target, pod)
		if !linked || mine[name] {
			continue
		}
		for _, w := range set.Fixed {
			if w.GVK.Kind != "PodGroup" {
				continue
			}
			if o, ok := w.Get(pod.GetNamespace(), name).(*unstructured.Unstructured); ok && !managed(o) {
				return fmt.Sprintf("its pod %s is linked to %s %s, which karta did not write", pod.GetName(), o.GetKind(), name)
			}
		}
	}
	return ""
}

// leave deletes what karta wrote for a workload that is left alone, and
// records why (state "" for a workload whose Karta has no gang
// instructions: it is not counted).
func (c *Controller) leave(ctx context.Context, k rootKey, obj *unstructured.Unstructured, state, why string) error {
	deleted, err := c.deleteAll(ctx, c.ours(c.kinds.Load(), obj))
	if err != nil {
		return c.failed(k, obj, err)
	}
	if state == "" {
		c.forget(k)
	} else {
		c.setState(k, state)
	}
	if state == stateForeign {
		c.tell(k, obj, ReasonLeftAlone, why)
	}
	if len(deleted) > 0 {
		if why == "" {
			why = "its Karta has no gang instructions"
		}
		c.log.Info("gang output: left alone", "workload", k.String(), "deleted", deleted, "why", why)
		c.event(obj, corev1.EventTypeNormal, ReasonDeleted, "%s (left alone: %s)", strings.Join(deleted, ", "), why)
	}
	return nil
}

// failed records a failure on the workload and returns err, for a retry.
func (c *Controller) failed(k rootKey, obj *unstructured.Unstructured, err error) error {
	c.setState(k, stateFailed)
	c.metrics.errors.WithLabelValues(errorReason(err)).Inc()
	c.event(obj, corev1.EventTypeWarning, ReasonFailed, "%s: %v", c.opts.Target, err)
	return err
}

// errorReason is the reason label of karta_gang_output_errors_total.
func errorReason(err error) string {
	var invalid *podgroups.InvalidError
	var write *writeError
	var chain *chainError
	var hook *interpreter.HookError
	switch {
	case errors.As(err, &invalid):
		return "invalid"
	case errors.As(err, &write):
		return write.op
	case errors.As(err, &chain):
		return "owners"
	case errors.As(err, &hook):
		return "hook"
	}
	return "other"
}

// applyAll applies the objects server-side, skipping those already as
// applied, and names those it wrote (Kind/name).
func (c *Controller) applyAll(ctx context.Context, set *kindwatch.Set, objs []*unstructured.Unstructured) ([]string, error) {
	var written []string
	for _, o := range objs {
		key := keyOf(o)
		w := set.Fixed[key.gk]
		if w == nil {
			return written, fmt.Errorf("%s is not a kind of target %s", o.GroupVersionKind(), c.opts.Target)
		}
		sum := hash(o)
		cached, _ := w.Get(key.namespace, key.name).(*unstructured.Unstructured)
		c.mu.Lock()
		same := c.applied[key] == sum
		c.mu.Unlock()
		// Applied already, and still so: in the cache, or not there yet
		// (a delete clears applied, see changed).
		if same && (cached == nil || covers(cached.Object, o.Object)) {
			continue
		}
		op := "update"
		if cached == nil {
			op = "create"
		}
		_, err := c.dyn.Resource(w.GVR).Namespace(key.namespace).Apply(ctx, key.name, o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if apierrors.IsInvalid(err) && cached != nil {
			// A field that cannot change did (a template of a Karta that
			// changed, a priority class known only once groups are):
			// the object is made anew.
			if err = c.recreate(ctx, w, cached, o); err == nil {
				op = "recreate"
			}
		}
		if err != nil {
			return written, &writeError{op: "apply", kind: o.GetKind(), name: key.name, err: err}
		}
		c.mu.Lock()
		c.applied[key] = sum
		c.mu.Unlock()
		c.metrics.writes.WithLabelValues(o.GetKind(), op).Inc()
		written = append(written, o.GetKind()+"/"+key.name)
	}
	return written, nil
}

// recreate deletes cached and creates o in its place.
func (c *Controller) recreate(ctx context.Context, w *kindwatch.Watch, cached, o *unstructured.Unstructured) error {
	uid := cached.GetUID()
	err := c.dyn.Resource(w.GVR).Namespace(cached.GetNamespace()).Delete(ctx, cached.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	_, err = c.dyn.Resource(w.GVR).Namespace(o.GetNamespace()).Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}

// deleteAll deletes the objects and names those it deleted.
func (c *Controller) deleteAll(ctx context.Context, objs []*unstructured.Unstructured) ([]string, error) {
	var deleted []string
	set := c.kinds.Load()
	for _, o := range objs {
		key := keyOf(o)
		w := set.Fixed[key.gk]
		if w == nil {
			continue
		}
		uid := o.GetUID()
		err := c.dyn.Resource(w.GVR).Namespace(key.namespace).Delete(ctx, key.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return deleted, &writeError{op: "delete", kind: o.GetKind(), name: key.name, err: err}
		}
		c.mu.Lock()
		delete(c.applied, key)
		c.mu.Unlock()
		if err == nil {
			c.metrics.writes.WithLabelValues(o.GetKind(), "delete").Inc()
			deleted = append(deleted, o.GetKind()+"/"+key.name)
		}
	}
	return deleted, nil
}

// writeError is a write the API server refused.
type writeError struct {
	op, kind, name string
	err            error
}

func (e *writeError) Error() string {
	return fmt.Sprintf("%s of %s %s: %v", e.op, e.kind, e.name, e.err)
}

func (e *writeError) Unwrap() error { return e.err }

func keyOf(o *unstructured.Unstructured) objectKey {
	return objectKey{gk: o.GroupVersionKind().GroupKind(), namespace: o.GetNamespace(), name: o.GetName()}
}

// hash fingerprints an object as applied.
func hash(o *unstructured.Unstructured) string {
	data, _ := json.Marshal(o.Object) // maps marshal with sorted keys
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// covers reports whether have holds every field of want with its value
// (maps may hold more; lists match item by item).
func covers(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !covers(h[k], v) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !covers(h[i], w[i]) {
				return false
			}
		}
		return true
	case int64:
		return number(have) == float64(w)
	case float64:
		return number(have) == w
	}
	return have == want
}

// number reads a JSON number decoded as int64 or float64; NaN otherwise.
func number(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	case int:
		return float64(n)
	case int32:
		return float64(n)
	}
	return nan
}

var nan = func() float64 { var z float64; return z / z }()

// setState records a workload's state, and logs a change.
func (c *Controller) setState(k rootKey, state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.states[k] != state {
		c.log.Info("gang output: workload", "workload", k.String(), "state", state)
	}
	c.states[k] = state
	c.countStates()
}

// forget drops what is known of a workload.
func (c *Controller) forget(k rootKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.states, k)
	delete(c.reported, k)
	c.countStates()
}

// countStates sets karta_gang_output_workloads. Called with mu held.
func (c *Controller) countStates() {
	counts := map[string]int{}
	for _, s := range c.states {
		counts[s]++
	}
	for _, s := range workloadStates {
		c.metrics.workloads.WithLabelValues(s).Set(float64(counts[s]))
	}
}

// tell writes an event once per change of what there is to tell ("": nothing).
func (c *Controller) tell(k rootKey, obj *unstructured.Unstructured, reason, message string) {
	c.mu.Lock()
	said := c.reported[k]
	c.reported[k] = reason + ": " + message
	c.mu.Unlock()
	if reason != "" && said != reason+": "+message {
		c.event(obj, corev1.EventTypeNormal, reason, "%s", message)
	}
}

// event records an event on obj, when there is a recorder.
func (c *Controller) event(obj *unstructured.Unstructured, typ, reason, format string, args ...any) {
	if c.opts.Recorder != nil {
		c.opts.Recorder.Eventf(obj, typ, reason, format, args...)
	}
}
