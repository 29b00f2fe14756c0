package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/isolation"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
)

// spinKind is the kind of spinScript's Karta.
const spinKind = "HostileSpin"

// spinScript's InterpretStatus spins for ever on an object labelled
// spin, and is the generated one otherwise.
const spinScript = `function InterpretStatus(obj)
  if obj.metadata.labels ~= nil and obj.metadata.labels.spin == "yes" then
    while true do end
  end
  return karta.generated.InterpretStatus(obj)
end`

// spinRegistry is the built-ins and the spinning Karta compiled with opts.
func spinRegistry(t *testing.T, opts interpreter.Options) (*interpreter.Registry, *interpreter.Program) {
	t.Helper()
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	ks, err := karta.Load([]byte(hostileKarta("hostile-spin", spinKind, `.status.phase == "Running"`, spinScript)), "hostile-spin")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], opts)
	require.NoError(t, err)
	require.Nil(t, reg.Put(p))
	return reg, p
}

// spinReview is a request of op about the spinning kind's object, which
// spins when spin is set.
func spinReview(t *testing.T, uid string, op karmada.Operation, spin bool) []byte {
	t.Helper()
	body := hostileReview(t, uid, op, spinKind)
	if !spin {
		return body
	}
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	obj := doc["request"].(map[string]any)["object"].(map[string]any)
	md := obj["metadata"].(map[string]any)
	md["labels"] = map[string]any{"spin": "yes"}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// workerPIDs are this process's children that are isolation workers.
func workerPIDs(t *testing.T) []int {
	t.Helper()
	var pids []int
	dirs, err := filepath.Glob("/proc/[0-9]*")
	require.NoError(t, err)
	for _, dir := range dirs {
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue // gone
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil || !bytes.Contains(env, []byte("KARTA_ISOLATION_WORKER=1")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		pids = append(pids, pid)
	}
	return pids
}

// An isolated Program answers every request as the same Program in
// process.
func TestIsolatedKartasAnswerAsInProcess(t *testing.T) {
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	sup, err := isolation.NewSupervisor(isolation.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	inProcess := New(Options{}, Kartas{Registry: reg})
	isolated := New(Options{}, Kartas{Registry: reg, Workers: sup})
	const job = "../examples/pytorchjob/running.yaml"
	for _, op := range []karmada.Operation{karmada.OpInterpretHealth, karmada.OpInterpretComponent, karmada.OpInterpretStatus,
		karmada.OpInterpretDependency, karmada.OpInterpretReplica, karmada.OpReviseReplica} {
		body := kartaReview(t, "u-"+string(op), op, job, map[string]any{"replicas": 3})
		wantCode, want := post(t, inProcess, body)
		gotCode, got := post(t, isolated, body)
		assert.Equal(t, wantCode, gotCode, op)
		assert.Equal(t, want, got, op)
	}
}

// The crash test at the server: the worker of a Karta killed (SIGKILL)
// in the middle of a request fails that request with a worker error; the
// server answers the built-ins meanwhile and after, and the next request
// to the Karta runs on a new worker.
func TestWorkerKilledMidRequest(t *testing.T) {
	opts := interpreter.Options{Limits: interpreter.Limits{Timeout: 30 * time.Second, MaxInstructions: -1}}
	reg, spin := spinRegistry(t, opts)
	sup, err := isolation.NewSupervisor(isolation.Options{Compile: opts})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sup.Close() })
	srv := httptest.NewServer(New(Options{}, Kartas{Registry: reg, Workers: sup,
		Isolate: func(p *interpreter.Program) bool { return p == spin }}))
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: time.Minute}

	answered := make(chan *ResourceInterpreterResponse, 1)
	go func() {
		resp, err := call(client, srv.URL, spinReview(t, "spin", karmada.OpInterpretHealth, true))
		assert.NoError(t, err)
		answered <- resp
	}()
	var pids []int
	require.Eventually(t, func() bool { pids = workerPIDs(t); return len(pids) == 1 }, 30*time.Second, 10*time.Millisecond)
	builtinLatencies(t, client, srv.URL, 5, 5, nil) // served while the worker spins
	require.NoError(t, syscallKill(pids[0]))

	var resp *ResourceInterpreterResponse
	select {
	case resp = <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("the request was not answered after its worker was killed")
	}
	require.NotNil(t, resp)
	assert.False(t, resp.Successful)
	require.NotNil(t, resp.Status)
	assert.EqualValues(t, http.StatusInternalServerError, resp.Status.Code)
	assert.Contains(t, resp.Status.Message, `karta "hostile-spin": InterpretHealth: worker process failed: signal: killed`)
	assert.Contains(t, resp.Status.Message, "ended on the worker limit")

	builtinLatencies(t, client, srv.URL, 5, 5, nil)
	resp, err = call(client, srv.URL, spinReview(t, "again", karmada.OpInterpretHealth, false))
	require.NoError(t, err)
	assert.True(t, resp.Successful, "the next request runs on a new worker: %+v", resp.Status)
	assert.NotEqual(t, pids, workerPIDs(t))
}

// Fairness: a hostile Karta's requests at full concurrency (each spinning
// to its deadline in process) raise a bystander built-in's latency by at
// most a bounded factor when each kind may run one evaluation at a time;
// the hostile requests over the bound are refused with 429.
//
// The load: fairClients clients sending the hostile Karta's requests
// back to back (after a 429 they wait 100 ms, as a client that backs off
// does; Retry-After asks for a second), while one client sends the
// bystander's requests one after the other. The bound: the bystander's
// p50 under the load within 5 times (25 under the race detector) that
// measured in the same trial without it; the machine is shared, so the
// best of five trials counts. Its p90 and p99 are logged, not
// asserted: on a loaded machine they measure the operating system's
// scheduling of the process's threads as much as karta's (docs/security.md,
// "Fairness", has the figures; without the bound the same load raised the
// bystander's p50 400–550 times, with it 0.6–0.9 times, on a 2-core
// runner at load average 20–25).
func TestFairnessBoundsBystanderLatency(t *testing.T) {
	const (
		fairClients = 8
		samples     = 150
		trials      = 5
	)
	bound := 5
	if raceEnabled {
		bound = 25
	}
	reg, _ := spinRegistry(t, interpreter.Options{Limits: interpreter.Limits{Timeout: 200 * time.Millisecond, MaxInstructions: -1}})
	srv := httptest.NewServer(New(Options{Fair: isolation.NewFair(1, 2, time.Second)}, Kartas{Registry: reg}))
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: fairClients + 1}}
	body := spinReview(t, "spin", karmada.OpInterpretHealth, true)
	builtinLatencies(t, client, srv.URL, 20, 20, nil) // warm up

	var spun, refused atomic.Int64
	within := false
	for trial := 1; trial <= trials && !within; trial++ {
		baseline := builtinLatencies(t, client, srv.URL, samples, samples, nil)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range fairClients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				hammer(ctx, t, client, srv.URL, body, &spun, &refused)
			}()
		}
		time.Sleep(300 * time.Millisecond) // the load is on
		loaded := builtinLatencies(t, client, srv.URL, samples, samples, nil)
		cancel()
		wg.Wait()
		for _, q := range []int{50, 90, 99} {
			base, load := quantile(baseline, q), quantile(loaded, q)
			t.Logf("trial %d: bystander p%d %s alone, %s beside the hostile Karta (%.1fx)", trial, q, base, load, float64(load)/float64(base))
		}
		within = quantile(loaded, 50) < time.Duration(bound)*quantile(baseline, 50)
	}
	assert.True(t, within, "the bystander's latency stayed within the bounds in one of %d trials", trials)
	assert.Positive(t, spun.Load(), "hostile requests ran")
	assert.Positive(t, refused.Load(), "hostile requests over the bound were refused")
}

// hammer sends body until ctx ends, counting the answers that ran (200)
// and those refused (429, after which it waits 100 ms).
func hammer(ctx context.Context, t *testing.T, client *http.Client, url string, body []byte, spun, refused *atomic.Int64) {
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+InterpretPath, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			continue // the test is ending
		}
		_ = resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			refused.Add(1)
			assert.Equal(t, "1", resp.Header.Get("Retry-After"))
			time.Sleep(100 * time.Millisecond)
		case http.StatusOK:
			spun.Add(1)
		default:
			assert.Fail(t, "unexpected status", resp.Status)
		}
	}
}

// quantile is the q-th percentile of lat.
func quantile(lat []time.Duration, q int) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[len(s)*q/100]
}
