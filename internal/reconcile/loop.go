// Package reconcile is the one reconcile base of karta's controllers (the
// Karta controller and the gang output): a rate-limited work queue of
// keys, the workers that drain it, the leader flag that gates writes, and
// the gauges every such loop exports.
//
// Why not controller-runtime: both controllers watch kinds they discover
// at run time (every workload kind a Karta names, its owners, the gang
// target's kinds) through dynamic informers, each guarded by watchguard so
// a forbidden or failing watch does not hold the others back, and queue
// keys of their own (a source index, a workload's group kind). A
// controller-runtime manager wants those kinds known when it starts and
// one cache it owns; what both loops share is this queue-and-workers core,
// which client-go's workqueue already provides.
package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// Loop drains a queue of keys K with a reconcile function: a key whose
// reconcile fails is retried with client-go's default controller rate
// limiter (per-key exponential backoff and an overall bucket); one that
// succeeds is forgotten. A key is never reconciled by two workers at once
// (the workqueue's guarantee).
type Loop[K comparable] struct {
	queue     workqueue.TypedRateLimitingInterface[K]
	reconcile func(context.Context, K) error
	failed    func(K, error)
	leading   atomic.Bool
}

// New returns a Loop named name (the workqueue's name) that calls
// reconcile for each key and failed for each failure not caused by the
// loop's context ending (to log and count it; nil to do neither).
func New[K comparable](name string, reconcile func(context.Context, K) error, failed func(K, error)) *Loop[K] {
	return &Loop[K]{
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[K](),
			workqueue.TypedRateLimitingQueueConfig[K]{Name: name}),
		reconcile: reconcile,
		failed:    failed,
	}
}

// Add queues k.
func (l *Loop[K]) Add(k K) { l.queue.Add(k) }

// Len is the number of keys waiting.
func (l *Loop[K]) Len() int { return l.queue.Len() }

// Work runs workers workers until ctx ends, then shuts the queue down and
// returns once they have finished their keys.
func (l *Loop[K]) Work(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for l.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	l.queue.ShutDown()
	wg.Wait()
}

// ShutDown stops the queue (Work's callers defer it so that a Run that
// fails before Work leaves no queue behind).
func (l *Loop[K]) ShutDown() { l.queue.ShutDown() }

// next reconciles one key; false once the queue shuts down.
func (l *Loop[K]) next(ctx context.Context) bool {
	k, shutdown := l.queue.Get()
	if shutdown {
		return false
	}
	defer l.queue.Done(k)
	if err := l.reconcile(ctx, k); err != nil {
		if ctx.Err() == nil && l.failed != nil {
			l.failed(k, err)
		}
		l.queue.AddRateLimited(k)
		return true
	}
	l.queue.Forget(k)
	return true
}

// Leading reports whether the loop's process leads (writes).
func (l *Loop[K]) Leading() bool { return l.leading.Load() }

// SetLeading sets the leader flag and reports whether the process has just
// become the leader (the caller then requeues what it knows, so that the
// new leader writes what its standby time left unwritten).
func (l *Loop[K]) SetLeading(leading bool) bool {
	return l.leading.Swap(leading) != leading && leading
}

// Gauges are the loop's gauges under karta_<subsystem>_: queue_depth,
// leading, and synced (1 while ready returns nil), with what names the
// queued keys in queue_depth's help.
func (l *Loop[K]) Gauges(subsystem, what, syncedHelp string, ready func() error) []prometheus.Collector {
	bit := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "karta", Subsystem: subsystem, Name: "queue_depth",
			Help: what + " waiting to be reconciled.",
		}, func() float64 { return float64(l.Len()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "karta", Subsystem: subsystem, Name: "leading",
			Help: "1 while this process leads and writes, 0 on a standby.",
		}, func() float64 { return bit(l.Leading()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "karta", Subsystem: subsystem, Name: "synced",
			Help: syncedHelp,
		}, func() float64 { return bit(ready() == nil) }),
	}
}

// Period is an option's period d: def when d is 0, 0 (never) when d is
// negative (the resync and rediscovery periods of the controllers'
// options).
func Period(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}
