package podgroups

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// LinkPod is the link of one pod that Program.PlacePod placed, as Build
// would give it among its Links: what an admission webhook answers when the
// pod is created, before the other pods of its group exist. k is the Karta
// of the Program that placed the pod. It fails with an *UnknownTargetError,
// or an *UnlinkedError when the pod cannot be linked (it names another
// PodGroup in a field that cannot change).
func LinkPod(k *karta.Karta, target Target, pod *unstructured.Unstructured, pl *interpreter.PodPlacement) (*PodLink, error) {
	if _, err := ParseTarget(string(target)); err != nil {
		return nil, err
	}
	b := &builder{target: target}
	obj := ObjectName(target, pl.Group)
	role := placedRole(k, target, pl)
	ops, reason := b.podPatch(pod, obj, role)
	if reason != "" {
		return nil, &UnlinkedError{Pod: podKey(pod), Reason: reason}
	}
	return &PodLink{Pod: podKey(pod), Object: obj, Role: role, Patch: ops}, nil
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
