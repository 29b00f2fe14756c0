package interpreter

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
)

// ErrPoolClosed is returned by Get on a closed pool.
var ErrPoolClosed = errors.New("interpreter: Lua state pool is closed")

// State is a pooled Lua state with the per-state caches the interpreter
// keeps alongside it. A State belongs to one goroutine between Get and
// Put/Discard.
type State struct {
	L *lua.LState
	// Loaded caches per-state Lua values keyed by what they were made
	// from (a chunk's environment, a converted input...), for the
	// interpreter's use; the pool never reads it.
	Loaded map[any]*lua.LTable
	// Data is the owner's per-state data (the Program's loaded chunk).
	Data any
	// Uses counts the calls the state served (incremented by Get).
	Uses int
}

// PoolOptions configure NewPool.
type PoolOptions struct {
	// Size is the most states alive at once (default 2*GOMAXPROCS).
	Size int
	// Prewarm is how many states NewPool creates up front (default 1;
	// negative for none; at most Size).
	Prewarm int
	// New makes a ready state (sandbox built, chunks instantiated...).
	New func() (*State, error)
}

// PoolStats are a pool's counters, for metrics. Idle and InUse are
// instantaneous and read separately, so they may disagree by a state in
// flight; alive states are Created - Discarded - Closed <= Size.
type PoolStats struct {
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

// Pool is a bounded pool of pre-created Lua states for one compiled
// program. The hot path takes no lock: idle states wait in a buffered
// channel, and a second buffered channel holds one token per live state,
// so creating a state is a non-blocking send and waiting is a select.
type Pool struct {
	newState func() (*State, error)
	size     int
	idle     chan *State   // idle states; never more than size
	slots    chan struct{} // a token per live state: created, not yet discarded or closed
	done     chan struct{} // closed by Close, to wake waiters
	closed   atomic.Bool

	inUse, created, discarded, closedStates, waiting atomic.Int64
}

// NewPool creates a pool and its Prewarm states. An error from New is
// returned after closing the states already made.
func NewPool(opts PoolOptions) (*Pool, error) {
	if opts.New == nil {
		return nil, errors.New("interpreter: PoolOptions.New is nil")
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
	p := &Pool{
		newState: opts.New,
		size:     size,
		idle:     make(chan *State, size),
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
func (p *Pool) Get(ctx context.Context) (*State, error) {
	if p.closed.Load() {
		return nil, ErrPoolClosed
	}
	// Idle first: a warm state beats a new one.
	select {
	case s := <-p.idle:
		return p.checkout(s), nil
	default:
	}
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	select {
	case s := <-p.idle:
		return p.checkout(s), nil
	case p.slots <- struct{}{}:
		return p.createOut()
	case <-ctx.Done():
		return nil, fmt.Errorf("interpreter: waiting for a Lua state: %w", ctx.Err())
	case <-p.done:
		return nil, ErrPoolClosed
	}
}

// Put returns a healthy state for reuse. On a closed pool it closes it.
// Each Get is matched by exactly one Put or Discard.
func (p *Pool) Put(s *State) {
	p.inUse.Add(-1)
	if p.closed.Load() {
		p.closeState(s)
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

// Discard closes a state that hit a limit or an error and frees its slot,
// so the next Get may create a fresh one.
func (p *Pool) Discard(s *State) {
	p.inUse.Add(-1)
	s.L.Close()
	p.discarded.Add(1)
	<-p.slots
}

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	return PoolStats{
		Size:      p.size,
		Idle:      len(p.idle),
		InUse:     int(p.inUse.Load()),
		Created:   p.created.Load(),
		Discarded: p.discarded.Load(),
		Closed:    p.closedStates.Load(),
		Waiting:   int(p.waiting.Load()),
	}
}

// Close closes the idle states and makes Get fail with ErrPoolClosed;
// states in use are closed when they are put back. Close is idempotent.
func (p *Pool) Close() {
	if p.closed.Swap(true) {
		return
	}
	close(p.done)
	p.drain()
}

func (p *Pool) drain() {
	for {
		select {
		case s := <-p.idle:
			p.closeState(s)
		default:
			return
		}
	}
}

func (p *Pool) closeState(s *State) {
	s.L.Close()
	p.closedStates.Add(1)
	<-p.slots
}

func (p *Pool) checkout(s *State) *State {
	p.inUse.Add(1)
	s.Uses++
	return s
}

// createOut makes a state for a slot Get just took.
func (p *Pool) createOut() (*State, error) {
	s, err := p.create()
	if err != nil {
		return nil, err
	}
	return p.checkout(s), nil
}

// create makes a state in a slot already taken; on failure it gives the
// slot back.
func (p *Pool) create() (*State, error) {
	s, err := p.newState()
	if err == nil && (s == nil || s.L == nil) {
		err = errors.New("PoolOptions.New returned no Lua state")
	}
	if err != nil {
		<-p.slots
		return nil, fmt.Errorf("interpreter: creating a Lua state: %w", err)
	}
	p.created.Add(1)
	return s, nil
}
