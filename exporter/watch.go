package exporter

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/kartalua/karta/internal/kindwatch"
)

// podGVK is core v1 Pod.
var podGVK = kindwatch.Pods.GVK

// start watches k with the exporter's event handler: a described kind
// (root) whole, replayed every ResyncPeriod, an owner kind by its
// metadata (unless another watch of the process reads it whole). The
// pods' watch, made at Run, stands for Pods when a Program describes
// them.
func (e *Exporter) start(k kindwatch.Kind, described bool) *kindwatch.Watch {
	if pods := e.kinds.Load().Pods; pods != nil && k.GVR == pods.GVR {
		e.requeueWatch(pods)
		return pods
	}
	resync := e.opts.ResyncPeriod
	if !described {
		resync = 0
	}
	e.log.Info("exporter: watching", "resource", k.GVR.GroupResource().String(), "described", described)
	return e.kinds.Informers().Watch(k, described, resync, e.handler(k))
}

// handler queues the workloads an event of k's objects concerns.
func (e *Exporter) handler(k kindwatch.Kind) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { e.changed(k, obj) },
		UpdateFunc: func(old, obj any) {
			if k.GVR == kindwatch.Pods.GVR && !podChanged(old, obj) {
				return
			}
			e.changed(k, obj)
			om, err1 := meta.Accessor(old)
			m, err2 := meta.Accessor(obj)
			if err1 == nil && err2 == nil && !reflect.DeepEqual(om.GetOwnerReferences(), m.GetOwnerReferences()) {
				e.changed(k, old) // the workload it left
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			e.changed(k, obj)
		},
	}
}

// changed queues the object itself when it is of a described kind, and
// the topmost described object above it.
func (e *Exporter) changed(k kindwatch.Kind, obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	set := e.kinds.Load()
	gk := k.GVK.GroupKind()
	if w := set.Roots[gk]; w != nil && w.GVR == k.GVR {
		e.loop.Add(key{gk: gk, namespace: m.GetNamespace(), name: m.GetName()})
	}
	if top, ok := topOf(set, m); ok {
		e.loop.Add(top)
	}
}

// podChanged reports whether a pod changed in what the series show or
// the placement reads: not in its status, other than its phase and
// readiness.
func podChanged(old, obj any) bool {
	return kindwatch.PodChanged(old, obj, func(a, b *unstructured.Unstructured) bool {
		pa, _, _ := unstructured.NestedString(a.Object, "status", "phase")
		pb, _, _ := unstructured.NestedString(b.Object, "status", "phase")
		return podReady(a) != podReady(b) || pa != pb
	})
}
