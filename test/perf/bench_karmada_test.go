package perf

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/kartalua/karta/internal/corpus"
	"github.com/kartalua/karta/internal/heapwatch"
	"github.com/kartalua/karta/karmada"
)

// BenchmarkKarmada runs each operation over every case of Karmada's corpus
// that has one: an iteration runs them all, and the "cases" metric lets
// benchreport turn ns/op into the mean per case. karta is
// karmada.Interpreter; karmada is baseline (c), KarmadaVM; karmada-cached
// is baseline (d), NewKarmadaCachedVM.
func BenchmarkKarmada(b *testing.B) {
	cb := loadCorpusBench(b)
	ctx := context.Background()
	byOp := map[karmada.Operation][]*corpus.CorpusCase{}
	for _, cc := range cb.cases {
		byOp[cc.Op] = append(byOp[cc.Op], cc)
	}
	for _, op := range karmada.Operations {
		cases := byOp[op]
		if len(cases) == 0 {
			continue
		}
		for _, impl := range []struct {
			name string
			run  func(op karmada.Operation, tc *karmada.TestCase) ([]karmada.Result, error)
		}{
			{"karta", func(op karmada.Operation, tc *karmada.TestCase) ([]karmada.Result, error) {
				return cb.karta.RunOperation(ctx, op, tc)
			}},
			{"karmada", func(op karmada.Operation, tc *karmada.TestCase) ([]karmada.Result, error) {
				return cb.vm.Run(ctx, op, tc)
			}},
			{"karmada-cached", func(op karmada.Operation, tc *karmada.TestCase) ([]karmada.Result, error) {
				return cb.cached.Run(ctx, op, tc)
			}},
		} {
			b.Run(string(op)+"/karmada-corpus/"+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu0, ok := heapwatch.ProcessCPU()
				for b.Loop() {
					for _, cc := range cases {
						if _, err := impl.run(cc.Op, cc.Case); err != nil {
							b.Fatal(cc.Name(), err)
						}
					}
				}
				// The process's CPU time per iteration (the garbage
				// collector's included): steadier than ns/op on a
				// shared machine, where wall time waits for a core.
				if cpu1, ok1 := heapwatch.ProcessCPU(); ok && ok1 {
					b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
				}
				b.ReportMetric(float64(len(cases)), "cases")
			})
		}
	}
}

// BenchmarkKarmadaCases measures the speedup over baseline (c) of every
// case on its own: for each case, rounds alternate a batch of karta calls
// and a batch of baseline calls, and the case's ratio is the median
// round's. It reports the smallest, the 10th percentile and the median
// ratio over the cases, and logs the five smallest. Run it once
// (-benchtime 1x): an iteration is the whole corpus.
func BenchmarkKarmadaCases(b *testing.B) {
	cb := loadCorpusBench(b)
	ctx := context.Background()
	const rounds = 5
	type caseRatio struct {
		name  string
		ratio float64
	}
	var ratios []caseRatio
	for i := 0; i < b.N; i++ {
		ratios = ratios[:0]
		for _, cc := range cb.cases {
			kartaCall := func() {
				if _, err := cb.karta.RunOperation(ctx, cc.Op, cc.Case); err != nil {
					b.Fatal(cc.Name(), err)
				}
			}
			vmCall := func() {
				if _, err := cb.vm.Run(ctx, cc.Op, cc.Case); err != nil {
					b.Fatal(cc.Name(), err)
				}
			}
			// Batches of about a millisecond, sized from one call each.
			kn, vn := batch(kartaCall), batch(vmCall)
			var rs []float64
			for range rounds {
				k := timePer(kartaCall, kn)
				v := timePer(vmCall, vn)
				rs = append(rs, float64(v)/float64(k))
			}
			sort.Float64s(rs)
			ratios = append(ratios, caseRatio{cc.Name() + " (" + string(cc.Op) + ")", rs[rounds/2]})
		}
	}
	slices.SortFunc(ratios, func(a, c caseRatio) int {
		switch {
		case a.ratio < c.ratio:
			return -1
		case a.ratio > c.ratio:
			return 1
		}
		return 0
	})
	for _, r := range ratios[:min(5, len(ratios))] {
		b.Logf("%.1fx %s", r.ratio, r.name)
	}
	b.ReportMetric(float64(len(ratios)), "cases")
	b.ReportMetric(ratios[0].ratio, "min-ratio")
	b.ReportMetric(ratios[len(ratios)/10].ratio, "p10-ratio")
	b.ReportMetric(ratios[len(ratios)/2].ratio, "median-ratio")
}

// batch is how many calls of f take about a millisecond.
func batch(f func()) int {
	d := timePer(f, 1)
	if d <= 0 {
		return 1000
	}
	return int(max(1, min(1000, time.Millisecond/d)))
}

// timePer is the mean duration of n calls of f.
func timePer(f func(), n int) time.Duration {
	start := time.Now()
	for range n {
		f()
	}
	return time.Since(start) / time.Duration(n)
}
