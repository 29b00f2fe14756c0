package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// informer is the informer of the Kartas of resource gvr (cluster-wide,
// Options.LabelSelector), its lists and watches guarded by c.watches: they
// wait for an API server that does not answer and retry at once when it
// does, instead of backing off (internal/watchguard).
func (c *Controller) informer(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	ri := c.dyn.Resource(gvr)
	sel := c.opts.LabelSelector
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return ri.Watch(ctx, o)
		},
	}, c.dyn)
	return cache.NewSharedIndexInformerWithOptions(c.watches.ListWatch(gvr.GroupResource().String(), lw), &unstructured.Unstructured{},
		cache.SharedIndexInformerOptions{ResyncPeriod: c.opts.ResyncPeriod, Indexers: cache.Indexers{}, ObjectDescription: gvr.String()})
}
