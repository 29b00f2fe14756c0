package watchguard

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
)

// DefaultKlogInterval is how often, at most, RouteKlog passes on records
// with the same message.
const DefaultKlogInterval = 30 * time.Second

// RouteKlog sends client-go's log records (klog: the reflector's, leader
// election's) to log, under the attribute component=client-go, each
// message at most once per DefaultKlogInterval (the next one that passes
// says how many were dropped): during an outage leader election alone
// retries, and logs, every two seconds. The returned function sends them
// back to where they went before (nowhere, in karta).
//
// klog's logger is a process global that every informer reads: it is set
// once, to a handler that forwards to the route of the moment, and
// RouteKlog swaps the route atomically — so commands that run side by
// side in one process (the CLI's tests) do not race on klog's global.
func RouteKlog(log *slog.Logger) (restore func()) {
	klogOnce.Do(func() { klog.SetSlogLogger(slog.New(klogSwitch{})) })
	var h slog.Handler = &limitedHandler{next: log.With("component", "client-go").Handler(), state: &limitState{
		interval: DefaultKlogInterval, now: time.Now, last: map[string]*seen{},
	}}
	mine := &h
	prev := klogRoute.Swap(mine)
	return func() { klogRoute.CompareAndSwap(mine, prev) }
}

var (
	klogOnce sync.Once
	// klogRoute is where klog's records go now; nil drops them.
	klogRoute atomic.Pointer[slog.Handler]
)

// klogSwitch is klog's one handler: it passes each record to the route of
// the moment (klogRoute), with the attributes and groups klog added, in
// their order.
type klogSwitch struct {
	with []func(slog.Handler) slog.Handler
}

func (k klogSwitch) route() slog.Handler {
	p := klogRoute.Load()
	if p == nil {
		return nil
	}
	h := *p
	for _, f := range k.with {
		h = f(h)
	}
	return h
}

func (k klogSwitch) Enabled(ctx context.Context, l slog.Level) bool {
	h := k.route()
	return h != nil && h.Enabled(ctx, l)
}

func (k klogSwitch) Handle(ctx context.Context, r slog.Record) error {
	if h := k.route(); h != nil {
		return h.Handle(ctx, r)
	}
	return nil
}

func (k klogSwitch) WithAttrs(attrs []slog.Attr) slog.Handler {
	return klogSwitch{with: append(k.with[:len(k.with):len(k.with)], func(h slog.Handler) slog.Handler { return h.WithAttrs(attrs) })}
}

func (k klogSwitch) WithGroup(name string) slog.Handler {
	return klogSwitch{with: append(k.with[:len(k.with):len(k.with)], func(h slog.Handler) slog.Handler { return h.WithGroup(name) })}
}

// limitedHandler passes a record on unless one with the same message
// passed less than interval ago.
type limitedHandler struct {
	next  slog.Handler
	state *limitState
}

type limitState struct {
	interval time.Duration
	now      func() time.Time
	mu       sync.Mutex
	last     map[string]*seen
}

type seen struct {
	at      time.Time
	dropped int
}

// maxMessages bounds the messages remembered; past it the memory starts
// afresh (messages are the callers' constant texts, so this is rare).
const maxMessages = 1024

func (h *limitedHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *limitedHandler) Handle(ctx context.Context, r slog.Record) error {
	s := h.state
	s.mu.Lock()
	now := s.now()
	e := s.last[r.Message]
	if e != nil && now.Sub(e.at) < s.interval {
		e.dropped++
		s.mu.Unlock()
		return nil
	}
	dropped := 0
	if e != nil {
		dropped = e.dropped
	}
	if len(s.last) >= maxMessages {
		clear(s.last)
	}
	s.last[r.Message] = &seen{at: now}
	s.mu.Unlock()
	if dropped > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("dropped", dropped))
	}
	return h.next.Handle(ctx, r)
}

func (h *limitedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &limitedHandler{next: h.next.WithAttrs(attrs), state: h.state}
}

func (h *limitedHandler) WithGroup(name string) slog.Handler {
	return &limitedHandler{next: h.next.WithGroup(name), state: h.state}
}
