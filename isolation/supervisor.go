package isolation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// Defaults of Options.
const (
	DefaultMaxMemory    = 512 << 20
	DefaultMaxCPU       = time.Minute
	DefaultWorkers      = 2
	DefaultStartTimeout = 30 * time.Second
	DefaultIdleTimeout  = 5 * time.Minute
	DefaultBackoff      = 100 * time.Millisecond
	DefaultMaxBackoff   = 30 * time.Second
	DefaultCrashLoop    = 3
)

// Options configure a Supervisor. A zero field takes its default.
type Options struct {
	// Command is the worker's binary (default os.Executable(): the
	// program re-executes itself; its main calls RunWorkerIfChild), and
	// Args its arguments.
	Command string
	Args    []string
	// Env is the worker's environment (default os.Environ()); the
	// supervisor adds its own variables.
	Env []string
	// Compile configures each worker's Program (its Scripts, Limits,
	// AllowKindMismatch; PoolSize is 1, a worker runs one call at a
	// time). Use the options the parent's Programs were compiled with.
	Compile interpreter.Options
	// MaxMemory is the worker's RLIMIT_DATA in bytes (default
	// DefaultMaxMemory): its heap and stacks.
	MaxMemory int64
	// MaxCPU is the worker's RLIMIT_CPU, whole seconds (default
	// DefaultMaxCPU). It counts over the worker's life: a worker that has
	// used half of it is replaced after its call, so one call may use at
	// least half. A call's own deadline is Compile.Limits.Timeout; a
	// worker silent past it (plus a second) is killed.
	MaxCPU time.Duration
	// Workers is the most workers of one Karta (default DefaultWorkers),
	// which is also the most of its calls running at once; more wait.
	Workers int
	// StartTimeout bounds a worker's start and compilation of its Karta.
	StartTimeout time.Duration
	// IdleTimeout is how long an unused worker lives.
	IdleTimeout time.Duration
	// Backoff is the wait before the second restart in a row of a
	// Karta's worker, doubling with each further failure up to
	// MaxBackoff (the first restart is immediate). A call that comes in
	// the wait fails at once with a *WorkerError.
	Backoff, MaxBackoff time.Duration
	// CrashLoop is how many failures in a row mark a Karta as crash
	// looping (Program.CrashLooping).
	CrashLoop int
}

func (o Options) withDefaults() (Options, error) {
	if o.Command == "" {
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("finding the worker binary: %w", err)
		}
		o.Command = exe
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MaxCPU <= 0 {
		o.MaxCPU = DefaultMaxCPU
	}
	o.MaxCPU = o.MaxCPU.Round(time.Second)
	if o.MaxCPU < time.Second {
		o.MaxCPU = time.Second
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.CrashLoop <= 0 {
		o.CrashLoop = DefaultCrashLoop
	}
	return o, nil
}

// Supervisor runs the calls of isolated Programs in worker processes. It
// is safe for concurrent use; Close ends its workers.
type Supervisor struct {
	opts Options

	mu       sync.Mutex
	programs map[*interpreter.Program]*Program
	closed   bool
	stop     chan struct{}
	reaped   chan struct{}
}

// ErrClosed is the error of a call after the Supervisor closed.
var ErrClosed = errors.New("isolation: supervisor closed")

// NewSupervisor returns a Supervisor; it starts no worker until a call
// needs one.
func NewSupervisor(opts Options) (*Supervisor, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Supervisor{opts: o, programs: map[*interpreter.Program]*Program{}, stop: make(chan struct{}), reaped: make(chan struct{})}
	go s.reap()
	return s, nil
}

// Program is p's calls in workers: the Karta p was compiled from, compiled
// again in each worker with the Supervisor's Compile options. The same p
// gives the same *Program.
func (s *Supervisor) Program(p *interpreter.Program) *Program {
	s.mu.Lock()
	defer s.mu.Unlock()
	ip := s.programs[p]
	if ip == nil {
		ip = &Program{s: s, p: p, slots: make(chan struct{}, s.opts.Workers), lastUsed: time.Now(),
			hello: hello{Karta: p.Karta(), Scripts: s.opts.Compile.Scripts, Limits: s.opts.Compile.Limits, AllowKindMismatch: s.opts.Compile.AllowKindMismatch}}
		s.programs[p] = ip
	}
	return ip
}

// LimitStats is p.LimitStats() (its calls in process) merged with those
// of its calls in workers that ended on a limit or killed their worker
// (whose Last is the *luaapi.LimitError of the *WorkerError). The
// controller's Evaluating condition reads it.
func (s *Supervisor) LimitStats(p *interpreter.Program) interpreter.LimitStats {
	st := p.LimitStats()
	s.mu.Lock()
	ip := s.programs[p]
	s.mu.Unlock()
	if ip == nil {
		return st
	}
	ist := ip.limitStats()
	st.Count += ist.Count
	if ist.Last != nil && (st.Last == nil || ist.LastAt.After(st.LastAt)) {
		st.Last, st.LastAt = ist.Last, ist.LastAt
	}
	return st
}

// Close ends the idle workers; a call in flight finishes and its worker
// ends after it. Later calls fail with ErrClosed.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	ps := s.programs
	s.programs = map[*interpreter.Program]*Program{}
	s.mu.Unlock()
	<-s.reaped
	for _, ip := range ps {
		ip.closeAll()
	}
	return nil
}

func (s *Supervisor) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// reap ends the workers idle longer than IdleTimeout, and forgets the
// Programs without workers, calls or limit errors for as long.
func (s *Supervisor) reap() {
	defer close(s.reaped)
	t := time.NewTicker(s.opts.IdleTimeout / 2)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			ps := make([]*Program, 0, len(s.programs))
			for _, ip := range s.programs {
				ps = append(ps, ip)
			}
			s.mu.Unlock()
			for _, ip := range ps {
				if ip.reapIdle(now.Add(-s.opts.IdleTimeout)) {
					s.mu.Lock()
					if s.programs[ip.p] == ip {
						delete(s.programs, ip.p)
					}
					s.mu.Unlock()
				}
			}
		}
	}
}

// Program runs one Karta's calls in its workers.
type Program struct {
	s     *Supervisor
	p     *interpreter.Program
	hello hello
	// slots hold a token per call running: at most Options.Workers.
	slots chan struct{}

	mu   sync.Mutex
	idle []*process
	// busy are the workers running a call.
	busy map[*process]struct{}
	// failures counts the worker failures in a row; retryAt is when the
	// next worker may start.
	failures int
	retryAt  time.Time
	lastUsed time.Time
	rec      limitRecord
}

// Name is the Karta's name.
func (ip *Program) Name() string { return ip.p.Name() }

// Karta is the Karta the workers compile. Do not modify it.
func (ip *Program) Karta() *karta.Karta { return ip.p.Karta() }

// CrashLooping reports whether the Karta's last Options.CrashLoop calls
// all killed their workers.
func (ip *Program) CrashLooping() bool {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	return ip.failures >= ip.s.opts.CrashLoop
}

// call runs req in a worker and decodes its result into out.
func (ip *Program) call(ctx context.Context, req *request, out any) error {
	if ip.s.isClosed() {
		return ErrClosed
	}
	select {
	case ip.slots <- struct{}{}:
	case <-ctx.Done():
		return &luaapi.LimitError{Karta: ip.Name(), Hook: string(req.Op), Kind: luaapi.KindDeadline, Limit: "waiting for a worker", Cause: ctx.Err()}
	}
	defer func() { <-ip.slots }()

	if err := ip.resolveReferences(ctx, req); err != nil {
		return err
	}
	w, err := ip.worker(ctx, req.Op)
	if err != nil {
		return err
	}
	ip.setBusy(w, true)
	defer ip.setBusy(w, false)
	timeout := ip.s.opts.Compile.Limits.WithDefaults().Timeout
	if d, ok := ctx.Deadline(); ok {
		req.TimeoutNanos = int64(time.Until(d))
		if req.TimeoutNanos <= 0 {
			req.TimeoutNanos = 1
		}
		if timeout <= 0 || time.Duration(req.TimeoutNanos) < timeout {
			timeout = time.Duration(req.TimeoutNanos)
		}
	}
	if timeout > 0 {
		timeout += deadlineGrace
	}
	var rp reply
	if err := w.exchange(ctx, timeout, req, &rp); err != nil {
		return ip.failed(w, req.Op)
	}
	ip.succeeded(w, rp.Retire)
	if rp.Error != nil {
		err := rp.Error.err()
		ip.noteLimit(ctx, err)
		return err
	}
	if err := decodeJSON(rp.Result, out); err != nil {
		return fmt.Errorf("karta %q: %s: decoding the worker's result: %w", ip.Name(), req.Op, err)
	}
	return nil
}

// worker is an idle worker, or a new one unless the Karta's workers are
// in their restart backoff.
func (ip *Program) worker(ctx context.Context, op Op) (*process, error) {
	ip.mu.Lock()
	ip.lastUsed = time.Now()
	if n := len(ip.idle); n > 0 {
		w := ip.idle[n-1]
		ip.idle = ip.idle[:n-1]
		ip.mu.Unlock()
		return w, nil
	}
	failures, retryAt := ip.failures, ip.retryAt
	ip.mu.Unlock()
	if wait := time.Until(retryAt); wait > 0 {
		return nil, &WorkerError{Karta: ip.Name(), Op: op,
			Reason: fmt.Sprintf("%d worker failures in a row: the next worker starts in %s", failures, wait.Round(time.Millisecond)),
			Limit:  &luaapi.LimitError{Karta: ip.Name(), Hook: string(op), Kind: KindWorker, Limit: "restart backoff"}}
	}
	w, err := start(ctx, &ip.s.opts, &ip.hello)
	if err != nil {
		if errors.Is(err, errFailed) {
			return nil, ip.failed(w, op)
		}
		return nil, &WorkerError{Karta: ip.Name(), Op: op, Reason: err.Error(),
			Limit: &luaapi.LimitError{Karta: ip.Name(), Hook: string(op), Kind: KindWorker, Limit: "start", Cause: err}}
	}
	return w, nil
}

// failed records a worker's failure, sets the restart backoff and returns
// the call's error.
func (ip *Program) failed(w *process, op Op) error {
	we := w.failure(ip.Name(), op, &ip.s.opts)
	ip.mu.Lock()
	ip.failures++
	if ip.failures > 1 {
		ip.retryAt = time.Now().Add(min(ip.s.opts.Backoff<<(ip.failures-2), ip.s.opts.MaxBackoff))
	}
	ip.mu.Unlock()
	ip.rec.note(we.Limit)
	return we
}

// succeeded returns a worker that answered to the idle ones (or retires
// it) and clears the failures.
func (ip *Program) succeeded(w *process, retire bool) {
	ip.mu.Lock()
	ip.failures, ip.retryAt = 0, time.Time{}
	w.lastUsed = time.Now()
	if !retire && !ip.s.isClosed() {
		ip.idle = append(ip.idle, w)
		w = nil
	}
	ip.mu.Unlock()
	if w != nil {
		go w.close()
	}
}

// noteLimit records a limit error a worker's call returned, unless the
// caller's context ended first (the caller's doing).
func (ip *Program) noteLimit(ctx context.Context, err error) {
	var le *luaapi.LimitError
	if !errors.As(err, &le) || (le.Kind == luaapi.KindDeadline && ctx.Err() != nil) {
		return
	}
	ip.rec.note(le)
}

func (ip *Program) setBusy(w *process, busy bool) {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if busy {
		if ip.busy == nil {
			ip.busy = map[*process]struct{}{}
		}
		ip.busy[w] = struct{}{}
	} else {
		delete(ip.busy, w)
	}
}

func (ip *Program) limitStats() interpreter.LimitStats { return ip.rec.stats() }

// reapIdle closes the workers idle since before; it reports whether the
// Program is unused since then too and may be forgotten: not when it
// holds limit errors, whose count LimitStats must never see shrink.
func (ip *Program) reapIdle(before time.Time) bool {
	ip.mu.Lock()
	var keep, old []*process
	for _, w := range ip.idle {
		if w.lastUsed.Before(before) {
			old = append(old, w)
		} else {
			keep = append(keep, w)
		}
	}
	ip.idle = keep
	unused := len(keep) == 0 && len(ip.slots) == 0 && ip.lastUsed.Before(before)
	ip.mu.Unlock()
	unused = unused && ip.rec.stats().Count == 0
	for _, w := range old {
		w.close()
	}
	return unused
}

func (ip *Program) closeAll() {
	ip.mu.Lock()
	idle := ip.idle
	ip.idle = nil
	ip.mu.Unlock()
	for _, w := range idle {
		w.close()
	}
}

// limitRecord is the count and the last of a Program's limit errors in
// workers.
type limitRecord struct {
	mu     sync.Mutex
	count  uint64
	last   luaapi.LimitError
	lastAt time.Time
}

func (r *limitRecord) note(le *luaapi.LimitError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	r.last, r.lastAt = *le, time.Now()
}

func (r *limitRecord) stats() interpreter.LimitStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := interpreter.LimitStats{Count: r.count, LastAt: r.lastAt}
	if r.count > 0 {
		last := r.last
		st.Last = &last
	}
	return st
}

// resolveReferences resolves the Karta's references for the request's
// object with the resolver ctx carries, here, where the cache is, and
// puts the objects in the request for the worker.
func (ip *Program) resolveReferences(ctx context.Context, req *request) error {
	if !ip.p.HasReferences() || req.Object == nil {
		return nil
	}
	refs, err := ip.p.ResolveReferences(ctx, obj(req.Object))
	if err != nil {
		return err
	}
	req.References = objects(refs)
	return nil
}
