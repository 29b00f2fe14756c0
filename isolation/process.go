package isolation

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one worker as its supervisor holds it: the child, its pipes
// and the tail of its standard error. It runs one call at a time.
type process struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	inBuf  *bufio.Writer
	out    *bufio.Reader
	stderr *headBuffer
	// exited is closed when the child has been waited for.
	exited chan struct{}
	// killedFor says why the supervisor killed the child ("" if it did
	// not), read after exited.
	killMu    sync.Mutex
	killedFor string
	lastUsed  time.Time
}

// stderrHead is how much of a worker's standard error is kept: a Go
// fatal error's message and its first frames.
const stderrHead = 2 << 10

// start starts a worker and sends it its Karta; it returns once the
// worker has compiled it.
func start(ctx context.Context, o *Options, h *hello) (*process, error) {
	cmd := exec.Command(o.Command, o.Args...)
	cmd.Env = append(append([]string(nil), o.Env...),
		envWorker+"=1",
		envMemory+"="+strconv.FormatInt(o.MaxMemory, 10),
		envCPU+"="+strconv.FormatInt(int64(o.MaxCPU/time.Second), 10))
	p := &process{cmd: cmd, stderr: &headBuffer{max: stderrHead}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.in, p.inBuf, p.out = in, bufio.NewWriter(in), bufio.NewReader(out)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting a worker (%s): %w", o.Command, err)
	}
	go func() {
		_ = cmd.Wait() // the exit status is read from cmd.ProcessState
		close(p.exited)
	}()
	var rp reply
	if err := p.exchange(ctx, o.StartTimeout, h, &rp); err != nil {
		return p, err // errFailed: the caller asks p why
	}
	if rp.Error != nil {
		p.kill("")
		return nil, fmt.Errorf("the worker could not compile the Karta: %w", rp.Error.err())
	}
	return p, nil
}

// errFailed is exchange's error when the worker died or was killed; the
// caller asks failure why.
var errFailed = errors.New("worker failed")

// exchange sends v and reads the answer into rp. The worker has until
// limit after ctx ends (or after timeout, when positive) to answer; past
// that it is killed. Any failure of the worker kills it and returns
// errFailed.
func (p *process) exchange(ctx context.Context, timeout time.Duration, v any, rp *reply) error {
	if err := writeFrame(p.inBuf, v); err != nil || p.inBuf.Flush() != nil {
		p.kill("")
		return errFailed
	}
	got := make(chan error, 1)
	go func() { got <- readFrame(p.out, rp) }()
	var stop <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		stop = t.C
	}
	done := ctx.Done()
	for {
		select {
		case err := <-got:
			if err != nil {
				p.kill("")
				return errFailed
			}
			return nil
		case <-done:
			done = nil
			t := time.NewTimer(deadlineGrace)
			defer t.Stop()
			stop = t.C
		case <-stop:
			p.kill(fmt.Sprintf("killed: no answer %s after the call's deadline", deadlineGrace))
			<-got
			return errFailed
		}
	}
}

// deadlineGrace is how long a worker has to answer after its call's
// deadline: the worker's own Program ends the call on the deadline, so
// one that is still silent is stuck in work the deadline does not see.
const deadlineGrace = time.Second

// kill kills the worker (reason says why, for the error; "" when it had
// already failed) and waits for it.
func (p *process) kill(reason string) {
	p.killMu.Lock()
	if p.killedFor == "" {
		p.killedFor = reason
	}
	p.killMu.Unlock()
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// close ends an idle worker: its input closes, and it exits.
func (p *process) close() {
	_ = p.in.Close()
	select {
	case <-p.exited:
	case <-time.After(time.Second):
		p.kill("")
	}
}

// failure describes how the worker ended, as a WorkerError of op's call
// under the limits of o.
func (p *process) failure(karta string, op Op, o *Options) *WorkerError {
	<-p.exited
	st := p.cmd.ProcessState
	e := &WorkerError{Karta: karta, Op: op, Stderr: p.stderr.String()}
	p.killMu.Lock()
	killedFor := p.killedFor
	p.killMu.Unlock()
	reason := st.String() // "exit status 2", "signal: killed"
	if killedFor != "" {
		reason = killedFor
	}
	if msg := fatalMessage(e.Stderr); msg != "" {
		reason += ": " + msg
	}
	e.Reason = reason
	e.Limit = classify(karta, op, o, st, killedFor, e.Stderr, reason)
	return e
}

// fatalMessage is the first line of a Go runtime's fatal error or panic in
// a worker's standard error, "" when there is none.
func fatalMessage(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		for _, prefix := range []string{"fatal error: ", "panic: ", "runtime: "} {
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
	}
	return ""
}

// signaled reports the signal that ended the process, if any.
func signaled(st *os.ProcessState) (syscall.Signal, bool) {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return ws.Signal(), true
}

// headBuffer keeps the first max bytes written to it: a Go runtime's
// fatal error comes first, its goroutines' traces after.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *headBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - len(t.b); room > 0 {
		t.b = append(t.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

func (t *headBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
