package podgroups

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/jsonpatch"
	"github.com/kartalua/karta/interpreter"
)

// The pod-side links, as each scheduler reads them.
const (
	// PodGroupNameAnnotation is KAI-Scheduler's pod annotation naming its
	// PodGroup (podgrouper's "pod-group-name").
	PodGroupNameAnnotation = "pod-group-name"
	// KAISubGroupLabel is KAI-Scheduler's pod label naming its subgroup.
	KAISubGroupLabel = "kai.scheduler/subgroup-name"
	// KAIQueueLabel is KAI-Scheduler's queue label (on the workload, its
	// pods, and the PodGroup).
	KAIQueueLabel = "kai.scheduler/queue"
	// KAISkipPodGrouperAnnotation, "true" on a pod (or an owner of it),
	// tells KAI-Scheduler's podgrouper to leave the pod's PodGroup to
	// someone else: without it the podgrouper writes a PodGroup of its own
	// for the pod and rewrites its pod-group-name.
	KAISkipPodGrouperAnnotation = "kai.scheduler/skip-podgrouper"
	// VolcanoGroupAnnotation is the annotation Volcano's scheduler reads a
	// pod's PodGroup from (v1beta1.KubeGroupNameAnnotationKey).
	VolcanoGroupAnnotation = "scheduling.k8s.io/group-name"
	// VolcanoTaskAnnotation names the pod's task, the key of its group's
	// minTaskMember (batch.TaskSpecKey).
	VolcanoTaskAnnotation = "volcano.sh/task-spec"
	// VolcanoQueueAnnotation names a workload's Volcano queue.
	VolcanoQueueAnnotation = "scheduling.volcano.sh/queue-name"
	// CoschedulingLabel is the coscheduling plugin's pod label naming its
	// PodGroup.
	CoschedulingLabel = "scheduling.x-k8s.io/pod-group"
)

// links computes every placed pod's link, in placement order. A pod that
// Input.Pods does not hold gets no link: its patch depends on what it
// carries already.
func (b *builder) links() ([]PodLink, []interpreter.Unmatched) {
	byName := map[string][]*unstructured.Unstructured{}
	for _, p := range b.in.Pods {
		k := interpreter.PodKey(p.Object)
		byName[k] = append(byName[k], p)
	}
	links := []PodLink{}
	unlinked := append([]interpreter.Unmatched{}, b.in.Gangs.Unmatched...)
	for _, pl := range b.in.Gangs.Placements {
		pods := byName[pl.Pod]
		if len(pods) == 0 {
			continue
		}
		pod := pods[0]
		byName[pl.Pod] = pods[1:]
		obj := b.objectOf[pl.Group]
		if leaf, ok := b.objectOfPod[pl.Pod]; ok {
			obj = leaf
		}
		role := b.roleOf[pl.Pod]
		ops, reason := b.podPatch(pod, obj, role, b.parentOf[pl.Pod])
		if reason != "" {
			unlinked = append(unlinked, interpreter.Unmatched{Pod: pl.Pod, Reason: reason})
			continue
		}
		links = append(links, PodLink{Pod: pl.Pod, Object: obj, Role: role, Patch: ops})
	}
	return links, unlinked
}

// podPatch is the JSON Patch that links pod to the object named obj, as
// role (its KAI subgroup or Volcano task) and, for Volcano, in the
// subGroupPolicy of parent when that is not "", or the reason it cannot be
// linked.
func (b *builder) podPatch(pod *unstructured.Unstructured, obj, role, parent string) ([]jsonpatch.Operation, string) {
	ops := []jsonpatch.Operation{}
	pod = pod.DeepCopy() // setEntries records its writes on it
	switch b.target {
	case WorkloadAPI:
		cur, found, _ := unstructured.NestedString(pod.Object, "spec", "schedulingGroup", "podGroupName")
		switch {
		case found && cur == obj:
		case found:
			return nil, fmt.Sprintf("its spec.schedulingGroup.podGroupName is %q, not its group's PodGroup %q, and the field is immutable", cur, obj)
		default:
			if _, ok := pod.Object["spec"].(map[string]any); !ok {
				ops = append(ops, jsonpatch.Operation{Op: "add", Path: "/spec", Value: map[string]any{}})
			}
			ops = append(ops, jsonpatch.Operation{Op: "add", Path: "/spec/schedulingGroup", Value: map[string]any{"podGroupName": obj}})
		}
	case KAI:
		ops = setEntries(ops, pod, "annotations", map[string]string{PodGroupNameAnnotation: obj, KAISkipPodGrouperAnnotation: "true"})
		if role != "" {
			ops = setEntries(ops, pod, "labels", map[string]string{KAISubGroupLabel: role})
		}
	case Volcano:
		entries := map[string]string{VolcanoGroupAnnotation: obj}
		if role != "" {
			entries[VolcanoTaskAnnotation] = role
		}
		ops = setEntries(ops, pod, "annotations", entries)
		if parent != "" {
			// A subGroupPolicy selects and groups pods by labels: the
			// parent, and the leaf in the label Volcano's job controller
			// also sets beside the annotation.
			ops = setEntries(ops, pod, "labels", map[string]string{VolcanoParentLabel: parent, VolcanoTaskAnnotation: role})
		}
	case Coscheduling:
		ops = setEntries(ops, pod, "labels", map[string]string{CoschedulingLabel: obj})
	}
	return ops, ""
}

// setEntries appends the operations that make metadata.<field> hold
// entries: one add of the whole map when the pod has none, else an add or
// a replace per entry that differs, in key order. It writes the entries
// into pod, so that a later call sees them.
func setEntries(ops []jsonpatch.Operation, pod *unstructured.Unstructured, fieldName string, entries map[string]string) []jsonpatch.Operation {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	meta, hasMeta := pod.Object["metadata"].(map[string]any)
	cur, hasMap := meta[fieldName].(map[string]any)
	if !hasMap {
		m := make(map[string]any, len(entries))
		for k, v := range entries {
			m[k] = v
		}
		if !hasMeta {
			pod.Object["metadata"] = map[string]any{fieldName: m}
			return append(ops, jsonpatch.Operation{Op: "add", Path: "/metadata", Value: map[string]any{fieldName: m}})
		}
		meta[fieldName] = m
		return append(ops, jsonpatch.Operation{Op: "add", Path: "/metadata/" + fieldName, Value: m})
	}
	for _, k := range keys {
		path := jsonpatch.Pointer([]any{"metadata", fieldName, k})
		old, ok := cur[k]
		switch {
		case !ok:
			ops = append(ops, jsonpatch.Operation{Op: "add", Path: path, Value: entries[k]})
		case old != entries[k]:
			ops = append(ops, jsonpatch.Operation{Op: "replace", Path: path, Value: entries[k]})
		}
		cur[k] = entries[k]
	}
	return ops
}
