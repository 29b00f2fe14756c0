package perf

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/corpus"
	"github.com/kartalua/karta/internal/exampledir"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
)

// The baselines must give karta's results, or the ratios compare different
// work. These tests check them on every example state and pod of the three
// kinds, and on the 64-pod gangs; the benchmarks check again, on exactly
// what they time.

// exampleStates reads every state of examples/NAME (not pods, revisions or
// the test file).
func exampleStates(t *testing.T, name string) map[string]*unstructured.Unstructured {
	t.Helper()
	files, err := exampledir.States(filepath.Join(examplesDir, name))
	require.NoError(t, err)
	out := map[string]*unstructured.Unstructured{}
	for _, f := range files {
		base := filepath.Base(f)
		obj, err := corpus.LoadObject(f)
		require.NoError(t, err)
		out[base] = obj
	}
	require.NotEmpty(t, out)
	return out
}

func TestBaselinesAgreeWithKarta(t *testing.T) {
	ctx := context.Background()
	for _, name := range baselineKinds {
		t.Run(name, func(t *testing.T) {
			w := workload(t, name)
			states := exampleStates(t, name)
			files := make([]string, 0, len(states))
			for f := range states {
				files = append(files, f)
			}
			sort.Strings(files)
			revised := 0
			for _, f := range files {
				obj := states[f]
				want, err := w.prog.InterpretStatus(ctx, obj)
				require.NoError(t, err, f)
				got, err := w.gojq.InterpretStatus(obj)
				sameResult(t, f+": gojq InterpretStatus", want, nil, got, err)
				got, err = w.hand.InterpretStatus(obj)
				sameResult(t, f+": Go InterpretStatus", want, nil, got, err)

				wantSpecs, err := w.prog.GetPodSpecs(ctx, obj)
				require.NoError(t, err, f)
				gotSpecs, err := w.gojq.GetPodSpecs(obj)
				sameResult(t, f+": gojq GetPodSpecs", wantSpecs, nil, gotSpecs, err)
				gotSpecs, err = w.hand.GetPodSpecs(obj)
				sameResult(t, f+": Go GetPodSpecs", wantSpecs, nil, gotSpecs, err)

				// revisions.yaml, and each of its revisions alone.
				revLists := [][]interpreter.Revision{w.Revisions}
				for _, r := range w.Revisions {
					revLists = append(revLists, []interpreter.Revision{r})
				}
				for i, revs := range revLists {
					what := fmt.Sprintf("%s: revisions %d: ", f, i)
					want, err := w.prog.ReviseSpec(ctx, obj, revs)
					if err != nil {
						_, gojqErr := w.gojq.ReviseSpec(obj, revs)
						_, goErr := w.hand.ReviseSpec(obj, revs)
						assert.Error(t, gojqErr, "%sgojq revises, karta does not: %v", what, err)
						assert.Error(t, goErr, "%sGo revises, karta does not: %v", what, err)
						continue
					}
					revised++
					got, err := w.gojq.ReviseSpec(obj, revs)
					sameResult(t, what+"gojq ReviseSpec", want, nil, got, err)
					got, err = w.hand.ReviseSpec(obj, revs)
					sameResult(t, what+"Go ReviseSpec", want, nil, got, err)
				}

				// Every state with the example's pods: placed, and
				// unmatched for karta's reasons.
				wantGang, err := w.prog.GetGangGroups(ctx, obj, w.Pods)
				require.NoError(t, err, f)
				gotGang, err := w.gang.GetGangGroups(obj, w.Pods)
				sameResult(t, f+": Go GetGangGroups", wantGang, nil, gotGang, err)
			}
			obj, pods, err := Gang64(w.Workload)
			require.NoError(t, err)
			wantGang, err := w.prog.GetGangGroups(ctx, obj, pods)
			require.NoError(t, err)
			gotGang, err := w.gang.GetGangGroups(obj, pods)
			sameResult(t, "64 pods: Go GetGangGroups", wantGang, nil, gotGang, err)
			placed := 0
			for _, set := range []struct {
				obj  *unstructured.Unstructured
				pods []*unstructured.Unstructured
			}{{w.Running, w.Pods}, {obj, pods}} {
				for _, pod := range set.pods {
					want, wantErr := w.prog.PlacePod(ctx, set.obj, pod)
					gotGojq, gojqErr := w.gojq.PlacePod(set.obj, pod)
					gotGo, goErr := w.hand.PlacePod(set.obj, pod)
					if wantErr != nil {
						assert.Error(t, gojqErr, "gojq places %s, karta does not: %v", pod.GetName(), wantErr)
						assert.Error(t, goErr, "Go places %s, karta does not: %v", pod.GetName(), wantErr)
						continue
					}
					placed++
					sameResult(t, pod.GetName()+": gojq PlacePod", want, nil, gotGojq, gojqErr)
					sameResult(t, pod.GetName()+": Go PlacePod", want, nil, gotGo, goErr)
				}
			}
			assert.Greater(t, placed, GangPods)
			assert.Greater(t, revised, len(files), "ReviseSpec succeeds on most states")
		})
	}
}

func TestGang64(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		minMembers []int64 // by group, sorted by name
	}{
		{"pytorchjob", []int64{64}},
		{"jobset", []int64{64}},
		{"leaderworkerset", []int64{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workload(t, tc.name)
			obj, pods, err := Gang64(w.Workload)
			require.NoError(t, err)
			require.Len(t, pods, GangPods)
			res, err := w.prog.GetGangGroups(ctx, obj, pods)
			require.NoError(t, err)
			assert.Len(t, res.Placements, GangPods)
			assert.Empty(t, res.Unmatched)
			var got []int64
			members := 0
			for _, g := range res.Groups {
				got = append(got, g.MinMember)
				members += len(g.Pods)
			}
			assert.Equal(t, tc.minMembers, got)
			assert.Equal(t, GangPods, members)
		})
	}
	_, _, err := Gang64(workload(t, "milvus").Workload)
	assert.Error(t, err)
}

func TestKarmadaVMAgreesWithKarta(t *testing.T) {
	cb := loadCorpusBench(t)
	ops := map[karmada.Operation]int{}
	for _, cc := range cb.cases {
		ops[cc.Op]++
	}
	t.Logf("%d cases agree; left out: %v", len(cb.cases), cb.skipped)
	assert.Greater(t, len(cb.cases), 50)
	for _, op := range []karmada.Operation{karmada.OpInterpretReplica, karmada.OpReviseReplica, karmada.OpRetain,
		karmada.OpAggregateStatus, karmada.OpInterpretStatus, karmada.OpInterpretHealth, karmada.OpInterpretDependency} {
		assert.Positive(t, ops[op], "the corpus has %s cases", op)
	}
}

func TestWorkloadsPlaceAPod(t *testing.T) {
	for _, w := range loadBench(t) {
		assert.NotNil(t, w.pod, "%s: some example pod is placed", w.Name)
	}
}

// TestGangGoAgreesOnOddPods holds baseline (b) of GetGangGroups to karta's
// results beyond the operators' own labelling: pods that lose a label, sit
// in another namespace or name an unknown replicated job, and objects that
// state their minimum or lack a replica type.
func TestGangGoAgreesOnOddPods(t *testing.T) {
	ctx := context.Background()
	unset := func(pod *unstructured.Unstructured, field string, key string) {
		m, _, _ := unstructured.NestedStringMap(pod.Object, "metadata", field)
		delete(m, key)
		require.NoError(t, unstructured.SetNestedStringMap(pod.Object, m, "metadata", field))
	}
	set := func(pod *unstructured.Unstructured, field, key, value string) {
		m, _, _ := unstructured.NestedStringMap(pod.Object, "metadata", field)
		if m == nil {
			m = map[string]string{}
		}
		m[key] = value
		require.NoError(t, unstructured.SetNestedStringMap(pod.Object, m, "metadata", field))
	}
	for _, tc := range []struct {
		name string
		obj  func(obj *unstructured.Unstructured)
		pods func(pods []*unstructured.Unstructured)
	}{
		{"pytorchjob", nil, func(pods []*unstructured.Unstructured) {
			unset(pods[1], "labels", ptJobName)
			pods[2].SetNamespace("elsewhere")
			unset(pods[3], "labels", ptReplicaType)
			set(pods[4], "labels", ptJobName, "other-job")
			set(pods[5], "labels", ptJobName, "")
		}},
		{"pytorchjob", func(obj *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(obj.Object, int64(12), "spec", "runPolicy", "schedulingPolicy", "minAvailable"))
		}, nil},
		{"pytorchjob", func(obj *unstructured.Unstructured) {
			unstructured.RemoveNestedField(obj.Object, "spec", "pytorchReplicaSpecs", "Master")
			require.NoError(t, unstructured.SetNestedField(obj.Object, int64(5), "spec", "elasticPolicy", "minReplicas"))
		}, nil},
		{"jobset", nil, func(pods []*unstructured.Unstructured) {
			set(pods[1], "labels", jsRJName, "nope")
			unset(pods[2], "labels", jsRJName)
			unset(pods[3], "labels", jsName)
			set(pods[4], "labels", jsName, "renamed")
			pods[5].SetNamespace("")
		}},
		{"leaderworkerset", nil, func(pods []*unstructured.Unstructured) {
			unset(pods[1], "labels", lwsGroupIndex)
			unset(pods[2], "annotations", lwsLeaderName)
			set(pods[3], "labels", lwsWorkerIdx, "0") // a worker that looks like a leader
			unset(pods[4], "labels", lwsName)
			set(pods[5], "labels", lwsGroupIndex, "")
		}},
		{"leaderworkerset", func(obj *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(obj.Object, int64(1), "spec", "leaderWorkerTemplate", "size"))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := workload(t, tc.name)
			obj, pods, err := Gang64(w.Workload)
			require.NoError(t, err)
			if tc.obj != nil {
				tc.obj(obj)
			}
			if tc.pods != nil {
				tc.pods(pods)
			}
			want, err := w.prog.GetGangGroups(ctx, obj, pods)
			require.NoError(t, err)
			if tc.pods != nil {
				assert.NotEmpty(t, want.Unmatched, "the odd pods are unmatched")
			}
			got, err := w.gang.GetGangGroups(obj, pods)
			sameResult(t, "Go GetGangGroups", want, nil, got, err)
		})
	}
}
