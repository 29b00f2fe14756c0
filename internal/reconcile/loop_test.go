package reconcile

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoopRetriesFailuresAndForgetsSuccesses(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	var failures []string
	l := New("test", func(_ context.Context, k string) error {
		mu.Lock()
		defer mu.Unlock()
		calls[k]++
		if k == "flaky" && calls[k] < 3 {
			return errors.New("not yet")
		}
		return nil
	}, func(k string, err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, k+": "+err.Error())
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Work(ctx, 2); close(done) }()
	l.Add("ok")
	l.Add("flaky")
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return calls["flaky"] == 3 && calls["ok"] == 1
	}, 10*time.Second, time.Millisecond)
	cancel()
	<-done
	assert.Equal(t, []string{"flaky: not yet", "flaky: not yet"}, failures)
	assert.Equal(t, 0, l.Len())
}

func TestLoopFailureAfterShutdownIsNotReported(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	reported := false
	l := New("test", func(ctx context.Context, _ int) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}, func(int, error) { reported = true })
	l.Add(1)
	l.Work(ctx, 1)
	assert.False(t, reported, "a reconcile cut short by the loop's end is not a failure")
}

func TestSetLeadingSaysWhenLeadershipIsGained(t *testing.T) {
	l := New[int]("test", func(context.Context, int) error { return nil }, nil)
	assert.False(t, l.Leading())
	assert.True(t, l.SetLeading(true), "standby to leader")
	assert.False(t, l.SetLeading(true), "already leading")
	assert.False(t, l.SetLeading(false))
	assert.False(t, l.Leading())
}

func TestGauges(t *testing.T) {
	l := New[int]("test", func(context.Context, int) error { return nil }, nil)
	ready := errors.New("not synced")
	gauges := l.Gauges("unit", "Things", "1 while ready.", func() error { return ready })
	reg := prometheus.NewPedanticRegistry()
	for _, c := range gauges {
		require.NoError(t, reg.Register(c))
	}
	l.Add(1)
	l.Add(2)
	l.SetLeading(true)
	n, err := testutil.GatherAndCount(reg, "karta_unit_queue_depth", "karta_unit_leading", "karta_unit_synced")
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	queueDepth, leading, synced := gauges[0], gauges[1], gauges[2]
	assert.Equal(t, 2.0, testutil.ToFloat64(queueDepth))
	assert.Equal(t, 1.0, testutil.ToFloat64(leading))
	assert.Equal(t, 0.0, testutil.ToFloat64(synced))
	ready = nil
	assert.Equal(t, 1.0, testutil.ToFloat64(synced))
}
