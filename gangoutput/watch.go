package gangoutput

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/internal/watchguard"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/podgroups"
)

// role is what a watched kind is to the controller.
type role string

const (
	roleWorkload role = "workload" // a kind a Karta with gang instructions describes
	roleOwner    role = "owner"    // between pods and workloads (metadata only)
	rolePods     role = "pods"
	roleTarget   role = "target" // the target's objects
)

// ownerIndex indexes objects by the uid of their controller.
const ownerIndex = "karta-controller-uid"

// podGVR is core v1 pods.
var podGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// watch is one watched kind and its informer.
type watch struct {
	role       role
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
	inf        cache.SharedIndexInformer
	cancel     context.CancelFunc
	// failed is set when the informer's list or watch failed (forbidden,
	// not served): HasSynced does not wait for it.
	failed atomic.Bool
}

// watchSet is what is watched. It is never modified once stored: a change
// stores a new one (the webhook reads it without a lock).
type watchSet struct {
	// roots and owners are by group and kind: an owner reference names
	// its version, which need not be the one watched.
	roots, owners map[schema.GroupKind]*watch
	pods          *watch
	targets       map[schema.GroupKind]*watch
	// initial are the workload and owner kinds of the first discovery.
	initial []*watch
}

func (s *watchSet) targetList() []*watch {
	out := make([]*watch, 0, len(s.targets))
	for _, w := range s.targets {
		out = append(out, w)
	}
	return out
}

// get is the cached object namespace/name, nil when the cache has none.
func (w *watch) get(namespace, name string) any {
	key := name
	if w.namespaced {
		key = namespace + "/" + name
	}
	obj, ok, err := w.inf.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil
	}
	return obj
}

// startFixed starts the informers of the pods and the target's objects,
// which never change; the target's kinds must be served.
func (c *Controller) startFixed(ctx context.Context) error {
	var targets []*watch
	for _, gvk := range c.opts.Build.Kinds(c.opts.Target) {
		m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			return &NotServedError{Target: c.opts.Target, GVK: gvk}
		}
		if err != nil {
			return fmt.Errorf("gang output: discovering %s: %w", gvk, err)
		}
		targets = append(targets, &watch{role: roleTarget, gvk: gvk, gvr: m.Resource, namespaced: true})
	}
	pods := &watch{role: rolePods, gvk: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, gvr: podGVR, namespaced: true}
	c.setMu.Lock()
	defer c.setMu.Unlock()
	next := c.set.Load().clone()
	next.pods = c.start(ctx, pods)
	for _, w := range targets {
		next.targets[w.gvk.GroupKind()] = c.start(ctx, w)
	}
	c.set.Store(next)
	return nil
}

func (s *watchSet) clone() *watchSet {
	n := &watchSet{roots: map[schema.GroupKind]*watch{}, owners: map[schema.GroupKind]*watch{}, targets: map[schema.GroupKind]*watch{},
		pods: s.pods, initial: s.initial}
	for k, v := range s.roots {
		n.roots[k] = v
	}
	for k, v := range s.owners {
		n.owners[k] = v
	}
	for k, v := range s.targets {
		n.targets[k] = v
	}
	return n
}

// start creates w's informer, with its event handler, and runs it until
// ctx ends or w.cancel is called.
func (c *Controller) start(ctx context.Context, w *watch) *watch {
	resync := c.opts.ResyncPeriod
	if w.role != roleWorkload {
		resync = 0 // the workloads' resync reconciles everything
	}
	o := watchguard.InformerOptions{Resource: w.gvr, Resync: resync, Failed: &w.failed,
		Indexers: cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, ownerIndex: controllerUIDIndex}}
	// An owner kind's objects by their metadata (their lists and watches
	// guarded by c.watches: internal/watchguard).
	if w.role == roleOwner {
		o.Metadata = c.meta
	} else {
		o.Dynamic = c.dyn
	}
	w.inf = c.watches.Informer(o)
	if _, err := w.inf.AddEventHandler(c.handler(w)); err != nil {
		c.log.Error("gang output: cannot handle events", "resource", w.gvr.GroupResource().String(), "err", err)
	}
	ctx, w.cancel = context.WithCancel(ctx)
	go w.inf.RunWithContext(ctx)
	c.log.Info("gang output: watching", "resource", w.gvr.GroupResource().String(), "role", string(w.role))
	return w
}

// controllerUIDIndex indexes an object by its controller's uid.
func controllerUIDIndex(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// waitSynced waits for the informers' first lists; false when ctx ended
// first.
func waitSynced(ctx context.Context, ws ...*watch) bool {
	synced := make([]cache.InformerSynced, 0, len(ws))
	for _, w := range ws {
		if w != nil {
			synced = append(synced, w.inf.HasSynced)
		}
	}
	return cache.WaitForCacheSync(ctx.Done(), synced...)
}

// rediscover discovers the watched kinds again every RediscoverPeriod and
// whenever KindChanged asks.
func (c *Controller) rediscover(ctx context.Context) {
	var tick <-chan time.Time
	if c.opts.RediscoverPeriod > 0 {
		t := time.NewTicker(c.opts.RediscoverPeriod)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			c.syncWatches(ctx, true)
		case <-c.kick:
			c.syncWatches(ctx, false)
		}
	}
}

// kindWant is a kind to watch, mapped to its resource.
type kindWant struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
}

// WatchedAsWorkload says whether the gang output watches the workloads
// of k's kind (as well as having gang instructions, which it needs too):
// not Pods, and not Kubernetes' other kinds unless k switches them on
// (KubernetesKinds says why). The chart's RBAC follows it.
func WatchedAsWorkload(k *karta.Karta) bool {
	if k == nil {
		return false
	}
	root := k.Spec.StructureDefinition.RootComponent
	if root == nil || root.Kind == nil {
		return false
	}
	gk := root.Kind.GVK().GroupKind()
	if gk == podGVK.GroupKind() {
		return false
	}
	return !isKubernetesKind(gk) || k.Annotations[SwitchAnnotation] == "true"
}

func isKubernetesKind(gk schema.GroupKind) bool {
	for _, k := range KubernetesKinds() {
		if k == gk {
			return true
		}
	}
	return false
}

// syncWatches watches the workload kinds the registry has gang
// instructions for and the owner kinds, as far as the cluster serves
// them; reset asks discovery afresh first.
func (c *Controller) syncWatches(ctx context.Context, reset bool) {
	if r, ok := c.mapper.(meta.ResettableRESTMapper); ok && reset {
		r.Reset()
	}
	roots := map[schema.GroupKind]kindWant{}
	var ownerKinds []schema.GroupVersionKind
	for _, e := range c.registry.Entries() {
		p, err := c.registry.Lookup(e.GVK)
		if err != nil || p == nil || !podgroups.HasGangInstructions(p.Karta()) || !WatchedAsWorkload(p.Karta()) {
			continue
		}
		k, ok := c.mapKind(e.GVK)
		if !ok {
			continue
		}
		if !k.namespaced {
			c.log.Warn("gang output: a cluster-scoped workload kind has no namespace for its gang objects; left alone", "kind", e.GVK.String())
			continue
		}
		if prev, ok := roots[e.GVK.GroupKind()]; ok && !c.preferred(k.gvk, prev.gvk) {
			// Two Kartas for two versions of a kind the cluster serves
			// both of (one CRD): the version it prefers is watched.
			continue
		}
		roots[e.GVK.GroupKind()] = k
		ownerKinds = append(ownerKinds, p.Karta().Spec.StructureDefinition.ChildKinds()...)
	}
	owners := map[schema.GroupKind]kindWant{}
	for _, gvk := range append(ownerKinds, c.opts.OwnerKinds...) {
		gk := gvk.GroupKind()
		if _, isRoot := roots[gk]; isRoot || gk == podGVK.GroupKind() {
			continue
		}
		if _, done := owners[gk]; done {
			continue
		}
		if k, ok := c.mapKind(gvk); ok {
			owners[gk] = k
		}
	}

	c.setMu.Lock()
	defer c.setMu.Unlock()
	if c.runCtx == nil || c.runCtx.Err() != nil {
		return
	}
	cur := c.set.Load()
	next := cur.clone()
	var added []*watch
	update := func(have map[schema.GroupKind]*watch, want map[schema.GroupKind]kindWant, r role) {
		for gk, w := range have {
			if k, ok := want[gk]; !ok || k.gvr != w.gvr {
				w.cancel()
				delete(have, gk)
				c.log.Info("gang output: no longer watching", "resource", w.gvr.GroupResource().String(), "role", string(r))
			}
		}
		for _, gk := range sortedKinds(want) {
			if _, ok := have[gk]; ok {
				continue
			}
			k := want[gk]
			w := c.start(c.runCtx, &watch{role: r, gvk: k.gvk, gvr: k.gvr, namespaced: k.namespaced})
			have[gk] = w
			added = append(added, w)
		}
	}
	update(next.roots, roots, roleWorkload)
	update(next.owners, owners, roleOwner)
	if next.initial == nil {
		next.initial = added
		if next.initial == nil {
			next.initial = []*watch{}
		}
	}
	c.set.Store(next)
	c.metrics.kinds.WithLabelValues(string(roleWorkload)).Set(float64(len(next.roots)))
	c.metrics.kinds.WithLabelValues(string(roleOwner)).Set(float64(len(next.owners)))
}

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

func sortedKinds(m map[schema.GroupKind]kindWant) []schema.GroupKind {
	out := make([]schema.GroupKind, 0, len(m))
	for gk := range m {
		out = append(out, gk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// preferred reports whether the cluster prefers a's version of a kind to
// b's (its preferred version, else the newer by Kubernetes' ordering).
func (c *Controller) preferred(a, b schema.GroupVersionKind) bool {
	if m, err := c.mapper.RESTMapping(a.GroupKind()); err == nil {
		if m.GroupVersionKind.Version == a.Version || m.GroupVersionKind.Version == b.Version {
			return m.GroupVersionKind.Version == a.Version
		}
	}
	return version.CompareKubeAwareVersionStrings(a.Version, b.Version) > 0
}

// mapKind maps gvk to its resource; false when the cluster does not serve
// it (or discovery failed, which is logged).
func (c *Controller) mapKind(gvk schema.GroupVersionKind) (kindWant, bool) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if !meta.IsNoMatchError(err) {
			c.log.Warn("gang output: cannot map a kind", "kind", gvk.String(), "err", err)
		}
		return kindWant{}, false
	}
	return kindWant{gvk: gvk, gvr: m.Resource, namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}, true
}

// handler queues the workloads an event of w's informer concerns.
func (c *Controller) handler(w *watch) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.changed(w, nil, obj, true) },
		UpdateFunc: func(old, obj any) {
			if w.role == rolePods && !podChanged(old, obj) {
				return
			}
			c.changed(w, old, obj, false)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok && w.role == roleTarget {
				c.mu.Lock()
				delete(c.applied, keyOf(u)) // to be written again
				c.mu.Unlock()
			}
			c.changed(w, nil, obj, false)
		},
	}
}

// changed queues what an object's change concerns: a workload itself
// (and, when it is added, the workloads under it, which it may own); the
// workload of a pod; the workload a target object belongs to; and, when a
// workload or an owner is added, the workloads of the pods under it,
// which may not have resolved before it was cached.
func (c *Controller) changed(w *watch, old, obj any, added bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	set := c.set.Load()
	switch w.role {
	case roleWorkload, roleOwner:
		if w.role == roleWorkload {
			c.loop.Add(rootKey{gk: w.gvk.GroupKind(), namespace: m.GetNamespace(), name: m.GetName()})
		}
		if !added {
			return
		}
		for _, r := range set.roots {
			for _, child := range byOwner(r, m.GetUID()) {
				c.loop.Add(rootKey{gk: r.gvk.GroupKind(), namespace: child.GetNamespace(), name: child.GetName()})
			}
		}
		// The pods (through owners) under it.
		frontier := []metav1.Object{m}
		for depth := 0; depth < maxOwnerDepth && len(frontier) > 0; depth++ {
			var next []metav1.Object
			for _, o := range frontier {
				for _, pod := range byOwner(set.pods, o.GetUID()) {
					c.queuePod(pod)
				}
				for _, ow := range set.owners {
					next = append(next, byOwner(ow, o.GetUID())...)
				}
			}
			frontier = next
		}
	case rolePods:
		c.queuePod(m)
		if old != nil {
			if om, err := meta.Accessor(old); err == nil && !reflect.DeepEqual(om.GetOwnerReferences(), m.GetOwnerReferences()) {
				c.queuePod(om)
			}
		}
	case roleTarget:
		if m.GetLabels()[podgroups.ManagedByLabel] != "karta" {
			return
		}
		if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
			if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
				gk := gv.WithKind(ref.Kind).GroupKind()
				if _, ok := set.roots[gk]; ok {
					c.loop.Add(rootKey{gk: gk, namespace: m.GetNamespace(), name: ref.Name})
				}
			}
		}
	}
}

// queuePod queues the workload of a pod.
func (c *Controller) queuePod(pod metav1.Object) {
	h, err := c.rootOf(context.Background(), pod.GetNamespace(), pod.GetOwnerReferences(), false)
	if err == nil && h != nil {
		c.loop.Add(h.key)
	}
}

// byOwner lists w's cached objects whose controller has uid.
func byOwner(w *watch, uid types.UID) []metav1.Object {
	if w == nil {
		return nil
	}
	objs, err := w.inf.GetIndexer().ByIndex(ownerIndex, string(uid))
	if err != nil {
		return nil
	}
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// podChanged reports whether a pod changed in what places it: its labels,
// annotations, owners or spec (not its status).
func podChanged(old, obj any) bool {
	a, ok1 := old.(*unstructured.Unstructured)
	b, ok2 := obj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return true
	}
	if !reflect.DeepEqual(a.GetLabels(), b.GetLabels()) || !reflect.DeepEqual(a.GetAnnotations(), b.GetAnnotations()) ||
		!reflect.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences()) || (a.GetDeletionTimestamp() == nil) != (b.GetDeletionTimestamp() == nil) {
		return true
	}
	return !reflect.DeepEqual(a.Object["spec"], b.Object["spec"])
}

// splitKey reads a cache key.
func splitKey(key string) (namespace, name string, err error) {
	return cache.SplitMetaNamespaceKey(key)
}

// cachedPods are the cached pods of a namespace.
func (s *watchSet) cachedPods(namespace string) []*unstructured.Unstructured {
	objs, err := s.pods.inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		switch {
		case a.GetName() < b.GetName():
			return -1
		case a.GetName() > b.GetName():
			return 1
		}
		return 0
	})
	return out
}
