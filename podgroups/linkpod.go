package podgroups

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// LinkPod is the link of one pod that Program.PlacePod placed, as Build
// would give it among its Links: what an admission webhook answers when the
// pod is created, before the other pods of its group exist. k is the Karta
// of the Program that placed the pod. PlacePod does not say which subgroup a
// pod is in: when the link names it (NeedsGroups), use LinkInGroups. It
// fails with an *UnknownTargetError,
// or an *UnlinkedError when the pod cannot be linked (it names another
// PodGroup in a field that cannot change).
func LinkPod(k *karta.Karta, target Target, pod *unstructured.Unstructured, pl *interpreter.PodPlacement) (*PodLink, error) {
	if _, err := ParseTarget(string(target)); err != nil {
		return nil, err
	}
	b := &builder{target: target}
	obj := ObjectName(target, pl.Group)
	role := placedRole(k, target, pl)
	ops, reason := b.podPatch(pod, obj, role, "")
	if reason != "" {
		return nil, &UnlinkedError{Pod: interpreter.PodKey(pod.Object), Reason: reason}
	}
	return &PodLink{Pod: interpreter.PodKey(pod.Object), Object: obj, Role: role, Patch: ops}, nil
}

// NeedsGroups reports whether a pod's link for target depends on the
// subgroup GetGangGroups puts it in, which PlacePod does not say: k's v2
// group has subgroups, and target links pods to them (KAI's subgroup
// label, Volcano's task, the Workload API's leaf PodGroup under
// Options.CompositePodGroup). A webhook then links the pod with
// LinkInGroups.
func NeedsGroups(k *karta.Karta, target Target, opts Options) bool {
	ins := k.Spec.EffectiveInstructions()
	if ins == nil || ins.GangScheduling == nil || ins.GangScheduling.PodGroup == nil || len(ins.GangScheduling.PodGroup.SubGroups) == 0 {
		return false
	}
	return target == KAI || target == Volcano || target == WorkloadAPI && opts.CompositePodGroup
}

// LinkInGroups is the link of pod that GetGangGroups (called with the pod)
// placed in gangs, as Build would give it among its Links: to its group's
// object, or its leaf subgroup's PodGroup, with its leaf subgroup as its
// role. It fails with an *UnknownTargetError, an *interpreter.UnmatchedError
// for a pod GetGangGroups left unmatched, or an *UnlinkedError when the pod
// is in no group or cannot be linked.
func LinkInGroups(target Target, opts Options, pod *unstructured.Unstructured, gangs *interpreter.GangResult) (*PodLink, error) {
	if _, err := ParseTarget(string(target)); err != nil {
		return nil, err
	}
	key := interpreter.PodKey(pod.Object)
	// GetGangGroups names the pod as it does (a pod created with
	// generateName has no name yet): a call with the one pod is about it.
	sole := len(gangs.Placements)+len(gangs.Unmatched) == 1
	for _, u := range gangs.Unmatched {
		if u.Pod == key || sole {
			return nil, &interpreter.UnmatchedError{Pod: key, Reason: u.Reason}
		}
	}
	for _, pl := range gangs.Placements {
		if pl.Pod != key && !sole {
			continue
		}
		i := slices.IndexFunc(gangs.Groups, func(g interpreter.Group) bool { return g.Name == pl.Group })
		if i < 0 {
			break
		}
		g := &gangs.Groups[i]
		obj, role, parent := ObjectName(target, g.Name), "", ""
		if leaf := leafOf(g, pl.Pod); leaf != nil {
			if target == KAI || target == Volcano {
				role = labelName(leaf.Name)
			}
			if target == Volcano && opts.VolcanoSubGroupPolicy {
				parent = volcanoParentOf(g, pl.Pod)
			}
			if target == WorkloadAPI && opts.CompositePodGroup && !hasChildren(g, leaf.Name) && compositeUnfit([]string{g.Definition}, []*interpreter.Group{g}) == "" {
				obj = subgroupObjectName(g.Name, leaf.Name)
			}
		}
		b := &builder{target: target}
		ops, reason := b.podPatch(pod, obj, role, parent)
		if reason != "" {
			return nil, &UnlinkedError{Pod: key, Reason: reason}
		}
		return &PodLink{Pod: key, Object: obj, Role: role, Patch: ops}, nil
	}
	return nil, &UnlinkedError{Pod: key, Reason: "GetGangGroups placed it in no group"}
}

// leafOf is the deepest subgroup of g that lists pod (parents come before
// their children), nil when none does.
func leafOf(g *interpreter.Group, pod string) *interpreter.SubGroup {
	var leaf *interpreter.SubGroup
	for i := range g.SubGroups {
		if slices.Contains(g.SubGroups[i].Pods, pod) {
			leaf = &g.SubGroups[i]
		}
	}
	return leaf
}

func hasChildren(g *interpreter.Group, name string) bool {
	return slices.ContainsFunc(g.SubGroups, func(sg interpreter.SubGroup) bool { return sg.Parent == name })
}

// subgroupObjectName is the name of the Workload API object of group's
// subgroup sub: a CompositePodGroup when sub has children, else its leaf
// PodGroup.
func subgroupObjectName(group, sub string) string {
	return ObjectName(WorkloadAPI, group+"-"+labelName(sub))
}

// UnlinkedError is a pod that cannot be linked to its group's object.
type UnlinkedError struct {
	Pod, Reason string
}

func (e *UnlinkedError) Error() string {
	return fmt.Sprintf("pod %s cannot be linked: %s", e.Pod, e.Reason)
}

// placedRole is the role Build gives a placed pod (see plans): a v2
// group's subgroup for KAI and Volcano (the one PlacePod reports: of the
// nearest component at or above the pod's that one is of, per instance
// when the entry splits so), an alpha group's
// component and instance for Volcano, none otherwise.
func placedRole(k *karta.Karta, target Target, pl *interpreter.PodPlacement) string {
	if target != KAI && target != Volcano {
		return ""
	}
	ins := k.Spec.EffectiveInstructions()
	if ins == nil || ins.GangScheduling == nil {
		return ""
	}
	v2 := ins.GangScheduling.PodGroup
	if v2 == nil {
		if target == Volcano {
			return labelName(roleName(pl.Component, pl.Instance))
		}
		return ""
	}
	if pl.SubGroup == "" {
		return ""
	}
	return labelName(pl.SubGroup)
}

// LinkOf is the name of the object a pod is linked to for target (its
// spec.schedulingGroup.podGroupName, or the annotation or label the
// target's scheduler reads), false when it carries none.
func LinkOf(target Target, pod *unstructured.Unstructured) (string, bool) {
	var name string
	var found bool
	switch target {
	case WorkloadAPI:
		name, found, _ = unstructured.NestedString(pod.Object, "spec", "schedulingGroup", "podGroupName")
	case KAI:
		name, found = pod.GetAnnotations()[PodGroupNameAnnotation]
	case Volcano:
		name, found = pod.GetAnnotations()[VolcanoGroupAnnotation]
	case Coscheduling:
		name, found = pod.GetLabels()[CoschedulingLabel]
	}
	return name, found && name != ""
}
