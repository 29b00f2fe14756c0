package interpreter

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/karta"
)

// Tests of the gang fields that take their answer from the object or the
// pod's labels rather than from jq alone: a group's minMemberPath and a
// componentTypeSelector's matchLabels.

// withRunPolicyMin sets the PyTorchJob's runPolicy.schedulingPolicy
// .minAvailable (the training operator's gang minimum) to v.
func withRunPolicyMin(obj map[string]any, v any) map[string]any {
	spec := obj["spec"].(map[string]any)
	spec["runPolicy"] = map[string]any{"schedulingPolicy": map[string]any{"minAvailable": v}}
	return obj
}

// runProgramGang runs GetGangGroups through a compiled Program (the
// generated accessors, direct plans first) so that the fields are proven
// on the hook path too, not only on gojq.
func runProgramGang(t *testing.T, k *karta.Karta, obj map[string]any, pods []map[string]any) (*GangResult, error) {
	t.Helper()
	p, err := Compile(k, Options{})
	require.NoError(t, err)
	us := make([]*unstructured.Unstructured, len(pods))
	for i, pod := range pods {
		us[i] = &unstructured.Unstructured{Object: pod}
	}
	return p.GetGangGroups(context.Background(), &unstructured.Unstructured{Object: obj}, us)
}

func TestMinMemberPath(t *testing.T) {
	alpha := func(path string) *karta.Karta {
		k := gangKarta(t, "pytorchjob")
		k.Spec.Instructions.GangScheduling.PodGroups[0].MinMemberPath = path
		return k
	}
	v2 := func(path string) *karta.Karta {
		k := gangKarta(t, "pytorchjob-v2")
		k.Spec.Instructions.GangScheduling.PodGroup.MinMemberPath = path
		return k
	}
	const runPolicy = ".spec.runPolicy.schedulingPolicy.minAvailable"
	cases := []struct {
		name   string
		karta  *karta.Karta
		value  any // runPolicy.schedulingPolicy.minAvailable; nil: not set
		want   int64
		subMin []int64 // v2 only
	}{
		{"alpha: the object's minimum replaces the computed 4", alpha(runPolicy), 2, 2, nil},
		{"alpha: a decimal string is a count, as scale paths take it", alpha(runPolicy), "3", 3, nil},
		{"alpha: absent keeps the computed minimum", alpha(runPolicy), nil, 4, nil},
		{"alpha: 0 keeps the computed minimum", alpha(runPolicy), 0, 4, nil},
		{"alpha: a default in the path", alpha(runPolicy + " // 1"), nil, 1, nil},
		{"v2: a minimum below the sum is taken from the last subgroup first", v2(runPolicy), 2, 2, []int64{1, 1}},
		{"v2: the first subgroup keeps its pods while later ones have some", v2(runPolicy), 1, 1, []int64{1, 0}},
		{"v2: a minimum above the sum leaves the subgroups", v2(runPolicy), 6, 6, []int64{1, 3}},
		{"v2: absent keeps the sum", v2(runPolicy), nil, 4, []int64{1, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := gangObj(t, "pytorchjob")
			if tc.value != nil {
				withRunPolicyMin(obj, tc.value)
			}
			pods := gangDocs(t, "pytorchjob.pods")
			g := compileGang(t, tc.karta)
			res := runGang(t, g, obj, pods)
			require.Len(t, res.Groups, 1)
			assert.Equal(t, tc.want, res.Groups[0].MinMember)
			assert.Len(t, res.Groups[0].Pods, 4, "the minimum changes no placement")
			for i, want := range tc.subMin {
				assert.Equal(t, want, res.Groups[0].SubGroups[i].MinMember)
			}
			if g.v2 == nil {
				assertPlaceOneAgrees(t, g, obj, pods, res)
			}

			viaHook, err := runProgramGang(t, tc.karta, obj, pods)
			require.NoError(t, err)
			assert.Equal(t, res, viaHook, "the hook answers as the model on gojq")
		})
	}
}

func TestMinMemberPathErrors(t *testing.T) {
	cases := []struct {
		name  string
		path  string
		value any
		want  string
	}{
		{"not a number", ".spec.runPolicy.schedulingPolicy.minAvailable", "half", `podGroups[0].minMemberPath: string "half" is not a decimal integer`},
		{"several values", ".spec.pytorchReplicaSpecs[].replicas", nil, "podGroups[0].minMemberPath: yields 2 values, want at most one"},
		{"not an integer", ".spec.runPolicy.schedulingPolicy.minAvailable", 1.5, "podGroups[0].minMemberPath: 1.5 is not an integer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := gangKarta(t, "pytorchjob")
			k.Spec.Instructions.GangScheduling.PodGroups[0].MinMemberPath = tc.path
			obj := gangObj(t, "pytorchjob")
			if tc.value != nil {
				withRunPolicyMin(obj, tc.value)
			}
			pods := gangDocs(t, "pytorchjob.pods")
			_, err := compileGang(t, k).gangGroups(context.Background(), gojqEvaluator{}, obj, pods)
			require.Error(t, err)
			var oe *GangObjectError
			require.True(t, errors.As(err, &oe), "a broken minimum fails the call: %v", err)
			assert.Equal(t, tc.want, err.Error())

			_, err = runProgramGang(t, k, obj, pods)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestMatchLabelsSelector(t *testing.T) {
	// The training operator's labels: the master by replica-type, the
	// workers by replica-type and operator-name together.
	k := gangKarta(t, "pytorchjob")
	comps := k.Spec.StructureDefinition.ChildComponents
	comps[0].PodSelector.ComponentTypeSelector = &karta.ComponentTypeSelector{
		MatchLabels: map[string]string{"training.kubeflow.org/replica-type": "master"}}
	comps[1].PodSelector.ComponentTypeSelector = &karta.ComponentTypeSelector{MatchLabels: map[string]string{
		"training.kubeflow.org/replica-type":  "worker",
		"training.kubeflow.org/operator-name": "pytorchjob-controller",
	}}
	require.Empty(t, karta.Validate(k).Errors())

	obj := gangObj(t, "pytorchjob")
	pods := gangDocs(t, "pytorchjob.pods")
	// A worker from another operator lacks one of the labels: no component
	// takes it.
	stray := gangPod(t, `
apiVersion: v1
kind: Pod
metadata:
  name: train-worker-9
  namespace: ml
  labels:
    training.kubeflow.org/job-name: train
    training.kubeflow.org/replica-type: worker
spec:
  containers: [{name: pytorch, image: busybox}]
`)
	pods = append(pods, stray)
	g := compileGang(t, k)
	res := runGang(t, g, obj, pods)
	require.Len(t, res.Groups, 1)
	assert.Equal(t, int64(4), res.Groups[0].MinMember)
	assert.Len(t, res.Groups[0].Pods, 4)
	require.Len(t, res.Unmatched, 1)
	assert.Equal(t, "ml/train-worker-9", res.Unmatched[0].Pod)
	assert.Equal(t, "no component selector matches", res.Unmatched[0].Reason)
	assertPlaceOneAgrees(t, g, obj, pods, res)

	viaHook, err := runProgramGang(t, k, obj, pods)
	require.NoError(t, err)
	assert.Equal(t, res, viaHook)

	t.Run("with keyPath, both must match", func(t *testing.T) {
		both := gangKarta(t, "pytorchjob")
		ts := both.Spec.StructureDefinition.ChildComponents[1].PodSelector.ComponentTypeSelector
		ts.MatchLabels = map[string]string{"training.kubeflow.org/operator-name": "pytorchjob-controller"}
		res := runGang(t, compileGang(t, both), obj, pods)
		require.Len(t, res.Unmatched, 1)
		assert.Equal(t, "ml/train-worker-9", res.Unmatched[0].Pod)
	})
}
