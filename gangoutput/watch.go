package gangoutput

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/internal/kindwatch"
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

// podGVK is core v1 Pod.
var podGVK = kindwatch.Pods.GVK

// startFixed starts the watches of the pods and the target's objects,
// which never change; the target's kinds must be served.
func (c *Controller) startFixed(ctx context.Context) error {
	var targets []kindwatch.Kind
	for _, gvk := range c.opts.Build.Kinds(c.opts.Target) {
		m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			return &NotServedError{Target: c.opts.Target, GVK: gvk}
		}
		if err != nil {
			return fmt.Errorf("gang output: discovering %s: %w", gvk, err)
		}
		targets = append(targets, kindwatch.Kind{GVK: gvk, GVR: m.Resource, Namespaced: true})
	}
	c.kinds.Begin(ctx, func(next *kindwatch.Set) {
		next.Pods = c.start(kindwatch.Pods, rolePods)
		for _, k := range targets {
			next.Fixed[k.GVK.GroupKind()] = c.start(k, roleTarget)
		}
	})
	return nil
}

// start watches k in role r with the controller's event handler. The
// informer is the process's (shared with the metrics exporter's watch of
// the same resource); an owner kind's objects are read by their metadata
// unless another watch reads them whole.
func (c *Controller) start(k kindwatch.Kind, r role) *kindwatch.Watch {
	resync := c.opts.ResyncPeriod
	if r != roleWorkload {
		resync = 0 // the workloads' resync reconciles everything
	}
	c.log.Info("gang output: watching", "resource", k.GVR.GroupResource().String(), "role", string(r))
	return c.kinds.Informers().Watch(k, r != roleOwner, resync, c.handler(k, r))
}

// waitSynced waits for the watches' first lists; false when ctx ended
// first.
func waitSynced(ctx context.Context, ws ...*kindwatch.Watch) bool {
	synced := make([]cache.InformerSynced, 0, len(ws))
	for _, w := range ws {
		synced = append(synced, w.Synced)
	}
	return cache.WaitForCacheSync(ctx.Done(), synced...)
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
func (c *Controller) syncWatches(reset bool) {
	if reset {
		kindwatch.ResetMapper(c.mapper)
	}
	roots := map[schema.GroupKind]kindwatch.Kind{}
	var ownerKinds []schema.GroupVersionKind
	for _, e := range c.registry.Entries() {
		p, err := c.registry.Lookup(e.GVK)
		if err != nil || p == nil || !podgroups.HasGangInstructions(p.Karta()) || !WatchedAsWorkload(p.Karta()) {
			continue
		}
		k, ok := kindwatch.Map(c.mapper, c.log, e.GVK)
		if !ok {
			continue
		}
		if !k.Namespaced {
			c.log.Warn("gang output: a cluster-scoped workload kind has no namespace for its gang objects; left alone", "kind", e.GVK.String())
			continue
		}
		if prev, ok := roots[e.GVK.GroupKind()]; ok && !c.preferred(k.GVK, prev.GVK) {
			// Two Kartas for two versions of a kind the cluster serves
			// both of (one CRD): the version it prefers is watched.
			continue
		}
		roots[e.GVK.GroupKind()] = k
		ownerKinds = append(ownerKinds, p.Karta().Spec.StructureDefinition.ChildKinds()...)
	}
	owners := kindwatch.Owners(c.mapper, c.log, roots, append(ownerKinds, c.opts.OwnerKinds...))
	roleOf := func(root bool) role {
		if root {
			return roleWorkload
		}
		return roleOwner
	}
	next := c.kinds.Update(roots, owners,
		func(k kindwatch.Kind, root bool) *kindwatch.Watch { return c.start(k, roleOf(root)) },
		func(w *kindwatch.Watch, root bool) {
			w.Stop()
			c.log.Info("gang output: no longer watching", "resource", w.GVR.GroupResource().String(), "role", string(roleOf(root)))
		})
	if next == nil {
		return
	}
	c.metrics.kinds.WithLabelValues(string(roleWorkload)).Set(float64(len(next.Roots)))
	c.metrics.kinds.WithLabelValues(string(roleOwner)).Set(float64(len(next.Owners)))
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

// handler queues the workloads an event of k's objects, watched in role
// r, concerns.
func (c *Controller) handler(k kindwatch.Kind, r role) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.changed(k, r, nil, obj, true) },
		UpdateFunc: func(old, obj any) {
			if r == rolePods && !podChanged(old, obj) {
				return
			}
			c.changed(k, r, old, obj, false)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok && r == roleTarget {
				c.mu.Lock()
				delete(c.applied, keyOf(u)) // to be written again
				c.mu.Unlock()
			}
			c.changed(k, r, nil, obj, false)
		},
	}
}

// changed queues what an object's change concerns: a workload itself
// (and, when it is added, the workloads under it, which it may own); the
// workload of a pod; the workload a target object belongs to; and, when a
// workload or an owner is added, the workloads of the pods under it,
// which may not have resolved before it was cached.
func (c *Controller) changed(k kindwatch.Kind, r role, old, obj any, added bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	set := c.kinds.Load()
	switch r {
	case roleWorkload, roleOwner:
		if r == roleWorkload {
			c.loop.Add(rootKey{gk: k.GVK.GroupKind(), namespace: m.GetNamespace(), name: m.GetName()})
		}
		if !added {
			return
		}
		for gk, w := range set.Roots {
			for _, child := range byOwner(w, m.GetUID()) {
				c.loop.Add(rootKey{gk: gk, namespace: child.GetNamespace(), name: child.GetName()})
			}
		}
		// The pods (through owners) under it.
		frontier := []metav1.Object{m}
		for depth := 0; depth < maxOwnerDepth && len(frontier) > 0; depth++ {
			var next []metav1.Object
			for _, o := range frontier {
				for _, pod := range byOwner(set.Pods, o.GetUID()) {
					c.queuePod(pod)
				}
				for _, ow := range set.Owners {
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
				if _, ok := set.Roots[gk]; ok {
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

// byOwner lists the metadata of w's cached objects whose controller has
// uid.
func byOwner(w *kindwatch.Watch, uid types.UID) []metav1.Object {
	objs := kindwatch.ByOwner(w, uid)
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// podChanged reports whether a pod changed in what places it, or began
// to be deleted (not in its status).
func podChanged(old, obj any) bool {
	return kindwatch.PodChanged(old, obj, func(a, b *unstructured.Unstructured) bool {
		return (a.GetDeletionTimestamp() == nil) != (b.GetDeletionTimestamp() == nil)
	})
}

// cachedPods are the cached pods of a namespace.
func cachedPods(set *kindwatch.Set, namespace string) []*unstructured.Unstructured {
	objs := set.Pods.ByIndex(cache.NamespaceIndex, namespace)
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
