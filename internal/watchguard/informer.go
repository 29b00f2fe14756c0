package watchguard

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// InformerOptions describe an informer of one resource (Informer).
type InformerOptions struct {
	// Dynamic lists and watches the objects whole; without it, Metadata
	// lists and watches their metadata only.
	Dynamic  dynamic.Interface
	Metadata metadata.Interface
	Resource schema.GroupVersionResource
	Resync   time.Duration
	Indexers cache.Indexers
	// Failed, when set, is called with the error when a list or watch
	// ends on the server's answer (forbidden, not served): the caller need
	// not wait for such an informer to sync, and may say why.
	Failed func(error)
}

// Informer is a shared index informer of o.Resource whose lists and
// watches go through the guard (ListWatch), and which keeps no managed
// fields (nothing karta reads; a large part of every object).
func (g *Guard) Informer(o InformerOptions) cache.SharedIndexInformer {
	lw := &cache.ListWatch{}
	var client any
	var example runtime.Object
	if o.Dynamic != nil {
		ri := o.Dynamic.Resource(o.Resource)
		lw.ListWithContextFunc = func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, opts) }
		lw.WatchFuncWithContext = ri.Watch
		client, example = o.Dynamic, &unstructured.Unstructured{}
	} else {
		ri := o.Metadata.Resource(o.Resource)
		lw.ListWithContextFunc = func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, opts) }
		lw.WatchFuncWithContext = ri.Watch
		client, example = o.Metadata, &metav1.PartialObjectMetadata{}
	}
	guarded := g.ListWatch(o.Resource.GroupResource().String(), cache.ToListWatcherWithWatchListSemantics(lw, client))
	inf := cache.NewSharedIndexInformerWithOptions(guarded, example,
		cache.SharedIndexInformerOptions{ResyncPeriod: o.Resync, Indexers: o.Indexers, ObjectDescription: o.Resource.String()})
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetManagedFields(nil)
		}
		return obj, nil
	})
	// The guard logs and counts every failure; the reflector sees only
	// the server's answers (forbidden, not served).
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		if o.Failed != nil {
			o.Failed(err)
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	return inf
}
