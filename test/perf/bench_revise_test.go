package perf

import (
	"context"
	"testing"
	"time"
)

// BenchmarkReviseInterleaved times ReviseSpec of each baseline kind on
// karta and on baselines (a) and (b) call batch by call batch in turn
// (batches of about a millisecond, median of 7 rounds), so that a machine
// whose load changes during the run slows all three alike: the ratios are
// the figures to trust on a shared machine. Results are asserted equal
// first, as BenchmarkHooks does.
func BenchmarkReviseInterleaved(b *testing.B) {
	ctx := context.Background()
	for _, name := range baselineKinds {
		w := workload(b, name)
		obj := w.Running
		kartaCall := func() (any, error) { return w.prog.ReviseSpec(ctx, obj, w.Revisions) }
		gojqCall := func() (any, error) { return w.gojq.ReviseSpec(obj, w.Revisions) }
		goCall := func() (any, error) { return w.hand.ReviseSpec(obj, w.Revisions) }
		want, err := kartaCall()
		if err != nil {
			b.Fatal(err)
		}
		for what, f := range map[string]call{"gojq": gojqCall, "go": goCall} {
			got, err := f()
			sameResult(b, name+" "+what, want, nil, got, err)
		}
		b.Run(name, func(b *testing.B) {
			const rounds = 7
			must := func(f call) func() {
				return func() {
					if _, err := f(); err != nil {
						b.Fatal(err)
					}
				}
			}
			k, q, g := must(kartaCall), must(gojqCall), must(goCall)
			var ks, qs, gs []float64
			for i := 0; i < b.N; i++ {
				kn, qn, gn := batch(k), batch(q), batch(g)
				for range rounds {
					kd := timePer(k, kn)
					qs = append(qs, float64(timePer(q, qn))/float64(kd))
					gs = append(gs, float64(timePer(g, gn))/float64(kd))
					ks = append(ks, float64(kd/time.Nanosecond))
				}
			}
			b.ReportMetric(median(ks), "karta-ns")
			b.ReportMetric(median(qs), "vs-gojq")
			b.ReportMetric(median(gs), "vs-go")
		})
	}
}
