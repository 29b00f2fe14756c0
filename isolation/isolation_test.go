package isolation

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/luaapi"
)

// A worker's answers are the in-process Program's, typed results and
// typed errors alike.
func TestIsolatedAnswersEqualInProcess(t *testing.T) {
	p := compile(t, pytorchKarta(t, ""), interpreter.Options{})
	ip := supervisor(t, Options{}).Program(p)
	running := example(t, "running.yaml")[0]
	pods := example(t, "pods.yaml")
	ctx := bounded(t, time.Minute)

	for _, file := range []string{"created.yaml", "running.yaml", "failed.yaml", "completed.yaml"} {
		obj := example(t, file)[0]
		want, err := p.InterpretStatus(ctx, obj)
		require.NoError(t, err)
		got, err := ip.InterpretStatus(ctx, obj)
		require.NoError(t, err)
		assert.Equal(t, want, got, file)
	}
	wantSpecs, err := p.GetPodSpecs(ctx, running)
	require.NoError(t, err)
	gotSpecs, err := ip.GetPodSpecs(ctx, running)
	require.NoError(t, err)
	assert.Equal(t, wantSpecs, gotSpecs)

	wantGang, err := p.GetGangGroups(ctx, running, pods)
	require.NoError(t, err)
	gotGang, err := ip.GetGangGroups(ctx, running, pods)
	require.NoError(t, err)
	assert.Equal(t, wantGang, gotGang)

	wantPlaced, err := p.PlacePods(ctx, running, pods)
	require.NoError(t, err)
	gotPlaced, err := ip.PlacePods(ctx, running, pods)
	require.NoError(t, err)
	assert.Equal(t, wantPlaced, gotPlaced)

	revisions := pytorchRevisions(t)
	wantRevised, err := p.ReviseSpec(ctx, running, revisions)
	require.NoError(t, err)
	gotRevised, err := ip.ReviseSpec(ctx, running, revisions)
	require.NoError(t, err)
	assert.Equal(t, wantRevised, gotRevised)

	wantPlaced1, err := p.PlacePod(ctx, running, pods[0])
	require.NoError(t, err)
	gotPlaced1, err := ip.PlacePod(ctx, running, pods[0])
	require.NoError(t, err)
	assert.Equal(t, wantPlaced1, gotPlaced1)

	kp, kip := karmada.ForProgram(p), ip.Karmada()
	wantComps, err := kp.GetComponents(ctx, running)
	require.NoError(t, err)
	gotComps, err := kip.GetComponents(ctx, running)
	require.NoError(t, err)
	assert.Equal(t, wantComps, gotComps)

	wantStatus, err := kp.ReflectStatus(ctx, running)
	require.NoError(t, err)
	gotStatus, err := kip.ReflectStatus(ctx, running)
	require.NoError(t, err)
	assert.Equal(t, wantStatus, gotStatus)

	wantHealthy, err := kp.InterpretHealth(ctx, running)
	require.NoError(t, err)
	gotHealthy, err := kip.InterpretHealth(ctx, running)
	require.NoError(t, err)
	assert.Equal(t, wantHealthy, gotHealthy)

	// PyTorchJob has two pod-bearing components: GetReplicas and
	// ReviseReplica are not defined, and the worker's error says so in
	// the same type.
	_, _, wantErr := kp.GetReplicas(ctx, running)
	_, _, gotErr := kip.GetReplicas(ctx, running)
	_, wantReviseErr := kp.ReviseReplica(ctx, running, 7)
	_, gotReviseErr := kip.ReviseReplica(ctx, running, 7)
	for _, errs := range [][2]error{{wantErr, gotErr}, {wantReviseErr, gotReviseErr}} {
		var nd *interpreter.NotDefinedError
		require.ErrorAs(t, errs[0], &nd)
		require.ErrorAs(t, errs[1], &nd)
		assert.Equal(t, errs[0].Error(), errs[1].Error())
	}
}

// A limit inside a worker's call is the call's typed error, not a failure
// of the worker: the worker answers the next call.
func TestLimitInWorkerIsTheCallsError(t *testing.T) {
	k := pytorchKarta(t, "function InterpretStatus(obj) while true do end end")
	p := compile(t, k, interpreter.Options{})
	opts := Options{Workers: 1, Compile: interpreter.Options{Limits: interpreter.Limits{MaxInstructions: 100000}}}
	ip := supervisor(t, opts).Program(p)
	ctx := bounded(t, time.Minute)
	running := example(t, "running.yaml")[0]

	_, err := ip.InterpretStatus(ctx, running)
	var le *luaapi.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, luaapi.KindInstructions, le.Kind)
	var we *WorkerError
	assert.False(t, errors.As(err, &we), "a limit error is not a worker failure: %v", err)
	assert.Equal(t, uint64(1), ip.s.LimitStats(p).Count)

	_, err = ip.GetPodSpecs(ctx, running)
	require.NoError(t, err)
	assert.False(t, ip.CrashLooping())
}

// The crash test: a worker killed (SIGKILL) in the middle of a call
// answers that call with a *WorkerError; a call of another Program in the
// same supervisor is untouched; the next call to the Karta runs on a new
// worker.
func TestWorkerKilledMidCall(t *testing.T) {
	spin := compile(t, pytorchKarta(t, "function InterpretStatus(obj) while true do end end"), interpreter.Options{})
	s := supervisor(t, Options{Compile: interpreter.Options{Limits: interpreter.Limits{MaxInstructions: -1, Timeout: 30 * time.Second}}})
	ip := s.Program(spin)
	bystander := s.Program(compile(t, pytorchKarta(t, ""), interpreter.Options{}))
	ctx := bounded(t, time.Minute)
	running := example(t, "running.yaml")[0]

	done := make(chan error, 1)
	go func() {
		_, err := ip.InterpretStatus(ctx, running)
		done <- err
	}()
	var pid int
	require.Eventually(t, func() bool {
		busy := ip.busyPIDs()
		if len(busy) == 1 {
			pid = busy[0]
		}
		return pid != 0
	}, 30*time.Second, 10*time.Millisecond)
	// The call is in the worker: another Karta's calls run meanwhile.
	_, err := bystander.GetPodSpecs(ctx, running)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	var err2 error
	select {
	case err2 = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end after its worker was killed")
	}
	var we *WorkerError
	require.ErrorAs(t, err2, &we)
	assert.Equal(t, OpInterpretStatus, we.Op)
	assert.Contains(t, we.Reason, "killed")
	var le *luaapi.LimitError
	require.ErrorAs(t, err2, &le)
	assert.Equal(t, KindWorker, le.Kind)
	assert.Equal(t, uint64(1), s.LimitStats(spin).Count)

	// The next call runs on a new worker (GetPodSpecs is not overridden).
	_, err = ip.GetPodSpecs(ctx, running)
	require.NoError(t, err)
	_, err = bystander.GetPodSpecs(ctx, running)
	require.NoError(t, err)
}

// Memory past the worker's RLIMIT_DATA kills the worker, not the caller,
// with a memory limit error.
func TestMemoryLimitKillsWorker(t *testing.T) {
	hog := `function InterpretStatus(obj)
  local t = {}
  local i = 0
  while true do i = i + 1; t[i] = string.rep("x", 4096) .. i end
end`
	p := compile(t, pytorchKarta(t, hog), interpreter.Options{})
	s := supervisor(t, Options{MaxMemory: 192 << 20, Compile: interpreter.Options{Limits: interpreter.Limits{MaxInstructions: -1, MaxMemory: -1, Timeout: 40 * time.Second}}})
	_, err := s.Program(p).InterpretStatus(bounded(t, time.Minute), example(t, "running.yaml")[0])
	var we *WorkerError
	require.ErrorAs(t, err, &we)
	var le *luaapi.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, luaapi.KindMemory, le.Kind, "%v\n%s", err, we.Stderr)
	assert.Contains(t, le.Error(), "RLIMIT_DATA")
}

// CPU time past the worker's RLIMIT_CPU kills the worker (the kernel
// does) when no deadline of karta's would.
func TestCPULimitKillsWorker(t *testing.T) {
	p := compile(t, pytorchKarta(t, "function InterpretStatus(obj) while true do end end"), interpreter.Options{})
	s := supervisor(t, Options{MaxCPU: time.Second, Compile: interpreter.Options{Limits: interpreter.Limits{MaxInstructions: -1, Timeout: -1}}})
	_, err := s.Program(p).InterpretStatus(bounded(t, time.Minute), example(t, "running.yaml")[0])
	var we *WorkerError
	require.ErrorAs(t, err, &we)
	var le *luaapi.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, luaapi.KindDeadline, le.Kind, "%v", err)
	assert.Contains(t, le.Error(), "RLIMIT_CPU")
}

// Workers that keep dying are restarted with backoff: the first restart
// is immediate, the second waits, and a call in the wait fails at once.
func TestRestartBackoff(t *testing.T) {
	p := compile(t, pytorchKarta(t, "function InterpretStatus(obj) while true do end end"), interpreter.Options{})
	s := supervisor(t, Options{MaxCPU: time.Second, Backoff: time.Hour, CrashLoop: 2,
		Compile: interpreter.Options{Limits: interpreter.Limits{MaxInstructions: -1, Timeout: -1}}})
	ip := s.Program(p)
	ctx := bounded(t, time.Minute)
	running := example(t, "running.yaml")[0]
	for range 2 {
		_, err := ip.InterpretStatus(ctx, running)
		var we *WorkerError
		require.ErrorAs(t, err, &we)
	}
	assert.True(t, ip.CrashLooping())
	_, err := ip.GetPodSpecs(ctx, running)
	var we *WorkerError
	require.ErrorAs(t, err, &we)
	assert.Contains(t, we.Reason, "2 worker failures in a row")
	assert.Equal(t, uint64(2), s.LimitStats(p).Count, "a call refused in the backoff ran nothing")
}

// A caller's context that ends while the call waits for a worker ends
// the wait.
func TestWaitForWorkerEndsWithContext(t *testing.T) {
	p := compile(t, pytorchKarta(t, "function InterpretStatus(obj) while true do end end"), interpreter.Options{})
	s := supervisor(t, Options{Workers: 1, Compile: interpreter.Options{Limits: interpreter.Limits{MaxInstructions: -1, Timeout: 5 * time.Second}}})
	ip := s.Program(p)
	running := example(t, "running.yaml")[0]
	go func() { _, _ = ip.InterpretStatus(bounded(t, time.Minute), running) }()
	require.Eventually(t, func() bool { return len(ip.busyPIDs()) == 1 }, 30*time.Second, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := ip.GetPodSpecs(ctx, running)
	var le *luaapi.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, luaapi.KindDeadline, le.Kind)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// Idle workers end after IdleTimeout; a Program that recorded limit
// errors is not forgotten with them, so its count never shrinks.
func TestIdleWorkersEnd(t *testing.T) {
	hostile := compile(t, pytorchKarta(t, "function InterpretStatus(obj) while true do end end"), interpreter.Options{})
	quiet := compile(t, pytorchKarta(t, ""), interpreter.Options{})
	s := supervisor(t, Options{IdleTimeout: 100 * time.Millisecond, Compile: interpreter.Options{Limits: interpreter.Limits{MaxInstructions: 10000}}})
	ctx := bounded(t, time.Minute)
	running := example(t, "running.yaml")[0]
	_, err := s.Program(hostile).InterpretStatus(ctx, running)
	var le *luaapi.LimitError
	require.ErrorAs(t, err, &le)
	_, err = s.Program(quiet).GetPodSpecs(ctx, running)
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		_, kept := s.programs[hostile]
		_, forgotten := s.programs[quiet]
		return kept && !forgotten
	}, 30*time.Second, 10*time.Millisecond)
	ip := s.Program(hostile)
	ip.mu.Lock()
	idle := len(ip.idle)
	ip.mu.Unlock()
	assert.Zero(t, idle, "its worker ended")
	assert.Equal(t, uint64(1), s.LimitStats(hostile).Count)
}
