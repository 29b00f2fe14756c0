// Package statepool is the one bounded pool of Lua states karta has: the
// Programs of Kartas, Karmada's customizations and Argo CD's health
// scripts each keep their states in one.
package statepool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
)

// ErrClosed is returned by Get on a closed pool.
var ErrClosed = errors.New("Lua state pool is closed")

// Options configure New.
type Options[T any] struct {
	// Size is the most states alive at once (default 2*GOMAXPROCS).
	Size int
	// Prewarm is how many states New creates up front (default 1;
	// negative for none; at most Size).
	Prewarm int
	// New makes a ready state.
	New func() (T, error)
	// Close releases a state the pool drops (discarded, or the pool
	// closed).
	Close func(T)
}

// Stats are a pool's counters, for metrics. Idle and InUse are
// instantaneous and read separately, so they may disagree by a state in
// flight; alive states are Created - Discarded - Closed <= Size.
type Stats struct {
	Size      int
	Idle      int
	InUse     int
	Created   int64
	Discarded int64
	// Closed counts states closed because the pool was closed.
	Closed int64
	// Waiting is how many Gets are waiting for a state.
	Waiting int
}

// Pool is a bounded pool of pre-created states. The hot path takes no
// lock: idle states wait in a buffered channel, and a second buffered
// channel holds one token per live state, so creating a state is a
// non-blocking send and waiting is a select.
type Pool[T any] struct {
	newState  func() (T, error)
	close     func(T)
	size      int
	idle      chan T        // idle states; never more than size
	slots     chan struct{} // a token per live state: created, not yet discarded or closed
	done      chan struct{} // closed by Close, to wake waiters
	closed    atomic.Bool
	inUse     atomic.Int64
	created   atomic.Int64
	discarded atomic.Int64
	dropped   atomic.Int64 // closed because the pool was
	waiting   atomic.Int64
}

// New creates a pool and its Prewarm states. An error from New is
// returned after closing the states already made.
func New[T any](opts Options[T]) (*Pool[T], error) {
	if opts.New == nil || opts.Close == nil {
		return nil, errors.New("statepool: Options.New and Options.Close are required")
	}
	size := opts.Size
	if size <= 0 {
		size = 2 * runtime.GOMAXPROCS(0)
	}
	prewarm := opts.Prewarm
	switch {
	case prewarm == 0:
		prewarm = 1
	case prewarm < 0:
		prewarm = 0
	}
	prewarm = min(prewarm, size)
	p := &Pool[T]{
		newState: opts.New,
		close:    opts.Close,
		size:     size,
		idle:     make(chan T, size),
		slots:    make(chan struct{}, size),
		done:     make(chan struct{}),
	}
	for range prewarm {
		p.slots <- struct{}{}
		s, err := p.create()
		if err != nil {
			p.Close()
			return nil, err
		}
		p.idle <- s
	}
	return p, nil
}

// Get returns an idle state, or a new one while fewer than Size are alive,
// or else waits for one to be put back or discarded. ctx ends the wait.
func (p *Pool[T]) Get(ctx context.Context) (T, error) {
	var zero T
	if p.closed.Load() {
		return zero, ErrClosed
	}
	// Idle first: a warm state beats a new one.
	select {
	case s := <-p.idle:
		p.inUse.Add(1)
		return s, nil
	default:
	}
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	select {
	case s := <-p.idle:
		p.inUse.Add(1)
		return s, nil
	case p.slots <- struct{}{}:
		s, err := p.create()
		if err != nil {
			return zero, err
		}
		p.inUse.Add(1)
		return s, nil
	case <-ctx.Done():
		return zero, fmt.Errorf("waiting for a Lua state: %w", ctx.Err())
	case <-p.done:
		return zero, ErrClosed
	}
}

// Put returns a state for reuse: one whose call succeeded, or failed
// without touching it (the caller decides). On a closed pool it closes it.
// Each Get is matched by exactly one Put or Discard.
func (p *Pool[T]) Put(s T) {
	p.inUse.Add(-1)
	if p.closed.Load() {
		p.drop(s)
		return
	}
	// Never blocks: at most size states are alive.
	p.idle <- s
	// A Close that ran between the check above and the send has already
	// drained idle; drain again so s is not left open.
	if p.closed.Load() {
		p.drain()
	}
}

// Discard closes a state its caller will not reuse (one that hit a limit,
// panicked or ran a script that failed) and frees its slot, so the next
// Get may create a fresh one.
func (p *Pool[T]) Discard(s T) {
	p.inUse.Add(-1)
	p.close(s)
	p.discarded.Add(1)
	<-p.slots
}

// Closed reports whether Close was called.
func (p *Pool[T]) Closed() bool { return p.closed.Load() }

// Stats returns the pool's counters.
func (p *Pool[T]) Stats() Stats {
	return Stats{
		Size:      p.size,
		Idle:      len(p.idle),
		InUse:     int(p.inUse.Load()),
		Created:   p.created.Load(),
		Discarded: p.discarded.Load(),
		Closed:    p.dropped.Load(),
		Waiting:   int(p.waiting.Load()),
	}
}

// Close closes the idle states and makes Get fail with ErrClosed; states
// in use are closed when they are put back. Close is idempotent.
func (p *Pool[T]) Close() {
	if p.closed.Swap(true) {
		return
	}
	close(p.done)
	p.drain()
}

func (p *Pool[T]) drain() {
	for {
		select {
		case s := <-p.idle:
			p.drop(s)
		default:
			return
		}
	}
}

func (p *Pool[T]) drop(s T) {
	p.close(s)
	p.dropped.Add(1)
	<-p.slots
}

// create makes a state in a slot already taken; on failure it gives the
// slot back.
func (p *Pool[T]) create() (T, error) {
	s, err := p.newState()
	if err != nil {
		<-p.slots
		var zero T
		return zero, fmt.Errorf("creating a Lua state: %w", err)
	}
	p.created.Add(1)
	return s, nil
}
