package interpreter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/heapwatch"
)

// BenchmarkEvaluationsPerCall times each hook of each built-in on its
// running example (and its pods.yaml, revisions.yaml) and reports how
// many evaluations one call makes (evals/op: jq programs run, plus a unit
// per pod a gang hook places, directEvaluator.live) and the process's CPU
// time per call (cpu-ns/op, which a shared machine's load moves far less
// than the wall clock): the cost model of issue 30's "every built-in hook
// within 3× PyTorchJob's same hook", where at about 0.3 µs an evaluation
// the count is most of the difference.
func BenchmarkEvaluationsPerCall(b *testing.B) {
	ctx := context.Background()
	for _, name := range builtinNames(b) {
		b.Run(name, func(b *testing.B) { benchmarkKindEvaluations(ctx, b, directKindOf(b, name)) })
	}
}

// benchmarkKindEvaluations is BenchmarkEvaluationsPerCall of one built-in,
// a sub-benchmark per hook.
func benchmarkKindEvaluations(ctx context.Context, b *testing.B, dk directKind) {
	if dk.running == nil {
		return
	}
	k := progKartaFile(b, filepath.Join("..", "builtin", "kartas", dk.name+".yaml"))
	p := progCompile(b, k, Options{})
	running, obj := dk.running, dk.running.Object
	type hook struct {
		name     string
		counted  func(ev *directEvaluator) error // on an evaluator whose count is read
		public   func() error                    // the Program's method
		refusing bool                            // the Karta refuses it by design
	}
	hooks := []hook{
		{name: "InterpretStatus",
			counted: func(ev *directEvaluator) error {
				ev.s.Size = p.status.evals
				_, err := p.status.interpretStatus(ctx, ev, obj)
				return err
			},
			public: func() error { _, err := p.InterpretStatus(ctx, running); return err }},
		{name: "GetPodSpecs",
			counted: func(ev *directEvaluator) error { _, err := p.podSpecs(ctx, ev, obj); return err },
			public:  func() error { _, err := p.GetPodSpecs(ctx, running); return err }},
	}
	if _, err := os.Stat(filepath.Join("..", "examples", dk.name, "revisions.yaml")); err == nil {
		revs := exampleRevisions(b, dk.name)
		_, err := p.ReviseSpec(ctx, running, revs)
		hooks = append(hooks, hook{name: "ReviseSpec", refusing: err != nil,
			counted: func(ev *directEvaluator) error { _, _, _, err := p.model.revise(ctx, ev, obj, revs); return err },
			public:  func() error { _, err := p.ReviseSpec(ctx, running, revs); return err }})
	}
	if len(dk.pods) > 0 {
		pods := make([]map[string]any, len(dk.pods))
		for i, pod := range dk.pods {
			pods[i] = pod.Object
		}
		hooks = append(hooks, hook{name: "GetGangGroups",
			counted: func(ev *directEvaluator) error { _, err := p.gang.gangGroups(ctx, ev, obj, pods); return err },
			public:  func() error { _, err := p.GetGangGroups(ctx, running, dk.pods); return err }})
		// PlacePod of the first pod the Karta places, as test/perf's.
		var placed *unstructured.Unstructured
		for _, pod := range dk.pods {
			if _, err := p.PlacePod(ctx, running, pod); err == nil {
				placed = pod
				break
			}
		}
		if placed != nil {
			hooks = append(hooks, hook{name: "PlacePod",
				counted: func(ev *directEvaluator) error { _, _, err := p.gang.placeOne(ctx, ev, obj, placed.Object); return err },
				public:  func() error { _, err := p.PlacePod(ctx, running, placed); return err }})
		}
	}
	for _, h := range hooks {
		if h.refusing {
			continue
		}
		b.Run(h.name, func(b *testing.B) {
			ev := p.newEvaluator(ctx, nil)
			err := h.counted(ev)
			evals := ev.evals
			if err = ev.finish(err); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0, cpuOK := heapwatch.ProcessCPU()
			for b.Loop() {
				if err := h.public(); err != nil {
					b.Fatal(err)
				}
			}
			if cpu1, ok := heapwatch.ProcessCPU(); cpuOK && ok {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
			b.ReportMetric(float64(evals), "evals/op")
		})
	}
}
