package watchguard

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// refused is what a dial to a stopped API server returns.
var refused = &netError{syscall.ECONNREFUSED}

type netError struct{ errno syscall.Errno }

func (e *netError) Error() string { return "dial tcp 127.0.0.1:6443: connect: " + e.errno.Error() }
func (e *netError) Unwrap() error { return e.errno }

// flakyLW fails its calls with the errors queued, then succeeds.
type flakyLW struct {
	mu    sync.Mutex
	errs  []error
	calls atomic.Int32
}

func (f *flakyLW) next() error {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.errs) == 0 {
		return nil
	}
	err := f.errs[0]
	f.errs = f.errs[1:]
	return err
}

func (f *flakyLW) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	if err := f.next(); err != nil {
		return nil, err
	}
	return &metav1.List{}, nil
}

func (f *flakyLW) List(o metav1.ListOptions) (runtime.Object, error) {
	return f.ListWithContext(context.Background(), o)
}

func (f *flakyLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return f.WatchWithContext(context.Background(), o)
}

func (f *flakyLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	if err := f.next(); err != nil {
		return nil, err
	}
	return watch.NewEmptyWatch(), nil
}

var _ cache.ListerWatcher = (*flakyLW)(nil)

// switchProbe answers once up is set.
type switchProbe struct {
	up     atomic.Bool
	probes atomic.Int32
}

func (p *switchProbe) probe(context.Context) error {
	p.probes.Add(1)
	if p.up.Load() {
		return nil
	}
	return refused
}

func newTestGuard(t *testing.T, opts Options) (*Guard, *bytes.Buffer, *prometheus.Registry) {
	t.Helper()
	var logs bytes.Buffer
	var mu sync.Mutex
	opts.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval = 10 * time.Millisecond
	}
	g, err := New(opts)
	require.NoError(t, err)
	return g, &logs, reg
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestWatchWaitsForTheServerAndRetriesWhenItAnswers(t *testing.T) {
	probe := &switchProbe{}
	g, logs, _ := newTestGuard(t, Options{Probe: probe.probe, Bound: time.Hour})
	lw := &flakyLW{errs: []error{refused}}
	w := g.ListWatch("kartas.run.ai", lw).(cache.ListerWatcherWithContext)

	done := make(chan error, 1)
	go func() {
		_, err := w.WatchWithContext(t.Context(), metav1.ListOptions{})
		done <- err
	}()
	// The call waits while the probe fails, without retrying.
	require.Eventually(t, func() bool { return probe.probes.Load() >= 3 }, 5*time.Second, time.Millisecond)
	assert.EqualValues(t, 1, lw.calls.Load(), "no retry before the server answers")
	select {
	case err := <-done:
		t.Fatalf("returned before the server answered: %v", err)
	default:
	}
	probe.up.Store(true)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("not retried after the server answered")
	}
	assert.EqualValues(t, 2, lw.calls.Load())
	assert.EqualValues(t, 1, testutil.ToFloat64(g.errors.WithLabelValues("kartas.run.ai")))
	assert.Contains(t, logs.String(), `msg="watch failing: kartas.run.ai"`)
	assert.Contains(t, logs.String(), "serverAnswered=false")
	assert.Contains(t, logs.String(), `msg="watch recovered: kartas.run.ai"`)
	require.NoError(t, g.Err())
	// The probe loop stops once nobody waits.
	n := probe.probes.Load()
	time.Sleep(50 * time.Millisecond)
	assert.LessOrEqual(t, probe.probes.Load(), n+1)
}

func TestServerAnswersAreHandedBack(t *testing.T) {
	gr := schema.GroupResource{Group: "run.ai", Resource: "kartas"}
	for name, err := range map[string]error{
		"forbidden": apierrors.NewForbidden(gr, "", errors.New("no RBAC")),
		"not found": apierrors.NewNotFound(gr, ""),
		"gone":      apierrors.NewResourceExpired("too old resource version"),
	} {
		t.Run(name, func(t *testing.T) {
			probe := &switchProbe{}
			g, logs, _ := newTestGuard(t, Options{Probe: probe.probe, Bound: time.Nanosecond})
			lw := &flakyLW{errs: []error{err}}
			_, got := g.ListWatch("kartas.run.ai", lw).(cache.ListerWatcherWithContext).ListWithContext(t.Context(), metav1.ListOptions{})
			require.ErrorIs(t, got, err)
			assert.EqualValues(t, 1, lw.calls.Load())
			assert.Zero(t, probe.probes.Load())
			assert.EqualValues(t, 1, testutil.ToFloat64(g.errors.WithLabelValues("kartas.run.ai")))
			assert.Contains(t, logs.String(), "serverAnswered=true")
			// The server answered: readiness is not the guard's to fail.
			assert.NoError(t, g.Err())
		})
	}
}

func TestErrReportsResourcesPastTheBound(t *testing.T) {
	probe := &switchProbe{}
	g, logs, _ := newTestGuard(t, Options{Probe: probe.probe, Bound: 10 * time.Second, LogInterval: 30 * time.Second})
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	g.now = func() time.Time { return *clock.Load() }
	advance := func(d time.Duration) { t := clock.Load().Add(d); clock.Store(&t) }

	g.failed("kartas.run.ai", "watch", refused, true)
	advance(5 * time.Second)
	g.failed("pods", "list", refused, true)
	require.NoError(t, g.Err(), "within the bound")

	advance(6 * time.Second)
	err := g.Err()
	var ue *UnreachableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, []string{"kartas.run.ai"}, ue.Resources)
	assert.Equal(t, "the API server has not answered the watches of kartas.run.ai for 11s: "+refused.Error(), err.Error())
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)

	advance(5 * time.Second)
	require.ErrorAs(t, g.Err(), &ue)
	assert.Equal(t, []string{"kartas.run.ai", "pods"}, ue.Resources, "longest first")

	// Logged once when it started, again only after LogInterval.
	for range 10 {
		g.failed("kartas.run.ai", "watch", refused, true)
	}
	assert.NotContains(t, logs.String(), "watch still failing: kartas.run.ai")
	advance(30 * time.Second)
	g.failed("kartas.run.ai", "watch", refused, true)
	assert.Equal(t, 1, strings.Count(logs.String(), `msg="watch still failing: kartas.run.ai"`))
	assert.Contains(t, logs.String(), "failures=12 sinceLastLog=11")

	g.succeeded("kartas.run.ai")
	g.succeeded("pods")
	assert.NoError(t, g.Err())
	assert.Equal(t, 1, strings.Count(logs.String(), `msg="watch recovered: kartas.run.ai"`))
}

func TestCallEndsWithItsContext(t *testing.T) {
	probe := &switchProbe{}
	g, _, _ := newTestGuard(t, Options{Probe: probe.probe})
	ctx, cancel := context.WithCancel(t.Context())
	lw := &flakyLW{errs: []error{refused}}
	done := make(chan error, 1)
	go func() {
		_, err := g.ListWatch("kartas.run.ai", lw).(cache.ListerWatcherWithContext).WatchWithContext(ctx, metav1.ListOptions{})
		done <- err
	}()
	require.Eventually(t, func() bool { return probe.probes.Load() >= 1 }, 5*time.Second, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, syscall.ECONNREFUSED)
	case <-time.After(5 * time.Second):
		t.Fatal("the call outlived its context")
	}
}

func TestWithoutProbeTheCallRetriesItself(t *testing.T) {
	g, _, _ := newTestGuard(t, Options{})
	lw := &flakyLW{errs: []error{refused, apierrors.NewServiceUnavailable("starting"), refused}}
	_, err := g.ListWatch("kartas.run.ai", lw).(cache.ListerWatcherWithContext).ListWithContext(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, 4, lw.calls.Load())
	assert.EqualValues(t, 3, testutil.ToFloat64(g.errors.WithLabelValues("kartas.run.ai")))
}

func TestGuardsShareTheCounter(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := New(Options{Registerer: reg})
	require.NoError(t, err)
	b, err := New(Options{Registerer: reg})
	require.NoError(t, err)
	a.failed("kartas.run.ai", "watch", refused, true)
	b.failed("kartas.run.ai", "watch", refused, true)
	n, err := testutil.GatherAndCount(reg, "karta_watch_errors_total", "karta_watch_failing")
	require.NoError(t, err)
	assert.Equal(t, 2, n, "one series of each")
	assert.EqualValues(t, 2, testutil.ToFloat64(a.errors.WithLabelValues("kartas.run.ai")))
}

// karta_watch_failing has a series while a resource fails, and none once
// it succeeds again: what a test or an alert waits on to know every watch
// is back, which readiness (failing past the bound) does not say.
func TestFailingGaugeFollowsTheEpisode(t *testing.T) {
	g, _, reg := newTestGuard(t, Options{})
	failing := func() int {
		n, err := testutil.GatherAndCount(reg, "karta_watch_failing")
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, 0, failing())
	g.failed("kartas.run.ai", "watch", refused, true)
	g.failed("pods", "list", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no")), false)
	assert.Equal(t, 2, failing())
	assert.EqualValues(t, 1, testutil.ToFloat64(g.failingNow.WithLabelValues("pods")))
	g.succeeded("kartas.run.ai")
	assert.Equal(t, 1, failing())
	g.succeeded("pods")
	g.succeeded("pods")
	assert.Equal(t, 0, failing())
}

func TestServerDown(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		err  error
		down bool
	}{
		{refused, true},
		{errors.New("http2: client connection lost"), true},
		{apierrors.NewServiceUnavailable("x"), true},
		{apierrors.NewTooManyRequests("x", 1), true},
		{apierrors.NewInternalError(errors.New("x")), true},
		{apierrors.NewTimeoutError("x", 1), true},
		{apierrors.NewForbidden(gr, "", errors.New("x")), false},
		{apierrors.NewNotFound(gr, ""), false},
		{apierrors.NewUnauthorized("x"), false},
		{apierrors.NewResourceExpired("x"), false},
	} {
		assert.Equal(t, tc.down, serverDown(tc.err), "%v", tc.err)
	}
}
