// Package watchguard keeps the informers of one API server quick to recover
// and honest while they cannot reach it.
//
// client-go's reflector retries a watch that failed for want of a server
// (connection refused, 429) with an exponential backoff of up to 30 s with
// jitter, and a relist after a failed list the same way: after a 20 s
// outage a controller took 47–56 s to see a change, and nothing said so.
// A Guard wraps each informer's ListerWatcher instead. A list or watch that
// fails because the server does not answer is not handed back to the
// reflector (whose backoff would grow); the call waits for the server,
// probed by one cheap request (the API server's /readyz) every
// ProbeInterval however many informers wait, and is retried as soon as the
// server answers. Every failure is counted (karta_watch_errors_total by
// resource) and logged, once when a resource starts failing, then at most
// once per LogInterval, and once when it recovers. Err reports the
// resources the server has not answered for longer than Bound, for a
// readiness probe.
//
// Errors the server itself returns (forbidden, not found, gone) are
// counted, logged and handed back to the reflector as before: they are
// answers, and the reflector's handling of them (a relist after 410
// Gone, the informer's watch error handler) is right for them.
package watchguard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// Defaults of Options.
const (
	DefaultBound         = 10 * time.Second
	DefaultProbeInterval = 500 * time.Millisecond
	DefaultMaxRetryDelay = 4 * time.Second
	DefaultLogInterval   = 30 * time.Second
)

// ReadyzProbe is a Probe that asks the API server client talks to for
// /readyz, which every client may read (system:public-info-viewer).
func ReadyzProbe(client rest.Interface) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		return client.Get().AbsPath("/readyz").Do(ctx).Error()
	}
}

// probeTimeout caps one probe: a server that hangs (its etcd paused) is
// asked again rather than waited on.
const probeTimeout = 2 * time.Second

// Options configure New. The zero value gives the defaults.
type Options struct {
	// Probe asks the API server whether it answers (GET /readyz: see
	// ReadyzProbe). Without one, a failed call is retried on its own
	// after ProbeInterval.
	Probe func(ctx context.Context) error
	// Logger receives the log records (default: none).
	Logger *slog.Logger
	// Registerer, when set, gets karta_watch_errors_total and
	// karta_watch_failing. Guards of one process may share a Registerer:
	// each metric is registered once.
	Registerer prometheus.Registerer
	// Bound is how long the server may fail to answer a resource's list
	// or watch before Err reports it (default DefaultBound).
	Bound time.Duration
	// ProbeInterval is how often the server is probed while calls wait
	// for it (default DefaultProbeInterval).
	ProbeInterval time.Duration
	// MaxRetryDelay caps the delay between retries of a call the server
	// keeps refusing although it answers the probe (a resource not served
	// yet after a restart) (default DefaultMaxRetryDelay).
	MaxRetryDelay time.Duration
	// LogInterval is how often a resource that keeps failing is logged
	// again (default DefaultLogInterval).
	LogInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Bound <= 0 {
		o.Bound = DefaultBound
	}
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = DefaultProbeInterval
	}
	if o.MaxRetryDelay <= 0 {
		o.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if o.LogInterval <= 0 {
		o.LogInterval = DefaultLogInterval
	}
	return o
}

// Guard watches over the informers of one API server. Create it with New;
// it is safe for concurrent use.
type Guard struct {
	opts   Options
	log    *slog.Logger
	errors *prometheus.CounterVec
	// failingNow is 1 for each resource whose last list or watch failed.
	failingNow *prometheus.GaugeVec
	now        func() time.Time

	mu sync.Mutex
	// failing are the resources whose last list or watch failed.
	failing map[string]*episode
	// answered is closed, and replaced, when a probe succeeds.
	answered chan struct{}
	// waiters count the calls waiting for the server; the probe loop runs
	// while there are any (stop ends it).
	waiters int
	stop    chan struct{}
}

// episode is a run of failures of one resource.
type episode struct {
	since, lastLog time.Time
	failures       int
	// suppressed counts the failures since the last log line.
	suppressed int
	// unreachable: the last failure was the server not answering.
	unreachable bool
	err         error
}

// New returns a Guard. It fails only when the Registerer refuses the
// counter.
func New(opts Options) (*Guard, error) {
	opts = opts.withDefaults()
	g := &Guard{opts: opts, log: opts.Logger, now: time.Now, failing: map[string]*episode{}, answered: make(chan struct{})}
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "karta", Name: "watch_errors_total",
		Help: "Lists and watches of the API server that failed, by resource (RESOURCE.GROUP).",
	}, []string{"resource"})
	failing := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "karta", Name: "watch_failing",
		Help: "1 for each resource (RESOURCE.GROUP) whose last list or watch failed and has not succeeded since.",
	}, []string{"resource"})
	var err error
	if g.errors, err = register(opts.Registerer, errs); err != nil {
		return nil, err
	}
	if g.failingNow, err = register(opts.Registerer, failing); err != nil {
		return nil, err
	}
	return g, nil
}

// register registers c with r, if any, and returns the collector to use:
// c, or the one of the same name registered before by another Guard of
// the process, which the Guards then share.
func register[C prometheus.Collector](r prometheus.Registerer, c C) (C, error) {
	if r == nil {
		return c, nil
	}
	err := r.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("watchguard: %w", err)
}

// Err is nil unless the server has not answered a resource's list or
// watch for longer than Bound; then it names them, oldest first.
func (g *Guard) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	type late struct {
		resource string
		for_     time.Duration
		err      error
	}
	var lates []late
	for r, e := range g.failing {
		if d := now.Sub(e.since); e.unreachable && d > g.opts.Bound {
			lates = append(lates, late{r, d, e.err})
		}
	}
	if len(lates) == 0 {
		return nil
	}
	slices.SortFunc(lates, func(a, b late) int {
		if c := cmp.Compare(b.for_, a.for_); c != 0 {
			return c
		}
		return strings.Compare(a.resource, b.resource)
	})
	names := make([]string, len(lates))
	for i, l := range lates {
		names[i] = l.resource
	}
	return &UnreachableError{Resources: names, For: lates[0].for_.Truncate(time.Second), Err: lates[0].err}
}

// UnreachableError is Err's: the server has not answered the lists or
// watches of Resources for For (the longest) or more.
type UnreachableError struct {
	Resources []string
	For       time.Duration
	Err       error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the API server has not answered the watches of %s for %s: %v", strings.Join(e.Resources, ", "), e.For, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// failed records a failed call of resource.
func (g *Guard) failed(resource, verb string, err error, unreachable bool) {
	g.errors.WithLabelValues(resource).Inc()
	g.mu.Lock()
	defer g.mu.Unlock()
	// Under the lock, so that it follows the order of failed and succeeded.
	g.failingNow.WithLabelValues(resource).Set(1)
	now := g.now()
	e := g.failing[resource]
	if e == nil {
		e = &episode{since: now, lastLog: now}
		g.failing[resource] = e
		e.failures, e.unreachable, e.err = 1, unreachable, err
		g.log.Warn("watch failing: "+resource, "resource", resource, "verb", verb, "serverAnswered", !unreachable, "err", err)
		return
	}
	e.failures++
	e.suppressed++
	e.unreachable, e.err = unreachable, err
	if now.Sub(e.lastLog) >= g.opts.LogInterval {
		g.log.Warn("watch still failing: "+resource, "resource", resource, "verb", verb, "for", now.Sub(e.since).Truncate(time.Millisecond).String(),
			"failures", e.failures, "sinceLastLog", e.suppressed, "serverAnswered", !unreachable, "err", err)
		e.lastLog, e.suppressed = now, 0
	}
}

// succeeded ends resource's episode of failures, if any.
func (g *Guard) succeeded(resource string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.failing[resource]
	if e == nil {
		return
	}
	delete(g.failing, resource)
	g.failingNow.DeleteLabelValues(resource)
	g.log.Info("watch recovered: "+resource, "resource", resource, "after", g.now().Sub(e.since).Truncate(time.Millisecond).String(), "failures", e.failures)
}

// serverDown reports whether err means the server did not answer the call
// (or answered that it cannot serve it now): the call is worth retrying as
// soon as it answers. Any other status is the server's answer.
func serverDown(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // no answer: refused, reset, EOF, TLS, timeout
	}
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsUnexpectedServerError(err)
}

// waitServer waits until the server answers a probe started after the
// call, then delay more; false when ctx ended first.
func (g *Guard) waitServer(ctx context.Context, delay time.Duration) bool {
	if g.opts.Probe == nil {
		return sleep(ctx, max(delay, g.opts.ProbeInterval))
	}
	answered := g.wait()
	defer g.unwait()
	select {
	case <-ctx.Done():
		return false
	case <-answered:
	}
	return sleep(ctx, delay)
}

// wait registers a waiting call, starting the probe loop if it is not
// running, and returns the channel the next successful probe closes.
func (g *Guard) wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiters++
	if g.stop == nil {
		g.stop = make(chan struct{})
		go g.probeLoop(g.stop)
	}
	return g.answered
}

func (g *Guard) unwait() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiters--
	if g.waiters == 0 && g.stop != nil {
		close(g.stop)
		g.stop = nil
	}
}

// probeLoop probes the server every ProbeInterval until nobody waits.
// A success wakes the calls waiting then.
func (g *Guard) probeLoop(stop <-chan struct{}) {
	t := time.NewTicker(g.opts.ProbeInterval)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		err := g.opts.Probe(ctx)
		cancel()
		if err == nil {
			g.mu.Lock()
			close(g.answered)
			g.answered = make(chan struct{})
			g.mu.Unlock()
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
