package interpreter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDirectTrainJobWithRuntimes: TrainJob's pod template path — the
// runtime's templates with the TrainJob's podTemplateOverrides merged in,
// written with def and reduce — runs on the direct back end with each
// runtime of its examples resolved, and every pod hook gives what the Lua
// path (every expression on gojq) gives, on every example state, its client-go
// form and broken variants; the running examples take the direct path.
func TestDirectTrainJobWithRuntimes(t *testing.T) {
	dir := filepath.Join("..", "examples", "trainjob")
	k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", "trainjob.yaml"))
	noClock := Options{Limits: Limits{Timeout: -1}}
	fast := progCompile(t, k, noClock)
	exact := progCompile(t, k, noClock)
	exact.noDirect = true
	var states []*unstructured.Unstructured
	for _, f := range []string{"running.yaml", "mpi-running.yaml", "torch-running.yaml", "created.yaml", "suspended.yaml", "failed.yaml"} {
		states = append(states, progObjFile(t, filepath.Join(dir, f))...)
	}
	var pods []*unstructured.Unstructured
	for _, f := range []string{"pods.yaml", "pods-torch.yaml"} {
		pods = append(pods, progObjFile(t, filepath.Join(dir, f))...)
	}
	for _, rt := range []string{"torchtune-llama3.2-3b.yaml", "deepspeed-distributed.yaml", "torch-distributed.yaml"} {
		t.Run(rt, func(t *testing.T) {
			runtime := progObjFile(t, filepath.Join(dir, "refs", rt))
			ctx := WithResolver(context.Background(), NewStaticResolver(runtime...), nil)
			fromRuntime := 0
			for i, s := range states {
				objs := append([]*unstructured.Unstructured{s, k8sForm(t, s)}, brokenVariants(t, s)...)
				for j, obj := range objs {
					got, gotErr := fast.GetPodSpecs(ctx, obj)
					want, wantErr := exact.GetPodSpecs(ctx, obj)
					assertSameResult(t, want, wantErr, got, gotErr, "state %d form %d: GetPodSpecs", i, j)
					gotGang, gotErr := fast.GetGangGroups(ctx, obj, pods)
					wantGang, wantErr := exact.GetGangGroups(ctx, obj, pods)
					assertSameResult(t, wantGang, wantErr, gotGang, gotErr, "state %d form %d: GetGangGroups", i, j)
					for n, pod := range pods {
						got, gotErr := fast.PlacePod(ctx, obj, pod)
						want, wantErr := exact.PlacePod(ctx, obj, pod)
						assertSameResult(t, want, wantErr, got, gotErr, "state %d form %d pod %d: PlacePod", i, j, n)
					}
				}
				// The state as the examples give it runs directly, the
				// runtime's templates with it.
				bound, err := fast.bindReferences(ctx, HookGetPodSpecs, s)
				require.NoError(t, err)
				specs, ok := directOnly(bound, fast, func(ev evaluator) (*PodSpecs, error) { return fast.podSpecs(bound, ev, s.Object) })
				require.True(t, ok, "state %d: GetPodSpecs runs directly", i)
				for _, it := range specs.Items {
					if it.Component == "job" && it.PodTemplateSpec != nil {
						fromRuntime++
					}
				}
			}
			assert.Positive(t, fromRuntime, "some state names the runtime: its templates, merged directly")
		})
	}
}

// TestDirectSharedPrefixes: the built-ins whose expressions begin alike
// evaluate the common prefix once per call (exprTable.sharePrefixes);
// TestDirectHooksAgreeWithGojq holds their results to the exact path's.
func TestDirectSharedPrefixes(t *testing.T) {
	for _, name := range []string{"appwrapper", "milvus", "inferenceservice", "workflow"} {
		k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", name+".yaml"))
		p := progCompile(t, k, Options{})
		shared := 0
		for _, prog := range p.model.exprs.progs {
			if prog.direct != nil && prog.direct.SharesPrefix() {
				shared++
			}
		}
		assert.GreaterOrEqual(t, shared, 2, name)
	}
}
