package podgroups

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/kartalua/karta/interpreter"
)

// Target is a gang scheduler whose objects Build writes.
type Target string

// The targets.
const (
	// WorkloadAPI is Kubernetes' own gang scheduling: scheduling.k8s.io
	// Workload and PodGroup (KEP-4671), read by kube-scheduler.
	WorkloadAPI Target = "workload-api"
	// KAI is KAI-Scheduler's scheduling.run.ai PodGroup.
	KAI Target = "kai"
	// Volcano is Volcano's scheduling.volcano.sh PodGroup.
	Volcano Target = "volcano"
	// Coscheduling is the scheduler-plugins coscheduling plugin's
	// scheduling.x-k8s.io PodGroup.
	Coscheduling Target = "coscheduling"
)

// Targets lists every target, in the order the docs present them.
func Targets() []Target { return []Target{WorkloadAPI, KAI, Volcano, Coscheduling} }

// Kinds are the kinds of the objects Build writes for target, in the
// order it writes them (the Workload API's Workload before its
// PodGroups); nil for an unknown target. A controller watches them.
func Kinds(target Target) []schema.GroupVersionKind {
	podGroup := func(gvk metav1.GroupVersionKind) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
	}
	switch target {
	case WorkloadAPI:
		return []schema.GroupVersionKind{workloadGV.WithKind("Workload"), workloadGV.WithKind("PodGroup")}
	case KAI:
		return []schema.GroupVersionKind{podGroup(kaiGVK)}
	case Volcano:
		return []schema.GroupVersionKind{volcanov1beta1.SchemeGroupVersion.WithKind("PodGroup")}
	case Coscheduling:
		return []schema.GroupVersionKind{podGroup(coschedulingGVK)}
	}
	return nil
}

// Kinds are Kinds(target) with the kinds these options add: the Workload
// API's CompositePodGroup (scheduling.k8s.io/v1alpha3) with
// CompositePodGroup, between the Workload and the PodGroups.
func (o Options) Kinds(target Target) []schema.GroupVersionKind {
	kinds := Kinds(target)
	if target == WorkloadAPI && o.CompositePodGroup {
		return []schema.GroupVersionKind{kinds[0], compositeGV.WithKind("CompositePodGroup"), kinds[1]}
	}
	return kinds
}

// ParseTarget reads a target's name; an unknown one is an
// *UnknownTargetError.
func ParseTarget(s string) (Target, error) {
	for _, t := range Targets() {
		if string(t) == s {
			return t, nil
		}
	}
	return "", &UnknownTargetError{Name: s}
}

// UnknownTargetError is a target name that is none of Targets.
type UnknownTargetError struct {
	Name string
}

func (e *UnknownTargetError) Error() string {
	names := make([]string, 0, 4)
	for _, t := range Targets() {
		names = append(names, string(t))
	}
	return fmt.Sprintf("unknown target %q (want %s)", e.Name, strings.Join(names, ", "))
}

// ErrNoGangInstructions is returned for a Karta without gang scheduling
// instructions: it says nothing about which pods must start together, so
// there is no group to build.
var ErrNoGangInstructions = errors.New("the Karta has no gang scheduling instructions (spec.instructions.gangScheduling), so no pods are ganged")

// NoGroupsError is a workload whose gang instructions yield no group:
// the groups of its alpha definitions are formed from its pods (their
// keys), and no pod was given, or none of the pods belongs to a group.
type NoGroupsError struct {
	// Definitions are the Karta's gang definitions.
	Definitions []string
	// Pods is the number of pods given.
	Pods int
	// Unmatched are the pods and why each belongs to no group.
	Unmatched []interpreter.Unmatched
}

func (e *NoGroupsError) Error() string {
	defs := quoteAll(e.Definitions)
	if e.Pods == 0 {
		return fmt.Sprintf("no gang group without pods: the groups of definition %s are formed from the workload's pods (their keys); pass its pods", defs)
	}
	reasons := map[string]int{}
	for _, u := range e.Unmatched {
		reasons[u.Reason]++
	}
	keys := make([]string, 0, len(reasons))
	for r := range reasons {
		keys = append(keys, r)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, r := range keys {
		parts[i] = fmt.Sprintf("%d: %s", reasons[r], r)
	}
	return fmt.Sprintf("none of the %d pods belongs to a gang group of definition %s (%s)", e.Pods, defs, strings.Join(parts, "; "))
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// InvalidError is an object Build made that its API would refuse: a
// name, a count or a field out of the API's limits. Errors lists each
// problem with its field path, as the API server reports it.
type InvalidError struct {
	Kind, Name string
	Errors     []string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s %s is invalid: %s", e.Kind, e.Name, strings.Join(e.Errors, "; "))
}
