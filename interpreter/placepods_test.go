package interpreter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestPlacePodsAgreesWithGangGroups: on every built-in's examples, a pod
// that GetGangGroups places gets the same component, instance and replica
// from PlacePods, and a pod it leaves unmatched for a reason of its
// placement gets the same reason. Every pod appears once, in input order.
func TestPlacePodsAgreesWithGangGroups(t *testing.T) {
	ctx := context.Background()
	for _, dk := range directKinds(t) {
		if len(dk.pods) == 0 {
			continue
		}
		t.Run(dk.name, func(t *testing.T) {
			p := progCompile(t, progKartaFile(t, filepath.Join("..", "builtin", "kartas", dk.name+".yaml")), Options{})
			for _, obj := range dk.states {
				gang, err := p.GetGangGroups(ctx, obj, dk.pods)
				if err != nil {
					continue // a broken example state: nothing to compare
				}
				placed, err := p.PlacePods(ctx, obj, dk.pods)
				require.NoError(t, err, obj.GetName())
				assert.Equal(t, len(dk.pods), len(placed.Placements)+len(placed.Unmatched), obj.GetName())
				where := map[string]Placement{}
				for _, pl := range placed.Placements {
					assert.Empty(t, pl.Group)
					where[pl.Pod] = pl
				}
				why := map[string]string{}
				for _, u := range placed.Unmatched {
					why[u.Pod] = u.Reason
				}
				for _, pl := range gang.Placements {
					got, ok := where[pl.Pod]
					if assert.True(t, ok, "%s: %s is placed by GetGangGroups", obj.GetName(), pl.Pod) {
						pl.Group = ""
						assert.Equal(t, pl, got)
					}
				}
				for _, u := range gang.Unmatched {
					if r, ok := why[u.Pod]; ok {
						assert.Equal(t, u.Reason, r, "%s: %s", obj.GetName(), u.Pod)
					}
				}
				// Input order.
				var order []string
				for _, pod := range dk.pods {
					name := pod.GetNamespace() + "/" + pod.GetName()
					if _, ok := where[name]; ok {
						order = append(order, name)
					}
				}
				var got []string
				for _, pl := range placed.Placements {
					got = append(got, pl.Pod)
				}
				assert.Equal(t, order, got)
			}
		})
	}
}

// TestPlacePodsWithoutInstructions: a Karta without gang instructions
// places its pods in components, instances and replicas all the same;
// GetGangGroups unmatches them all.
func TestPlacePodsWithoutInstructions(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		want []Placement
		// unmatched pods and their reasons
		unmatched []Unmatched
	}{
		{"pytorchjob", []Placement{
			{Pod: "nlp/mistral-7b-sft-master-0", Component: "master"},
			{Pod: "nlp/mistral-7b-sft-worker-0", Component: "worker"},
			{Pod: "nlp/mistral-7b-sft-worker-1", Component: "worker"},
			{Pod: "nlp/mistral-7b-sft-worker-2", Component: "worker"},
		}, []Unmatched{
			{Pod: "nlp/mistral-dev-0", Reason: "no component selector matches"},
			{Pod: "nlp/mistral-7b-sft-eval-5vglx", Reason: "no component selector matches"},
		}},
		{"leaderworkerset", []Placement{
			{Pod: "inference/vllm-llama3-405b-0", Component: "leader", Replica: "0"},
			{Pod: "inference/vllm-llama3-405b-0-1", Component: "worker", Replica: "0"},
			{Pod: "inference/vllm-llama3-405b-0-2", Component: "worker", Replica: "0"},
			{Pod: "inference/vllm-llama3-405b-0-3", Component: "worker", Replica: "0"},
			{Pod: "inference/vllm-llama3-405b-1", Component: "leader", Replica: "1"},
			{Pod: "inference/vllm-llama3-405b-1-1", Component: "worker", Replica: "1"},
			{Pod: "inference/vllm-llama3-405b-1-2", Component: "worker", Replica: "1"},
			{Pod: "inference/vllm-llama3-405b-1-3", Component: "worker", Replica: "1"},
		}, []Unmatched{
			{Pod: "inference/llama-router-54c8f7d9b6-zq4nm", Reason: "no component selector matches"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", tc.name+".yaml"))
			k.Spec.Instructions = nil
			p := progCompile(t, k, Options{})
			obj := progObjFile(t, filepath.Join("..", "examples", tc.name, "running.yaml"))[0]
			pods := progObjFile(t, filepath.Join("..", "examples", tc.name, "pods.yaml"))
			res, err := p.PlacePods(ctx, obj, pods)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Placements)
			assert.Equal(t, tc.unmatched, res.Unmatched)

			gang, err := p.GetGangGroups(ctx, obj, pods)
			require.NoError(t, err)
			assert.Empty(t, gang.Placements)
			_, err = p.PlacePod(ctx, obj, pods[0])
			assert.ErrorContains(t, err, "no gang scheduling instructions")
		})
	}
}

// TestPlacePodsEdges: no pods is an empty result with empty lists; an
// object whose instances cannot be read fails the call; a pod's own jq
// error only unmatches it; the direct and exact paths agree.
func TestPlacePodsEdges(t *testing.T) {
	ctx := context.Background()
	p := progCompile(t, progKartaFile(t, filepath.Join("..", "builtin", "kartas", "jobset.yaml")), Options{})
	obj := progObjFile(t, filepath.Join("..", "examples", "jobset", "running.yaml"))[0]

	res, err := p.PlacePods(ctx, obj, nil)
	require.NoError(t, err)
	assert.Equal(t, &PlacementResult{Placements: []Placement{}, Unmatched: []Unmatched{}}, res)

	broken := obj.DeepCopy()
	jobs := broken.Object["spec"].(map[string]any)["replicatedJobs"].([]any)
	jobs[1].(map[string]any)["name"] = jobs[0].(map[string]any)["name"]
	_, err = p.PlacePods(ctx, broken, nil)
	var oe *GangObjectError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "replicatedjob", oe.Component)

	odd := &unstructured.Unstructured{Object: k8sPod("ml-research", "odd", map[string]any{
		"jobset.sigs.k8s.io/jobset-name":        "llama3-pretrain",
		"jobset.sigs.k8s.io/replicatedjob-name": []any{"driver"},
	}, nil)}
	res, err = p.PlacePods(ctx, obj, []*unstructured.Unstructured{odd})
	require.NoError(t, err)
	require.Len(t, res.Unmatched, 1)
	assert.Equal(t, "ml-research/odd", res.Unmatched[0].Pod)
	assert.Contains(t, res.Unmatched[0].Reason, "componentInstanceSelector")

	pods := progObjFile(t, filepath.Join("..", "examples", "jobset", "pods.yaml"))
	exact := progCompile(t, progKartaFile(t, filepath.Join("..", "builtin", "kartas", "jobset.yaml")), Options{})
	exact.noDirect = true
	want, wantErr := exact.PlacePods(ctx, obj, pods)
	got, gotErr := p.PlacePods(ctx, obj, pods)
	assertSameResult(t, want, wantErr, got, gotErr)

	cancelledCtx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = p.PlacePods(cancelledCtx, obj, pods)
	assert.ErrorIs(t, err, context.Canceled)
}
