package perf

import (
	"context"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/isolation"
)

// TestMain lets the test binary be the isolation benchmark's workers.
func TestMain(m *testing.M) {
	isolation.RunWorkerIfChild()
	os.Exit(m.Run())
}

// isolationCallers is the number of concurrent callers of the isolation
// benchmark: the supervisor's default workers per Karta, so that the
// isolated calls never wait for a worker.
const isolationCallers = isolation.DefaultWorkers

// BenchmarkIsolation measures what a worker process costs a typical hook:
// InterpretStatus and GetPodSpecs of the PyTorchJob example, called by
// isolationCallers goroutines in process (the Program) and isolated (the
// same Karta in the supervisor's workers, each call a round trip over the
// pipes with the object and the result as JSON). Both answer alike
// (asserted first). It reports calls per second and the p50 and p99
// latency of one call.
func BenchmarkIsolation(b *testing.B) {
	w := workload(b, "pytorchjob")
	sup, err := isolation.NewSupervisor(isolation.Options{})
	require.NoError(b, err)
	defer sup.Close()
	ip := sup.Program(w.prog)
	ctx := context.Background()

	hooks := []struct {
		name             string
		inProcess, inWkr func() (any, error)
	}{
		{"InterpretStatus",
			func() (any, error) { return w.prog.InterpretStatus(ctx, w.Running) },
			func() (any, error) { return ip.InterpretStatus(ctx, w.Running) }},
		{"GetPodSpecs",
			func() (any, error) { return w.prog.GetPodSpecs(ctx, w.Running) },
			func() (any, error) { return ip.GetPodSpecs(ctx, w.Running) }},
	}
	for _, h := range hooks {
		want, err := h.inProcess()
		require.NoError(b, err)
		got, err := h.inWkr()
		require.NoError(b, err)
		require.Equal(b, want, got, h.name)
		for _, mode := range []struct {
			name string
			call func() (any, error)
		}{{"inprocess", h.inProcess}, {"isolated", h.inWkr}} {
			b.Run(h.name+"/"+mode.name, func(b *testing.B) {
				benchClients(b, isolationCallers, "calls/s", func(int, int) error {
					_, err := mode.call()
					return err
				})
			})
		}
	}
}

// benchClients runs b.N calls of call(client, i) from clients goroutines
// and reports calls per second (in rateUnit) and the p50 and p99 latency
// of one call.
func benchClients(b *testing.B, clients int, rateUnit string, call func(c, i int) error) {
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	var failed error
	var once sync.Once
	per := (b.N + clients - 1) / clients
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				t0 := time.Now()
				if err := call(c, i); err != nil {
					once.Do(func() { failed = err })
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), rateUnit)
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}
