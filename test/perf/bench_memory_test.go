package perf

import (
	"context"
	"runtime"
	"sort"
	"testing"

	"github.com/kartalua/karta/interpreter"
)

// heapInUse is the live heap after two collections.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

// BenchmarkPoolState measures what one pooled Lua state of each built-in
// retains: "B/state" is a fresh state (a Program prewarmed with 17 states
// against one with 1, per extra state), "B/state-used" adds what a state
// keeps after serving writing hooks (ReviseSpec, Suspend, Resume), which
// run on Lua. Run it with -benchtime 1x.
func BenchmarkPoolState(b *testing.B) {
	ctx := context.Background()
	const extra = 16
	for _, w := range loadBench(b) {
		b.Run(w.Name, func(b *testing.B) {
			var fresh, used []float64
			for i := 0; i < b.N; i++ {
				h0 := heapInUse()
				one, err := w.Builtin.Compile(interpreter.Options{PoolSize: 1 + extra, Prewarm: 1})
				if err != nil {
					b.Fatal(err)
				}
				h1 := heapInUse()
				many, err := w.Builtin.Compile(interpreter.Options{PoolSize: 1 + extra, Prewarm: 1 + extra})
				if err != nil {
					b.Fatal(err)
				}
				h2 := heapInUse()
				runtime.KeepAlive(one) // the baseline stays alive while many is measured
				perState := (float64(h2) - float64(h1) - (float64(h1) - float64(h0))) / extra
				runtime.KeepAlive(many) // measured; collected with its states afterwards
				// One state serving the Lua-path hooks for a while.
				single, err := w.Builtin.Compile(interpreter.Options{PoolSize: 1, Prewarm: 1})
				if err != nil {
					b.Fatal(err)
				}
				h3 := heapInUse()
				for range 200 {
					if _, err := single.ReviseSpec(ctx, w.Running, w.Revisions); err != nil && !refusedRevisions(err) {
						b.Fatal(err)
					}
					if single.HookEnabled(interpreter.HookSuspend) {
						s, err := single.Suspend(ctx, w.Running)
						if err != nil {
							b.Fatal(err)
						}
						if _, err := single.Resume(ctx, s.Object); err != nil {
							b.Fatal(err)
						}
					}
				}
				h4 := heapInUse()
				if st := single.PoolStats(); st.Created != 1 || st.Discarded != 0 {
					b.Fatalf("the single state was replaced: %+v", st)
				}
				fresh = append(fresh, perState)
				used = append(used, perState+float64(h4)-float64(h3))
			}
			b.ReportMetric(median(fresh), "B/state")
			b.ReportMetric(median(used), "B/state-used")
		})
	}
}

// BenchmarkMillionCalls makes a million calls on one Program (PyTorchJob:
// InterpretStatus, PlacePod, GetPodSpecs, GetGangGroups of the example
// pods, and every 64th call a ReviseSpec on Lua) and reports the live
// heap before and after, after collections: "heap-delta-B" must stay
// near zero. Run it with -benchtime 1x.
func BenchmarkMillionCalls(b *testing.B) {
	const calls = 1_000_000
	ctx := context.Background()
	w := workload(b, "pytorchjob")
	p, err := w.Builtin.Compile(interpreter.Options{})
	if err != nil {
		b.Fatal(err)
	}
	obj, pod := w.Running, w.pod
	pods := w.Pods
	step := func(i int) error {
		var err error
		switch {
		case i%64 == 63:
			_, err = p.ReviseSpec(ctx, obj, w.Revisions)
		case i%4 == 0:
			_, err = p.InterpretStatus(ctx, obj)
		case i%4 == 1:
			_, err = p.PlacePod(ctx, obj, pod)
		case i%4 == 2:
			_, err = p.GetPodSpecs(ctx, obj)
		default:
			_, err = p.GetGangGroups(ctx, obj, pods)
		}
		return err
	}
	var deltas, before []float64
	for i := 0; i < b.N; i++ {
		for j := range 10_000 { // warm: pool states, sync.Pools, caches
			if err := step(j); err != nil {
				b.Fatal(err)
			}
		}
		h0 := heapInUse()
		for j := range calls {
			if err := step(j); err != nil {
				b.Fatal(err)
			}
		}
		h1 := heapInUse()
		deltas = append(deltas, float64(h1)-float64(h0))
		before = append(before, float64(h0))
	}
	b.ReportMetric(median(before), "heap-B")
	b.ReportMetric(median(deltas), "heap-delta-B")
}
