package isolation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFair(t *testing.T) {
	ctx := bounded(t, 30*time.Second)
	f := NewFair(2, 1, 50*time.Millisecond)
	r1, err := f.Acquire(ctx, "a")
	require.NoError(t, err)
	r2, err := f.Acquire(ctx, "a")
	require.NoError(t, err)

	// Another key is not affected by a's.
	rb, err := f.Acquire(ctx, "b")
	require.NoError(t, err)
	rb()

	// The third waits, and is refused after Wait.
	_, err = f.Acquire(ctx, "a")
	var busy *BusyError
	require.ErrorAs(t, err, &busy)
	assert.Positive(t, busy.Waited)

	// With one waiting, a fourth is refused at once.
	waited := make(chan error, 1)
	go func() {
		rel, err := f.Acquire(ctx, "a")
		if err == nil {
			rel()
		}
		waited <- err
	}()
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.gates["a"].waiting == 1
	}, 10*time.Second, time.Millisecond)
	_, err = f.Acquire(ctx, "a")
	require.ErrorAs(t, err, &busy)
	assert.Zero(t, busy.Waited)
	assert.Equal(t, "a: 2 evaluations already running and 1 waiting", busy.Error())

	// A slot given back lets the waiting one in (if it has not timed
	// out yet; either way it ends).
	r1()
	select {
	case err := <-waited:
		if err != nil {
			require.ErrorAs(t, err, &busy)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting call did not end")
	}
	r2()

	// The caller's context ends a wait.
	f2 := NewFair(1, 1, 0)
	rel, err := f2.Acquire(ctx, "a")
	require.NoError(t, err)
	defer rel()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = f2.Acquire(cctx, "a")
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)

	// A nil Fair bounds nothing.
	var none *Fair
	rel2, err := none.Acquire(ctx, "a")
	require.NoError(t, err)
	rel2()
}
