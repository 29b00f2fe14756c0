package podgroups_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	evanjsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/jsonpatch"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// A webhook links one pod from PlacePod's answer; LinkPod gives it the
// link Build gives the pod among all of its workload's pods, for every
// example and target: the same object, role and patch. Where the link
// depends on the pod's subgroup (NeedsGroups: KAI's subgroup label,
// Volcano's task and subGroupPolicy labels), the webhook calls
// GetGangGroups with the one pod and LinkInGroups, which gives the same.
func TestLinkPodIsBuildsLink(t *testing.T) {
	for _, ex := range examples(t) {
		for _, target := range podgroups.Targets() {
			t.Run(ex.name+"/"+string(target), func(t *testing.T) {
				res, err := podgroups.ForProgram(ex.ctx(), ex.p, ex.obj, ex.pods, target, podgroups.Options{})
				require.NoError(t, err)
				byName := map[string]*unstructured.Unstructured{}
				for _, pod := range ex.pods {
					byName[interpreter.PodKey(pod.Object)] = pod
				}
				require.NotEmpty(t, res.Links)
				for _, want := range res.Links {
					pod := byName[want.Pod]
					require.NotNil(t, pod, want.Pod)
					pl, err := ex.p.PlacePod(ex.ctx(), ex.obj, pod)
					require.NoError(t, err)
					got, err := podgroups.LinkPod(ex.p.Karta(), target, pod, pl)
					require.NoError(t, err)
					if podgroups.NeedsGroups(ex.p.Karta(), target, podgroups.Options{}) {
						assert.Equal(t, want.Object, got.Object)
						gangs, err := ex.p.GetGangGroups(ex.ctx(), ex.obj, []*unstructured.Unstructured{pod})
						require.NoError(t, err)
						got, err = podgroups.LinkInGroups(target, podgroups.Options{}, pod, gangs)
						require.NoError(t, err)
					}
					assert.Equal(t, want, *got)
					name, linked := podgroups.LinkOf(target, applied(t, pod, got.Patch))
					assert.True(t, linked)
					assert.Equal(t, want.Object, name, "LinkOf reads the link the patch sets")
				}
			})
		}
	}
}

// applied is pod with patch applied, as the API server applies an
// admission webhook's JSON Patch.
func applied(t *testing.T, pod *unstructured.Unstructured, patch []jsonpatch.Operation) *unstructured.Unstructured {
	t.Helper()
	ops, err := json.Marshal(patch)
	require.NoError(t, err)
	decoded, err := evanjsonpatch.DecodePatch(ops)
	require.NoError(t, err)
	doc, err := json.Marshal(pod.Object)
	require.NoError(t, err)
	doc, err = decoded.Apply(doc)
	require.NoError(t, err)
	out := &unstructured.Unstructured{}
	require.NoError(t, out.UnmarshalJSON(doc))
	return out
}

func TestLinkPodRefuses(t *testing.T) {
	p, obj, pods := pytorchjob(t, nil)
	pl, err := p.PlacePod(context.Background(), obj, pods[0])
	require.NoError(t, err)

	_, err = podgroups.LinkPod(p.Karta(), "yunikorn", pods[0], pl)
	var unknown *podgroups.UnknownTargetError
	require.ErrorAs(t, err, &unknown)

	other := pods[0].DeepCopy()
	set(t, other.Object, "someone-elses", "spec", "schedulingGroup", "podGroupName")
	_, err = podgroups.LinkPod(p.Karta(), podgroups.WorkloadAPI, other, pl)
	var unlinked *podgroups.UnlinkedError
	require.True(t, errors.As(err, &unlinked), "%v", err)
	assert.Equal(t, interpreter.PodKey(other.Object), unlinked.Pod)
	assert.Contains(t, err.Error(), `its spec.schedulingGroup.podGroupName is "someone-elses"`)

	// A pod linked already gets no operation: the webhook has nothing to do.
	link, err := podgroups.LinkPod(p.Karta(), podgroups.Coscheduling, pods[0], pl)
	require.NoError(t, err)
	again, err := podgroups.LinkPod(p.Karta(), podgroups.Coscheduling, applied(t, pods[0], link.Patch), pl)
	require.NoError(t, err)
	assert.Empty(t, again.Patch)
}

func TestLinkOf(t *testing.T) {
	pod := func(meta, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": meta, "spec": spec}}
	}
	cases := []struct {
		target podgroups.Target
		pod    *unstructured.Unstructured
		want   string
	}{
		{podgroups.WorkloadAPI, pod(nil, map[string]any{"schedulingGroup": map[string]any{"podGroupName": "g"}}), "g"},
		{podgroups.WorkloadAPI, pod(map[string]any{"annotations": map[string]any{"pod-group-name": "g"}}, nil), ""},
		{podgroups.KAI, pod(map[string]any{"annotations": map[string]any{"pod-group-name": "g"}}, nil), "g"},
		{podgroups.KAI, pod(map[string]any{"labels": map[string]any{"pod-group-name": "g"}}, nil), ""},
		{podgroups.Volcano, pod(map[string]any{"annotations": map[string]any{"scheduling.k8s.io/group-name": "g"}}, nil), "g"},
		{podgroups.Volcano, pod(map[string]any{"annotations": map[string]any{"scheduling.k8s.io/group-name": ""}}, nil), ""},
		{podgroups.Coscheduling, pod(map[string]any{"labels": map[string]any{"scheduling.x-k8s.io/pod-group": "g"}}, nil), "g"},
		{podgroups.Coscheduling, pod(nil, nil), ""},
	}
	for _, c := range cases {
		got, ok := podgroups.LinkOf(c.target, c.pod)
		assert.Equal(t, c.want, got, "%s %v", c.target, c.pod.Object)
		assert.Equal(t, c.want != "", ok)
	}
}

// Before its pods exist, a workload of alpha definitions has no group: a
// controller still writes the Workload API's Workload, from the Karta and
// the object alone, and nothing for the other targets.
func TestAllowNoGroups(t *testing.T) {
	p, obj, _ := alphaPyTorchJob(t)
	_, err := podgroups.ForProgram(context.Background(), p, obj, nil, podgroups.WorkloadAPI, podgroups.Options{})
	var none *podgroups.NoGroupsError
	require.ErrorAs(t, err, &none)

	res, err := podgroups.ForProgram(context.Background(), p, obj, nil, podgroups.WorkloadAPI, podgroups.Options{AllowNoGroups: true})
	require.NoError(t, err)
	require.Len(t, res.Objects, 1)
	wl := res.Objects[0]
	assert.Equal(t, "Workload", wl.GetKind())
	assert.Equal(t, obj.GetName(), wl.GetName())
	assert.Equal(t, []any{map[string]any{"name": "job", "schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": int64(1)}}}},
		spec(t, wl, "podGroupTemplates"))
	checkObject(t, podgroups.WorkloadAPI, wl)

	for _, target := range []podgroups.Target{podgroups.KAI, podgroups.Volcano, podgroups.Coscheduling} {
		res, err := podgroups.ForProgram(context.Background(), p, obj, nil, target, podgroups.Options{AllowNoGroups: true})
		require.NoError(t, err, target)
		assert.Empty(t, res.Objects, target)
		assert.Empty(t, res.Warnings, target)
	}

	// Pods in no group are reported, as with groups.
	stray := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "stray", "namespace": obj.GetNamespace()}}}
	res, err = podgroups.ForProgram(context.Background(), p, obj, []*unstructured.Unstructured{stray}, podgroups.Volcano, podgroups.Options{AllowNoGroups: true})
	require.NoError(t, err)
	require.Len(t, res.Unlinked, 1)
	assert.Equal(t, interpreter.Unmatched{Pod: "nlp/stray", Reason: res.Unlinked[0].Reason}, res.Unlinked[0])
	assert.NotEmpty(t, res.Unlinked[0].Reason)
}

// Kinds names what Build writes, for every example and target.
func TestKinds(t *testing.T) {
	for _, ex := range examples(t) {
		for _, target := range podgroups.Targets() {
			res, err := podgroups.ForProgram(ex.ctx(), ex.p, ex.obj, ex.pods, target, podgroups.Options{})
			require.NoError(t, err)
			for _, o := range res.Objects {
				assert.Contains(t, podgroups.Kinds(target), o.GroupVersionKind(), "%s %s", ex.name, target)
			}
		}
	}
	assert.Nil(t, podgroups.Kinds("yunikorn"))
}
