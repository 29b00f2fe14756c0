package interpreter

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// concurrencyRun is every hook's result on one object, computed once
// single-threaded and then by many goroutines at once.
type concurrencyRun struct {
	specs      *PodSpecs
	specsErr   string
	status     *StatusResult
	statusErr  string
	revised    *Revised
	reviseErr  string
	gang       *GangResult
	gangErr    string
	placed     []*PodPlacement
	placeErr   []string
	suspended  *Revised
	suspendErr string
	resumed    *Revised
	resumeErr  string
}

func hookErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// runAllHooks calls every hook of p on obj (and the pods).
func runAllHooks(ctx context.Context, p *Program, obj *unstructured.Unstructured, pods []*unstructured.Unstructured, revs []Revision) concurrencyRun {
	var r concurrencyRun
	var err error
	r.specs, err = p.GetPodSpecs(ctx, obj)
	r.specsErr = hookErrText(err)
	r.status, err = p.InterpretStatus(ctx, obj)
	r.statusErr = hookErrText(err)
	r.revised, err = p.ReviseSpec(ctx, obj, revs)
	r.reviseErr = hookErrText(err)
	r.gang, err = p.GetGangGroups(ctx, obj, pods)
	r.gangErr = hookErrText(err)
	for _, pod := range pods {
		pl, err := p.PlacePod(ctx, obj, pod)
		r.placed = append(r.placed, pl)
		r.placeErr = append(r.placeErr, hookErrText(err))
	}
	r.suspended, err = p.Suspend(ctx, obj)
	r.suspendErr = hookErrText(err)
	r.resumed, err = p.Resume(ctx, obj)
	r.resumeErr = hookErrText(err)
	return r
}

// concurrencyCase is one Program with its shared inputs.
type concurrencyCase struct {
	name string
	p    *Program
	objs []*unstructured.Unstructured
	pods []*unstructured.Unstructured
	revs []Revision
}

func concurrencyCases(t *testing.T) []concurrencyCase {
	t.Helper()
	load := func(name string) (*Program, []*unstructured.Unstructured, []*unstructured.Unstructured) {
		p := progCompile(t, progKartaFile(t, filepath.Join(progProgramDir, name+".karta.yaml")), Options{})
		return p, progObjFile(t, filepath.Join(progProgramDir, name+".yaml")), progObjFile(t, filepath.Join(progProgramDir, name+".pods.yaml"))
	}
	var out []concurrencyCase
	p, objs, pods := load("jobset")
	out = append(out, concurrencyCase{name: "jobset", p: p, objs: objs, pods: pods, revs: []Revision{{
		Component: "replicatedjob", Instance: "*",
		Patch: map[string]any{"metadata": map[string]any{"labels": map[string]any{"kueue.x-k8s.io/queue-name": "research"}}, "spec": map[string]any{"schedulerName": "kai-scheduler"}},
	}}})
	p, objs, pods = load("inferenceservice")
	out = append(out, concurrencyCase{name: "inferenceservice", p: p, objs: objs, pods: pods, revs: []Revision{{
		Component: "predictor", Patch: map[string]any{"spec": map[string]any{"priorityClassName": "batch", "affinity": nil}},
	}, {
		Component: "transformer", Instance: "*", Patch: map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": nil}}},
	}}})
	// The Deployment runs its luaScript override of InterpretStatus, and
	// a script override of GetGangGroups over the generated one.
	k := progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml"))
	p = progCompile(t, k, Options{Scripts: []Script{{Name: "gang.lua", Source: `
function GetGangGroups(obj, pods)
  local r = karta.generated.GetGangGroups(obj, pods)
  local seen = jq('[.[].metadata.name]', pods)[1]
  for i, u in ipairs(r.unmatched) do u.reason = u.reason .. " (" .. #seen .. " pods)" end
  return r
end
`}}})
	out = append(out, concurrencyCase{name: "deployment", p: p,
		objs: progObjFile(t, filepath.Join(progProgramDir, "deployment.yaml")),
		pods: progObjFile(t, filepath.Join(progProgramDir, "deployment.pods.yaml")),
		revs: []Revision{{Component: "deployment", Patch: map[string]any{"spec": map[string]any{"nodeSelector": map[string]any{"pool": "web"}}}}}})
	return out
}

// TestProgramConcurrentHooks: one Program per Karta, 64 goroutines calling
// every hook many times on shared objects. The results equal the
// single-threaded ones, and the inputs are never mutated (run with -race).
func TestProgramConcurrentHooks(t *testing.T) {
	const goroutines = 64
	rounds := 10
	if testing.Short() {
		rounds = 2
	}
	ctx := context.Background()
	for _, cc := range concurrencyCases(t) {
		t.Run(cc.name, func(t *testing.T) {
			inputs := append(append([]*unstructured.Unstructured{}, cc.objs...), cc.pods...)
			before := make([]*unstructured.Unstructured, len(inputs))
			for i, in := range inputs {
				before[i] = in.DeepCopy()
			}
			want := make([]concurrencyRun, len(cc.objs))
			for i, obj := range cc.objs {
				want[i] = runAllHooks(ctx, cc.p, obj, cc.pods, cc.revs)
			}
			// The inputs exercise the hooks, not just their errors.
			oks := 0
			for _, w := range want {
				for _, e := range []string{w.specsErr, w.statusErr, w.reviseErr, w.gangErr, w.suspendErr, w.resumeErr} {
					if e == "" {
						oks++
					}
				}
			}
			require.GreaterOrEqual(t, oks, 3*len(want), "most hooks succeed: %+v", want)

			var wg sync.WaitGroup
			var mismatches atomic.Int64
			var first sync.Once
			var firstDiff string
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						i := (g + r) % len(cc.objs)
						got := runAllHooks(ctx, cc.p, cc.objs[i], cc.pods, cc.revs)
						if !assert.ObjectsAreEqual(want[i], got) {
							mismatches.Add(1)
							first.Do(func() { firstDiff = fmt.Sprintf("object %d, goroutine %d: want %+v\ngot %+v", i, g, want[i], got) })
						}
					}
				}()
			}
			wg.Wait()
			require.Zero(t, mismatches.Load(), firstDiff)
			for i := range inputs {
				assert.Equal(t, before[i].Object, inputs[i].Object, "input %s is not mutated", inputs[i].GetName())
			}
			st := cc.p.PoolStats()
			assert.LessOrEqual(t, st.Created-st.Discarded-st.Closed, int64(st.Size), "never more states than the pool size")
			assert.Equal(t, 0, st.InUse)
		})
	}
}
