package interpreter

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkEvaluationsPerCall reports how many evaluations (jq programs
// run, plus a unit per pod a gang hook places: directEvaluator.live) one
// call of each hook of each built-in makes on its running example, the
// cost model of issue 30's "every built-in hook within 3× PyTorchJob's
// same hook": at about 0.3 µs an evaluation, the count is most of the
// difference. Run with -benchtime 1x; evals/op is exact.
func BenchmarkEvaluationsPerCall(b *testing.B) {
	ctx := context.Background()
	for _, dk := range directKinds(b) {
		if dk.running == nil {
			continue
		}
		k := progKartaFile(b, filepath.Join("..", "builtin", "kartas", dk.name+".yaml"))
		p := progCompile(b, k, Options{})
		obj := dk.running.Object
		hooks := map[string]func(ev *directEvaluator) error{
			"InterpretStatus": func(ev *directEvaluator) error {
				ev.s.Size = p.status.evals
				_, err := p.status.interpretStatus(ctx, ev, obj)
				return err
			},
			"GetPodSpecs": func(ev *directEvaluator) error { _, err := p.podSpecs(ctx, ev, obj); return err },
		}
		if len(dk.pods) > 0 {
			pods := make([]map[string]any, len(dk.pods))
			for i, pod := range dk.pods {
				pods[i] = pod.Object
			}
			hooks["GetGangGroups"] = func(ev *directEvaluator) error { _, err := p.gang.gangGroups(ctx, ev, obj, pods); return err }
			hooks["PlacePod"] = func(ev *directEvaluator) error { _, _, err := p.gang.placeOne(ctx, ev, obj, pods[0]); return err }
		}
		if _, err := os.Stat(filepath.Join("..", "examples", dk.name, "revisions.yaml")); err == nil {
			revs := exampleRevisions(b, dk.name)
			hooks["ReviseSpec"] = func(ev *directEvaluator) error { _, _, _, err := p.model.revise(ctx, ev, obj, revs); return err }
		}
		for _, h := range []string{"InterpretStatus", "GetPodSpecs", "ReviseSpec", "GetGangGroups", "PlacePod"} {
			f := hooks[h]
			if f == nil {
				continue
			}
			b.Run(h+"/"+dk.name, func(b *testing.B) {
				var evals int
				for b.Loop() {
					ev := p.newEvaluator(ctx, nil)
					err := f(ev)
					evals = ev.evals
					_ = ev.finish(err)
				}
				b.ReportMetric(float64(evals), "evals/op")
			})
		}
	}
}
