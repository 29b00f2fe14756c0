package podgroups

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// Labels and annotations every object Build makes carries.
const (
	// ManagedByLabel is app.kubernetes.io/managed-by, set to "karta".
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// GroupAnnotation holds the gang group's name as GetGangGroups
	// reports it (the object's name may be a sanitised form of it).
	GroupAnnotation = "karta.run.ai/group"
	// KartaAnnotation names the Karta that described the workload.
	KartaAnnotation = "karta.run.ai/karta"
)

// Input is what Build reads. Object, Karta, Gangs and PodSpecs are
// required; Pods are optional (without them there are no pod links, and
// alpha definitions, whose groups come from the pods, have no groups).
type Input struct {
	// Object is the workload (the root object of its Karta).
	Object *unstructured.Unstructured
	// Karta describes the workload: its gang definitions and components.
	Karta *karta.Karta
	// Gangs is GetGangGroups' result for Object and Pods.
	Gangs *interpreter.GangResult
	// PodSpecs is GetPodSpecs' result for Object: the pod templates whose
	// requests make up minResources.
	PodSpecs *interpreter.PodSpecs
	// Pods are the pods GetGangGroups placed, to link to their groups.
	Pods []*unstructured.Unstructured
}

// Options tune what Build writes.
type Options struct {
	// Queue is the scheduler queue of KAI's and Volcano's PodGroups. Empty:
	// the queue the workload names (KAI: its kai.scheduler/queue label, else
	// its pods'; Volcano: its scheduling.volcano.sh/queue-name annotation or
	// label), else none.
	Queue string
	// TopologyAwareWorkloadScheduling writes a v2 group's required topology
	// level into the Workload API's schedulingConstraints, a field of the
	// alpha TopologyAwareWorkloadScheduling feature gate; without it the
	// constraint is left out, with a warning.
	TopologyAwareWorkloadScheduling bool
	// CompositePodGroup writes a v2 group with subgroups for the Workload
	// API as a tree of CompositePodGroups (scheduling.k8s.io/v1alpha3)
	// with a PodGroup per leaf subgroup, which the cluster serves with the
	// alpha CompositePodGroup feature gate (and its v1alpha3 API version).
	// It implies TopologyAwareWorkloadScheduling, a gate CompositePodGroup
	// needs. Without it a group is one PodGroup with the group's minimum,
	// and a warning says the subgroups' minimums are lost.
	CompositePodGroup bool
	// VolcanoSubGroupPolicy writes, for Volcano, a subgroup whose children
	// are leaves of one size as a subGroupPolicy (volcano.go), a field of
	// Volcano v1.14's PodGroup. Its scheduler needs to be v1.14.1 or later:
	// v1.14.0 allocates the pods of a job with subgroup policies only when
	// one has a hard network topology (volcano-sh/volcano 56c69011b, "jobs
	// with subgroups but not hard networkTopology.mode could not be
	// scheduled"), and a CRD before v1.14 drops the field. Without it
	// every subgroup with pods of its own is a task, with a warning that
	// the nesting is flattened.
	VolcanoSubGroupPolicy bool
	// AllowNoGroups makes a workload whose groups are not known yet (its
	// alpha definitions form them from pods, and none is placed) a result
	// rather than a *NoGroupsError: the objects that exist without groups,
	// which is the Workload API's Workload (each template's minCount 1
	// until its groups are known), and none for the other targets. A
	// controller writes that much before the pods exist.
	AllowNoGroups bool
}

// Result is what Build made.
type Result struct {
	Target Target `json:"target"`
	// Objects are the scheduler's objects, ready to apply: for the
	// Workload API the Workload, then one PodGroup per group (with
	// Options.CompositePodGroup, a group with subgroups is its
	// CompositePodGroups, parents first, then its leaves' PodGroups); for
	// the others one PodGroup per group. Groups are in GetGangGroups' order.
	Objects []*unstructured.Unstructured `json:"objects"`
	// Links are the placed pods' links to their groups, in the order of
	// GetGangGroups' placements.
	Links []PodLink `json:"links"`
	// Unlinked are the pods that belong to no group, with the reason.
	Unlinked []interpreter.Unmatched `json:"unlinked"`
	// Warnings are what the target cannot say of the gang, or what is
	// left out (a topology, a queue, a priority class the pods disagree on).
	Warnings []string `json:"warnings"`
}

// PodLink is one pod's link to its group's object.
type PodLink struct {
	// Pod is namespace/name, as GetGangGroups names it.
	Pod string `json:"pod"`
	// Object is the name of the group's object.
	Object string `json:"object"`
	// Role is the pod's KAI subgroup or Volcano task, "" when none.
	Role string `json:"role,omitempty"`
	// Patch is the JSON Patch (RFC 6902) that sets the link on the pod
	// (an admission webhook's answer); empty when the pod has it already.
	Patch []interpreter.PatchOp `json:"patch"`
}

// Hooks are what ForProgram calls of a Program: an *interpreter.Program,
// or the same Program's calls in a worker process (an
// *isolation.Program).
type Hooks interface {
	Name() string
	Karta() *karta.Karta
	GetGangGroups(ctx context.Context, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) (*interpreter.GangResult, error)
	GetPodSpecs(ctx context.Context, obj *unstructured.Unstructured) (*interpreter.PodSpecs, error)
}

// ForProgram runs p's GetGangGroups and GetPodSpecs on obj (and pods) and
// builds target's objects from them.
func ForProgram(ctx context.Context, p Hooks, obj *unstructured.Unstructured, pods []*unstructured.Unstructured, target Target, opts Options) (*Result, error) {
	if !HasGangInstructions(p.Karta()) {
		return nil, fmt.Errorf("karta %q: %w", p.Name(), ErrNoGangInstructions)
	}
	if _, err := ParseTarget(string(target)); err != nil {
		return nil, err
	}
	gangs, err := p.GetGangGroups(ctx, obj, pods)
	if err != nil {
		return nil, err
	}
	specs, err := p.GetPodSpecs(ctx, obj)
	if err != nil {
		return nil, err
	}
	return Build(Input{Object: obj, Karta: p.Karta(), Gangs: gangs, PodSpecs: specs, Pods: pods}, target, opts)
}

// HasGangInstructions reports whether k says which pods start together.
func HasGangInstructions(k *karta.Karta) bool {
	return len(definitions(k)) > 0
}

// definitions are k's gang definition names, in Karta order.
func definitions(k *karta.Karta) []string {
	ins := k.Spec.EffectiveInstructions()
	if ins == nil || ins.GangScheduling == nil {
		return nil
	}
	gs := ins.GangScheduling
	if gs.PodGroup != nil {
		return []string{gs.PodGroup.Name}
	}
	names := make([]string, len(gs.PodGroups))
	for i, d := range gs.PodGroups {
		names[i] = d.Name
	}
	return names
}

// Build makes target's objects for the gangs of in. It fails with
// ErrNoGangInstructions, a *NoGroupsError when no pod belongs to a group
// (and there is no v2 group, which exists without pods; unless
// Options.AllowNoGroups), an
// *UnknownTargetError, or an *InvalidError when an object would break
// its API's limits.
func Build(in Input, target Target, opts Options) (*Result, error) {
	if _, err := ParseTarget(string(target)); err != nil {
		return nil, err
	}
	defs := definitions(in.Karta)
	if len(defs) == 0 {
		return nil, fmt.Errorf("karta %q: %w", in.Karta.Name, ErrNoGangInstructions)
	}
	if len(in.Gangs.Groups) == 0 && !opts.AllowNoGroups {
		return nil, &NoGroupsError{Definitions: defs, Pods: len(in.Pods), Unmatched: in.Gangs.Unmatched}
	}
	b, err := newBuilder(in, target, opts)
	if err != nil {
		return nil, err
	}
	if len(in.Gangs.Groups) == 0 && target != WorkloadAPI {
		b.res.Unlinked = append(b.res.Unlinked, in.Gangs.Unmatched...)
		return &b.res, nil // AllowNoGroups: nothing exists without groups
	}
	switch target {
	case WorkloadAPI:
		err = b.workloadAPI(defs)
	case KAI:
		err = b.kai()
	case Volcano:
		err = b.volcano()
	case Coscheduling:
		err = b.coscheduling()
	}
	if err != nil {
		return nil, err
	}
	b.res.Links, b.res.Unlinked = b.links()
	return &b.res, nil
}

// builder holds what every target reads.
type builder struct {
	in     Input
	target Target
	opts   Options
	model  *model
	res    Result
	// objectOf maps a group's name to its object's name.
	objectOf map[string]string
	// roleOf maps a placed pod to its KAI subgroup or Volcano task.
	roleOf map[string]string
	// objectOfPod maps a placed pod to its leaf's PodGroup, when its
	// group is a tree of CompositePodGroups.
	objectOfPod map[string]string
	// parentOf maps a placed pod to the parent subgroup of its leaf when
	// the leaf is in a Volcano subGroupPolicy (VolcanoParentLabel).
	parentOf map[string]string
}

func newBuilder(in Input, target Target, opts Options) (*builder, error) {
	m, err := newModel(in)
	if err != nil {
		return nil, err
	}
	b := &builder{in: in, target: target, opts: opts, model: m,
		res:      Result{Target: target, Objects: []*unstructured.Unstructured{}, Links: []PodLink{}, Unlinked: []interpreter.Unmatched{}, Warnings: []string{}},
		objectOf: map[string]string{}, roleOf: map[string]string{}, objectOfPod: map[string]string{}, parentOf: map[string]string{}}
	for _, g := range in.Gangs.Groups {
		b.objectOf[g.Name] = ObjectName(target, g.Name)
	}
	if in.Object.GetUID() == "" {
		b.warn("the workload has no metadata.uid: the objects carry no owner reference, so they are not deleted with it")
	}
	return b, nil
}

func (b *builder) warn(format string, args ...any) {
	b.res.Warnings = append(b.res.Warnings, fmt.Sprintf(format, args...))
}

// meta is the metadata of an object for group (or of the Workload, with
// group ""): the workload's namespace, a controller reference to it, and
// karta's label and annotations.
func (b *builder) meta(name, group string) metav1.ObjectMeta {
	obj := b.in.Object
	m := metav1.ObjectMeta{Name: name, Namespace: obj.GetNamespace(),
		Labels:      map[string]string{ManagedByLabel: "karta"},
		Annotations: map[string]string{KartaAnnotation: b.in.Karta.Name}}
	if group != "" {
		m.Annotations[GroupAnnotation] = group
	}
	if uid := obj.GetUID(); uid != "" {
		yes := true
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(),
			Name: obj.GetName(), UID: uid, Controller: &yes, BlockOwnerDeletion: &yes}}
	}
	return m
}

// checkMeta validates an object's metadata as the API server does (name,
// namespace, labels, annotations, owner references).
func checkMeta(m *metav1.ObjectMeta) field.ErrorList {
	return apivalidation.ValidateObjectMeta(m, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

// invalid turns validation errors into an *InvalidError, nil when there
// are none.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return &InvalidError{Kind: kind, Name: name, Errors: msgs}
}

// count32 converts a member count to the APIs' int32; it must be at least
// 1.
func count32(kind, name, field string, n int64) (int32, error) {
	return countFrom(kind, name, field, n, 1)
}

// countFrom converts a count to int32; it must be at least least.
func countFrom(kind, name, field string, n, least int64) (int32, error) {
	if n < least || n > math.MaxInt32 {
		return 0, &InvalidError{Kind: kind, Name: name, Errors: []string{fmt.Sprintf("%s: Invalid value: %d: must be between %d and %d", field, n, least, math.MaxInt32)}}
	}
	return int32(n), nil
}

// add appends a typed object as unstructured, without the empty
// creationTimestamp and status a typed object always has.
func (b *builder) add(obj runtime.Object) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	b.addMap(u)
	return nil
}

func (b *builder) addMap(u map[string]any) {
	dropNulls(u)
	if st, ok := u["status"].(map[string]any); ok && len(st) == 0 {
		delete(u, "status")
	}
	b.res.Objects = append(b.res.Objects, &unstructured.Unstructured{Object: u})
}

// dropNulls removes the null members a typed object's JSON has for unset
// fields without omitempty (metadata.creationTimestamp, a template's
// schedulingConstraints): absent says the same.
func dropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range x {
			dropNulls(e)
		}
	}
}

// resourceMap renders a resource list as JSON values.
func resourceMap(rl corev1.ResourceList) map[string]any {
	if len(rl) == 0 {
		return nil
	}
	out := make(map[string]any, len(rl))
	for k, q := range rl {
		out[string(k)] = q.String()
	}
	return out
}
