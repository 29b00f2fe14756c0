package watchguard

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// ListWatch wraps lw, the ListerWatcher of resource (named RESOURCE.GROUP
// in logs and metrics), so that its calls are retried as soon as the
// server answers again and their failures are counted, logged and reported
// by Err.
// The result is a cache.ListerWatcher, as informers take, whose calls
// with a context are the ones the reflector makes.
func (g *Guard) ListWatch(resource string, lw cache.ListerWatcher) cache.ListerWatcher {
	return &guarded{g: g, resource: resource, inner: cache.ToListerWatcherWithContext(lw), orig: lw}
}

type guarded struct {
	g        *Guard
	resource string
	inner    cache.ListerWatcherWithContext
	// orig is the ListerWatcher given, which says whether its client
	// supports streaming lists.
	orig cache.ListerWatcher
}

var (
	_ cache.ListerWatcher            = (*guarded)(nil)
	_ cache.ListerWatcherWithContext = (*guarded)(nil)
)

// List and Watch are the calls without a context, for the ListerWatcher
// interface; the reflector makes the ones with.
func (w *guarded) List(opts metav1.ListOptions) (runtime.Object, error) {
	return w.ListWithContext(context.Background(), opts)
}

func (w *guarded) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return w.WatchWithContext(context.Background(), opts)
}

func (w *guarded) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return retry(ctx, w, "list", func() (runtime.Object, error) { return w.inner.ListWithContext(ctx, opts) })
}

func (w *guarded) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return retry(ctx, w, "watch", func() (watch.Interface, error) { return w.inner.WatchWithContext(ctx, opts) })
}

// IsWatchListSemanticsUnSupported passes on whether the wrapped
// ListerWatcher's client supports streaming lists (a fake client does
// not), which the reflector asks.
func (w *guarded) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(w.orig)
}

// retry calls f until it succeeds, fails with an answer of the server, or
// ctx ends. A call the server did not answer waits for a probe to succeed;
// one it keeps refusing although it answers the probe waits a little
// longer each time, up to MaxRetryDelay.
func retry[T any](ctx context.Context, w *guarded, verb string, f func() (T, error)) (T, error) {
	var delay time.Duration
	for {
		v, err := f()
		if err == nil {
			w.g.succeeded(w.resource)
			return v, nil
		}
		if ctx.Err() != nil {
			return v, err
		}
		down := serverDown(err)
		w.g.failed(w.resource, verb, err, down)
		if !down || !w.g.waitServer(ctx, delay) {
			return v, err
		}
		delay = min(max(2*delay, w.g.opts.ProbeInterval), w.g.opts.MaxRetryDelay)
	}
}
