package isolation

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Fair bounds the evaluations of each Karta (a key: the webhook uses the
// kind) that run at once, so that one tenant's hostile Karta, whose every
// call runs to its deadline, holds at most Limit of the server's CPUs and
// leaves the others to other tenants. A call over the limit waits, in a
// queue of at most Queue calls per key and for at most Wait, for one to
// finish; past either it is refused at once with a *BusyError, which a
// server answers 429. A nil *Fair bounds nothing. It is safe for
// concurrent use.
type Fair struct {
	limit, queue int
	wait         time.Duration

	mu    sync.Mutex
	gates map[string]*gate
}

type gate struct {
	slots   chan struct{}
	waiting int // guarded by Fair.mu
}

// NewFair returns a Fair of limit concurrent calls per key (at least 1),
// queue waiting calls per key and wait for each (0: until the caller's
// context ends).
func NewFair(limit, queue int, wait time.Duration) *Fair {
	return &Fair{limit: max(limit, 1), queue: max(queue, 0), wait: wait, gates: map[string]*gate{}}
}

// BusyError refuses a call: its Karta already runs Limit calls and Queue
// more wait.
type BusyError struct {
	Key          string
	Limit, Queue int
	// Waited is how long the call waited before it was refused (0 when
	// the queue was full).
	Waited time.Duration
}

func (e *BusyError) Error() string {
	if e.Waited > 0 {
		return fmt.Sprintf("%s: %d evaluations already running; no slot within %s", e.Key, e.Limit, e.Waited.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s: %d evaluations already running and %d waiting", e.Key, e.Limit, e.Queue)
}

// Acquire takes a slot of key's, waiting if it must; release gives it
// back. The error is a *BusyError, or ctx's.
func (f *Fair) Acquire(ctx context.Context, key string) (release func(), err error) {
	if f == nil {
		return func() {}, nil
	}
	f.mu.Lock()
	g := f.gates[key]
	if g == nil {
		g = &gate{slots: make(chan struct{}, f.limit)}
		f.gates[key] = g
	}
	release = func() { <-g.slots }
	select {
	case g.slots <- struct{}{}:
		f.mu.Unlock()
		return release, nil
	default:
	}
	if g.waiting >= f.queue {
		f.mu.Unlock()
		return nil, &BusyError{Key: key, Limit: f.limit, Queue: f.queue}
	}
	g.waiting++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		g.waiting--
		f.mu.Unlock()
	}()
	var timeout <-chan time.Time
	if f.wait > 0 {
		t := time.NewTimer(f.wait)
		defer t.Stop()
		timeout = t.C
	}
	start := time.Now()
	select {
	case g.slots <- struct{}{}:
		return release, nil
	case <-timeout:
		return nil, &BusyError{Key: key, Limit: f.limit, Queue: f.queue, Waited: time.Since(start)}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
