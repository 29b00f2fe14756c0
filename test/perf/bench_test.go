package perf

import (
	"context"
	"errors"
	"testing"

	"github.com/kartalua/karta/internal/heapwatch"
	"github.com/kartalua/karta/internal/replacedoverrides"
	"github.com/kartalua/karta/interpreter"
)

// The benchmarks. Names are Benchmark<Group>/<hook>/<workload>/<impl>, with
// impl one of karta, gojq (baseline a), go (baseline b), karmada
// (baseline c) and override (the bundled override a view replaced);
// perf/cmd/benchreport pairs them by that shape. Before a
// baseline is timed, its result on the very objects of the benchmark is
// asserted equal to karta's.

// call is one hook call on fixed inputs.
type call func() (any, error)

// run times f; any error fails the benchmark.
func run(b *testing.B, f call) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f(); err != nil {
			b.Fatal(err)
		}
	}
}

// compare runs the karta benchmark and, for each non-nil baseline, asserts
// its result equals karta's and times it. The override baseline's result
// is compared without null members (replacedoverrides.WithoutNullMembers).
func compare(b *testing.B, karta call, baselines map[string]call) {
	b.Helper()
	want, wantErr := karta()
	if wantErr != nil {
		b.Fatal(wantErr)
	}
	for name, f := range baselines {
		got, err := f()
		w := want
		if name == "override" && err == nil {
			if w, err = replacedoverrides.WithoutNullMembers(want); err == nil {
				got, err = replacedoverrides.WithoutNullMembers(got)
			}
		}
		sameResult(b, b.Name()+" "+name, w, nil, got, err)
	}
	b.Run("karta", func(b *testing.B) { run(b, karta) })
	for _, name := range []string{"gojq", "go", "override"} {
		if f := baselines[name]; f != nil {
			b.Run(name, func(b *testing.B) { run(b, f) })
		}
	}
}

func BenchmarkHooks(b *testing.B) {
	ctx := context.Background()
	ws := loadBench(b)
	for _, w := range ws {
		obj := w.Running
		b.Run("InterpretStatus/"+w.Name, func(b *testing.B) {
			bl := map[string]call{}
			if w.gojq != nil {
				bl["gojq"] = func() (any, error) { return w.gojq.InterpretStatus(obj) }
				bl["go"] = func() (any, error) { return w.hand.InterpretStatus(obj) }
			}
			compare(b, func() (any, error) { return w.prog.InterpretStatus(ctx, obj) }, bl)
		})
		b.Run("GetPodSpecs/"+w.Name, func(b *testing.B) {
			bl := map[string]call{}
			if w.gojq != nil {
				bl["gojq"] = func() (any, error) { return w.gojq.GetPodSpecs(obj) }
				bl["go"] = func() (any, error) { return w.hand.GetPodSpecs(obj) }
			}
			if w.replaced != nil {
				// The bundled override the view replaced (issue 29).
				bl["override"] = func() (any, error) { return w.replaced.GetPodSpecs(ctx, obj) }
			}
			compare(b, func() (any, error) { return w.prog.GetPodSpecs(ctx, obj) }, bl)
		})
		b.Run("ReviseSpec/"+w.Name, func(b *testing.B) {
			if _, err := w.prog.ReviseSpec(ctx, obj, w.Revisions); refusedRevisions(err) {
				b.Skipf("the Karta refuses its revisions.yaml by design (its golden shows the error): %v", err)
			}
			bl := map[string]call{}
			if w.gojq != nil {
				bl["gojq"] = func() (any, error) { return w.gojq.ReviseSpec(obj, w.Revisions) }
				bl["go"] = func() (any, error) { return w.hand.ReviseSpec(obj, w.Revisions) }
			}
			compare(b, func() (any, error) { return w.prog.ReviseSpec(ctx, obj, w.Revisions) }, bl)
		})
		b.Run("GetGangGroups/"+w.Name, func(b *testing.B) {
			bl := map[string]call{}
			if w.gang != nil {
				bl["go"] = func() (any, error) { return w.gang.GetGangGroups(obj, w.Pods) }
			}
			compare(b, func() (any, error) { return w.prog.GetGangGroups(ctx, obj, w.Pods) }, bl)
		})
		if w.gojq != nil {
			gobj, pods, err := Gang64(w.Workload)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("GetGangGroups/"+w.Name+"-64pods", func(b *testing.B) {
				compare(b, func() (any, error) { return w.prog.GetGangGroups(ctx, gobj, pods) },
					map[string]call{"go": func() (any, error) { return w.gang.GetGangGroups(gobj, pods) }})
			})
		}
		b.Run("PlacePod/"+w.Name, func(b *testing.B) {
			pod := w.pod
			bl := map[string]call{}
			if w.gojq != nil {
				bl["gojq"] = func() (any, error) { return w.gojq.PlacePod(obj, pod) }
				bl["go"] = func() (any, error) { return w.hand.PlacePod(obj, pod) }
			}
			compare(b, func() (any, error) { return w.prog.PlacePod(ctx, obj, pod) }, bl)
		})
	}
}

// BenchmarkParallel runs hooks from every core at once; run it with -cpu
// 1,2 to see throughput grow with GOMAXPROCS (ns/op is wall time per call
// across all goroutines). "cpu-ns/op" is the process's CPU time per call:
// when it stays flat from 1 to 2 procs, the calls do not contend, and a
// throughput that does not double means the machine had no second core to
// give (it is shared).
func BenchmarkParallel(b *testing.B) {
	ctx := context.Background()
	pj, js := workload(b, "pytorchjob"), workload(b, "jobset")
	gobj, gpods, err := Gang64(pj.Workload)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    call
	}{
		{"InterpretStatus/pytorchjob", func() (any, error) { return pj.prog.InterpretStatus(ctx, pj.Running) }},
		{"PlacePod/pytorchjob", func() (any, error) { return pj.prog.PlacePod(ctx, pj.Running, pj.pod) }},
		{"GetPodSpecs/jobset", func() (any, error) { return js.prog.GetPodSpecs(ctx, js.Running) }},
		{"ReviseSpec/pytorchjob", func() (any, error) { return pj.prog.ReviseSpec(ctx, pj.Running, pj.Revisions) }},
		{"GetGangGroups/pytorchjob-64pods", func() (any, error) { return pj.prog.GetGangGroups(ctx, gobj, gpods) }},
		// The control: about a microsecond of arithmetic on registers,
		// nothing allocated or shared. Its scaling is what the machine
		// gives at best.
		{"Control/arithmetic", func() (any, error) { return spin(), nil }},
	} {
		b.Run(c.name+"/karta", func(b *testing.B) {
			b.ReportAllocs()
			cpu0, ok := heapwatch.ProcessCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.f(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if cpu1, ok1 := heapwatch.ProcessCPU(); ok && ok1 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// BenchmarkCompile compiles each built-in: a one-off cost per Karta.
func BenchmarkCompile(b *testing.B) {
	for _, w := range loadBench(b) {
		b.Run(w.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := w.Builtin.Compile(interpreter.Options{})
				if err != nil {
					b.Fatal(err)
				}
				_ = p
			}
		})
	}
}

// spinSink keeps spin's result alive.
var spinSink uint64

// spin is CPU work with no memory traffic: an xorshift loop.
func spin() any {
	x := uint64(88172645463325252)
	for range 1000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	if x == 0 {
		spinSink++
	}
	return nil
}

// refusedRevisions reports the error of a Karta whose component paths
// cannot be written (AppWrapper's computed template paths): its example
// revisions are refused, so there is no revision to time.
func refusedRevisions(err error) bool {
	var pe *interpreter.PathError
	return errors.As(err, &pe) && pe.Reason != ""
}
