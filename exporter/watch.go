package exporter

import (
	"context"
	"reflect"
	"sort"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/internal/watchguard"
)

// ownerIndex indexes objects by the uid of their controller.
const ownerIndex = "karta-controller-uid"

var (
	podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	podGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// watch is one watched kind and its informer.
type watch struct {
	// described: a kind the registry has a Program for, watched whole;
	// otherwise an owner kind, watched by its metadata.
	described  bool
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
// stores a new one.
type watchSet struct {
	// kinds are the described kinds (Pods among them when a Program
	// describes them: then the pods' watch), owners the others; both by
	// group and kind, as owner references name them.
	kinds, owners map[schema.GroupKind]*watch
	pods          *watch
	// initial are the kinds of the first discovery (nil before it).
	initial []*watch
}

func (s *watchSet) clone() *watchSet {
	n := &watchSet{kinds: map[schema.GroupKind]*watch{}, owners: map[schema.GroupKind]*watch{}, pods: s.pods, initial: s.initial}
	for k, v := range s.kinds {
		n.kinds[k] = v
	}
	for k, v := range s.owners {
		n.owners[k] = v
	}
	return n
}

// get is the cached object namespace/name, nil when the cache has none.
func (w *watch) get(namespace, name string) metav1.Object {
	key := name
	if w.namespaced {
		key = namespace + "/" + name
	}
	obj, ok, err := w.inf.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return m
}

// start creates w's informer with its event handler and runs it until ctx
// ends or w.cancel is called.
func (e *Exporter) start(ctx context.Context, w *watch, resync time.Duration) *watch {
	o := watchguard.InformerOptions{Resource: w.gvr, Resync: resync, Failed: &w.failed, Indexers: cache.Indexers{ownerIndex: controllerUIDIndex}}
	if w.described {
		o.Dynamic = e.dyn
	} else {
		o.Metadata = e.meta
	}
	w.inf = e.watches.Informer(o)
	if _, err := w.inf.AddEventHandler(e.handler(w)); err != nil {
		e.log.Error("exporter: cannot handle events", "resource", w.gvr.GroupResource().String(), "err", err)
	}
	ctx, w.cancel = context.WithCancel(ctx)
	e.informers.Go(func() { w.inf.RunWithContext(ctx) })
	e.log.Info("exporter: watching", "resource", w.gvr.GroupResource().String(), "described", w.described)
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

// handler queues the workloads an event concerns.
func (e *Exporter) handler(w *watch) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { e.changed(w, obj) },
		UpdateFunc: func(old, obj any) {
			if w == e.set.Load().pods && !podChanged(old, obj) {
				return
			}
			e.changed(w, obj)
			om, err1 := meta.Accessor(old)
			m, err2 := meta.Accessor(obj)
			if err1 == nil && err2 == nil && !reflect.DeepEqual(om.GetOwnerReferences(), m.GetOwnerReferences()) {
				e.changed(w, old) // the workload it left
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			e.changed(w, obj)
		},
	}
}

// changed queues the object itself when it is of a described kind, and
// the topmost described object above it.
func (e *Exporter) changed(w *watch, obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	set := e.set.Load()
	gk := w.gvk.GroupKind()
	if set.kinds[gk] == w {
		e.loop.Add(key{gk: gk, namespace: m.GetNamespace(), name: m.GetName()})
	}
	if top, ok := set.topOf(m); ok {
		e.loop.Add(top)
	}
}

// podChanged reports whether a pod changed in what the series show or
// the placement reads: not in its status, other than its phase and
// readiness.
func podChanged(old, obj any) bool {
	a, ok1 := old.(*unstructured.Unstructured)
	b, ok2 := obj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return true
	}
	if !reflect.DeepEqual(a.GetLabels(), b.GetLabels()) || !reflect.DeepEqual(a.GetAnnotations(), b.GetAnnotations()) ||
		!reflect.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences()) || podReady(a) != podReady(b) {
		return true
	}
	pa, _, _ := unstructured.NestedString(a.Object, "status", "phase")
	pb, _, _ := unstructured.NestedString(b.Object, "status", "phase")
	return pa != pb || !reflect.DeepEqual(a.Object["spec"], b.Object["spec"])
}

// waitSynced waits for the informers' first lists; false when ctx ended
// first.
func waitSynced(ctx context.Context, ws ...*watch) bool {
	synced := make([]cache.InformerSynced, 0, len(ws))
	for _, w := range ws {
		if w != nil {
			synced = append(synced, func() bool { return w.inf.HasSynced() || w.failed.Load() })
		}
	}
	return cache.WaitForCacheSync(ctx.Done(), synced...)
}

func sortedKinds(m map[schema.GroupKind]kindWant) []schema.GroupKind {
	out := make([]schema.GroupKind, 0, len(m))
	for gk := range m {
		out = append(out, gk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
