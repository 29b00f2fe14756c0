package statepool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// testState is a pooled state as the interpreter's: a Lua state and a
// cache the owner keeps beside it.
type testState struct {
	L      *lua.LState
	Loaded map[any]*lua.LTable
}

func closeTest(s *testState) { s.L.Close() }

// testStates makes bare Lua states and tracks which are still open.
type testStates struct {
	mu    sync.Mutex
	made  []*testState
	fail  atomic.Bool
	delay time.Duration
}

func (ts *testStates) New() (*testState, error) {
	if ts.fail.Load() {
		return nil, errors.New("no memory")
	}
	time.Sleep(ts.delay)
	s := &testState{L: lua.NewState(lua.Options{SkipOpenLibs: true}), Loaded: map[any]*lua.LTable{}}
	ts.mu.Lock()
	ts.made = append(ts.made, s)
	ts.mu.Unlock()
	return s, nil
}

func (ts *testStates) open() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	n := 0
	for _, s := range ts.made {
		if !s.L.IsClosed() {
			n++
		}
	}
	return n
}

func TestPoolPrewarmAndDefaults(t *testing.T) {
	ts := &testStates{}
	p, err := New(Options[*testState]{New: ts.New, Close: closeTest})
	require.NoError(t, err)
	st := p.Stats()
	assert.Positive(t, st.Size)
	assert.Equal(t, Stats{Size: st.Size, Idle: 1, Created: 1}, st)

	p2, err := New(Options[*testState]{Size: 3, Prewarm: 10, New: ts.New, Close: closeTest})
	require.NoError(t, err)
	assert.Equal(t, Stats{Size: 3, Idle: 3, Created: 3}, p2.Stats())

	p3, err := New(Options[*testState]{Size: 3, Prewarm: -1, New: ts.New, Close: closeTest})
	require.NoError(t, err)
	assert.Equal(t, Stats{Size: 3}, p3.Stats())

	_, err = New(Options[*testState]{})
	assert.Error(t, err)

	p.Close()
	p2.Close()
	p3.Close()
	assert.Equal(t, 0, ts.open())
}

func TestPoolPrewarmError(t *testing.T) {
	ts := &testStates{}
	calls := 0
	_, err := New(Options[*testState]{Size: 4, Prewarm: 3, New: func() (*testState, error) {
		calls++
		if calls == 3 {
			return nil, errors.New("boom")
		}
		return ts.New()
	}, Close: closeTest})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "boom")
	assert.Equal(t, 0, ts.open(), "states made before the error are closed")
}

func TestPoolReusesAndCreates(t *testing.T) {
	ts := &testStates{}
	p, err := New(Options[*testState]{Size: 2, New: ts.New, Close: closeTest})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()

	a, err := p.Get(ctx)
	require.NoError(t, err)
	b, err := p.Get(ctx)
	require.NoError(t, err)
	assert.NotSame(t, a, b)
	assert.Equal(t, Stats{Size: 2, InUse: 2, Created: 2}, p.Stats())

	p.Put(a)
	c, err := p.Get(ctx)
	require.NoError(t, err)
	assert.Same(t, a, c, "an idle state is reused")
	p.Put(b)
	p.Put(c)
	assert.Equal(t, Stats{Size: 2, Idle: 2, Created: 2}, p.Stats())
}

func TestPoolGetWaitsAndRespectsContext(t *testing.T) {
	ts := &testStates{}
	p, err := New(Options[*testState]{Size: 1, New: ts.New, Close: closeTest})
	require.NoError(t, err)
	defer p.Close()

	s, err := p.Get(context.Background())
	require.NoError(t, err)

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = p.Get(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)

	// A waiter gets the state put back.
	got := make(chan *testState)
	go func() {
		s2, err := p.Get(context.Background())
		assert.NoError(t, err)
		got <- s2
	}()
	waitForWaiters(t, p, 1)
	p.Put(s)
	assert.Same(t, s, <-got)
	p.Put(s)
}

func TestPoolDiscardFreesASlot(t *testing.T) {
	ts := &testStates{}
	p, err := New(Options[*testState]{Size: 1, New: ts.New, Close: closeTest})
	require.NoError(t, err)
	defer p.Close()

	s, err := p.Get(context.Background())
	require.NoError(t, err)
	got := make(chan *testState)
	go func() {
		s2, err := p.Get(context.Background())
		assert.NoError(t, err)
		got <- s2
	}()
	waitForWaiters(t, p, 1)
	p.Discard(s)
	s2 := <-got
	assert.True(t, s.L.IsClosed())
	assert.NotSame(t, s, s2, "a new state replaces the discarded one")
	assert.Equal(t, Stats{Size: 1, InUse: 1, Created: 2, Discarded: 1}, p.Stats())

	// A failing New gives its slot back.
	p.Discard(s2)
	ts.fail.Store(true)
	_, err = p.Get(context.Background())
	assert.ErrorContains(t, err, "no memory")
	ts.fail.Store(false)
	s3, err := p.Get(context.Background())
	require.NoError(t, err)
	p.Put(s3)
	assert.Equal(t, Stats{Size: 1, Idle: 1, Created: 3, Discarded: 2}, p.Stats())
}

func TestPoolClose(t *testing.T) {
	ts := &testStates{}
	p, err := New(Options[*testState]{Size: 3, Prewarm: 2, New: ts.New, Close: closeTest})
	require.NoError(t, err)
	out, err := p.Get(context.Background())
	require.NoError(t, err)

	waiter := make(chan error)
	full, err := New(Options[*testState]{Size: 1, New: ts.New, Close: closeTest})
	require.NoError(t, err)
	held, err := full.Get(context.Background())
	require.NoError(t, err)
	go func() { _, err := full.Get(context.Background()); waiter <- err }()

	p.Close()
	p.Close()
	assert.Equal(t, 2, ts.open(), "idle states are closed; open are the one in use and the other pool's")
	assert.False(t, out.L.IsClosed())
	_, err = p.Get(context.Background())
	assert.ErrorIs(t, err, ErrClosed)
	p.Put(out)
	assert.True(t, out.L.IsClosed(), "Put after Close closes the state")
	assert.Equal(t, Stats{Size: 3, Created: 2, Closed: 2}, p.Stats())

	waitForWaiters(t, full, 1)
	full.Close()
	assert.ErrorIs(t, <-waiter, ErrClosed, "Close wakes waiters")
	full.Put(held)
	assert.Equal(t, 0, ts.open())
}

func TestPoolConcurrency(t *testing.T) {
	ts := &testStates{delay: time.Millisecond}
	const size = 4
	p, err := New(Options[*testState]{Size: size, New: ts.New, Close: closeTest})
	require.NoError(t, err)

	var inUse, maxInUse atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				ctx := context.Background()
				var cancel context.CancelFunc = func() {}
				if i%10 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Millisecond)
				}
				s, err := p.Get(ctx)
				cancel()
				if err != nil {
					assert.ErrorIs(t, err, context.DeadlineExceeded)
					continue
				}
				n := inUse.Add(1)
				for {
					m := maxInUse.Load()
					if n <= m || maxInUse.CompareAndSwap(m, n) {
						break
					}
				}
				assert.False(t, s.L.IsClosed())
				s.Loaded[g] = nil // the state is this goroutine's alone
				st := p.Stats()
				if live := st.Created - st.Discarded - st.Closed; live > size {
					t.Errorf("%d live states in a pool of %d", live, size)
				}
				inUse.Add(-1)
				if (g+i)%7 == 0 {
					p.Discard(s)
				} else {
					delete(s.Loaded, g)
					p.Put(s)
				}
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, maxInUse.Load(), int64(size))
	st := p.Stats()
	assert.Equal(t, 0, st.InUse)
	live := st.Created - st.Discarded - st.Closed
	assert.Equal(t, int64(st.Idle), live)
	assert.LessOrEqual(t, live, int64(size))
	assert.Equal(t, int(live), ts.open())
	assert.Positive(t, st.Discarded)

	p.Close()
	assert.Equal(t, 0, ts.open(), "no state leaks")
	st = p.Stats()
	assert.Equal(t, st.Created, st.Discarded+st.Closed)
}

// waitForWaiters waits until n Gets are blocked on p: the state the test
// then puts back or discards is the one they receive.
func waitForWaiters(t *testing.T, p *Pool[*testState], n int) {
	t.Helper()
	require.Eventually(t, func() bool { return p.Stats().Waiting == n }, 10*time.Second, time.Millisecond,
		"%d Gets waiting on the pool", n)
}
