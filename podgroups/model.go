package podgroups

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// What makes up a group's minimum (docs/podgroups.md, "minResources").
//
// A group's units are the pod-bearing instances of its scope, in
// GetPodSpecs' order (components in Karta order, instances in id order):
// the components its definition's members name (a v2 subgroup's
// component) and their descendants. A member whose component has
// instances counts only the instances its group's pods are in, when they
// are in some; the others, all. Each unit expects E pods: its minReplicas
// if > 0, else its replicas if > 0, else 0; 1 without a scale definition
// when no component of the Karta has one (as GetGangGroups counts).
//
// The group's minMember M is apportioned over its units as the scheduler
// would fill it: a pass takes E pods of each unit in order, passes repeat
// (an ancestor's replicas repeat its whole subtree), and the last pass
// stops when M pods are counted. When M is the units' total (the usual
// case) every unit gets exactly E; with a smaller M (minMemberPath) the
// first units (the launcher, the master, the head) come first, as
// Volcano's and the Kubeflow operators' own minResources do.

// unit is one pod-bearing instance of a group's scope.
type unit struct {
	item *interpreter.PodSpecItem
	// expect is E, the unit's pods in one pass.
	expect int64
	// requests are one pod's requests as the scheduler counts them.
	requests corev1.ResourceList
	// priorityClass is the pod template's spec.priorityClassName.
	priorityClass string
}

// role names a unit among its group's: its component, and instance when
// it has one.
func (u *unit) role() string { return roleName(u.item.Component, u.item.Instance) }

func roleName(component, instance string) string {
	if instance == "" {
		return component
	}
	return component + "-" + instance
}

// model is the Karta's component tree and the object's units.
type model struct {
	parent map[string]string
	// instanced are the components with instanceIdPath.
	instanced map[string]bool
	units     []*unit
	// alpha are the alpha definitions by name; v2 is the v2 one.
	alpha map[string]*karta.PodGroup
	v2    *karta.PodGroupV2
}

func newModel(in Input) (*model, error) {
	m := &model{parent: map[string]string{}, instanced: map[string]bool{}, alpha: map[string]*karta.PodGroup{}}
	definitionMode := false
	for _, c := range in.Karta.Spec.StructureDefinition.Components() {
		if c.OwnerRef != nil {
			m.parent[c.Name] = *c.OwnerRef
		}
		if c.InstanceIDPath != "" {
			m.instanced[c.Name] = true
		}
		if c.ScaleDefinition != nil {
			definitionMode = true
		}
	}
	if ins := in.Karta.Spec.EffectiveInstructions(); ins != nil && ins.GangScheduling != nil {
		m.v2 = ins.GangScheduling.PodGroup
		for i := range ins.GangScheduling.PodGroups {
			d := &ins.GangScheduling.PodGroups[i]
			m.alpha[d.Name] = d
		}
	}
	for i := range in.PodSpecs.Items {
		it := &in.PodSpecs.Items[i]
		spec, err := podSpecOf(it)
		if err != nil {
			return nil, fmt.Errorf("component %q instance %q: the pod template: %w", it.Component, it.Instance, err)
		}
		u := &unit{item: it, requests: podRequests(spec), priorityClass: spec.PriorityClassName}
		switch {
		case it.Scale != nil:
			for _, n := range []*int64{it.Scale.MinReplicas, it.Scale.Replicas} {
				if n != nil && *n > 0 {
					u.expect = *n
					break
				}
			}
		case !definitionMode:
			u.expect = 1
		}
		m.units = append(m.units, u)
	}
	return m, nil
}

// within reports whether component c is scope or one of its descendants.
func (m *model) within(c, scope string) bool {
	for seen := 0; c != "" && seen <= len(m.parent); seen++ {
		if c == scope {
			return true
		}
		c = m.parent[c]
	}
	return false
}

// groupUnits are the units of an alpha group.
func (m *model) groupUnits(g *interpreter.Group, placements []interpreter.Placement) []*unit {
	def := m.alpha[g.Definition]
	if def == nil {
		return nil
	}
	// The instances the group's pods are in, per member component.
	seen := map[string][]string{}
	for _, p := range placements {
		if p.Group == g.Name && m.instanced[p.Component] && !slices.Contains(seen[p.Component], p.Instance) {
			seen[p.Component] = append(seen[p.Component], p.Instance)
		}
	}
	var out []*unit
	for _, u := range m.units {
		for _, mem := range def.Members {
			if !m.within(u.item.Component, mem.ComponentName) {
				continue
			}
			if ids := seen[mem.ComponentName]; u.item.Component == mem.ComponentName && len(ids) > 0 && !slices.Contains(ids, u.item.Instance) {
				continue
			}
			out = append(out, u)
			break
		}
	}
	return out
}

// subUnits are the units of a v2 subgroup's component.
func (m *model) subUnits(component string) []*unit {
	var out []*unit
	for _, u := range m.units {
		// A per-instance subgroup is named after its unit's role,
		// <component>-<id> (docs/karta.md, "The v2 podGroup").
		if m.within(u.item.Component, component) || u.role() == component {
			out = append(out, u)
		}
	}
	return out
}

// apportion fills n pods over counts in passes (see above): each entry
// takes its count per full pass, and the last pass stops at n. It returns
// nil when the counts are all zero: the pods cannot be told apart.
func apportion(counts []int64, n int64) []int64 {
	var total int64
	for _, c := range counts {
		total += c
	}
	if total <= 0 || n <= 0 {
		return nil
	}
	full, rest := n/total, n%total
	out := make([]int64, len(counts))
	for i, c := range counts {
		take := min(c, rest)
		out[i] = full*c + take
		rest -= take
	}
	return out
}

// share is one unit's part of a minimum.
type share struct {
	u *unit
	n int64
}

// shares apportions n over units.
func shares(units []*unit, n int64) []share {
	counts := make([]int64, len(units))
	for i, u := range units {
		counts[i] = u.expect
	}
	parts := apportion(counts, n)
	if parts == nil {
		return nil
	}
	out := make([]share, 0, len(units))
	for i, u := range units {
		if parts[i] > 0 {
			out = append(out, share{u, parts[i]})
		}
	}
	return out
}

// minResources is Σ n × requests over the shares; nil when they request
// nothing.
func minResources(ss []share) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, s := range ss {
		for name, q := range s.u.requests {
			q = q.DeepCopy()
			q.Mul(s.n)
			if cur, ok := out[name]; ok {
				cur.Add(q)
				out[name] = cur
			} else {
				out[name] = q
			}
		}
	}
	for name, q := range out {
		if q.IsZero() {
			delete(out, name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// podSpecOf is the unit's pod spec, typed: the template's or pod spec, or
// for a fragmented definition the spec its fragments make (spec.containers
// = [main] ++ containers, main being container with image and resources,
// as GetPodSpecs' PodTemplateSpec view builds it).
func podSpecOf(it *interpreter.PodSpecItem) (*corev1.PodSpec, error) {
	var raw any
	switch {
	case it.PodTemplateSpec != nil:
		raw = it.PodTemplateSpec["spec"]
	case it.PodSpec != nil:
		raw = it.PodSpec
	case it.Fragmented != nil:
		raw = fragmentedSpec(it.Fragmented)
	}
	spec := &corev1.PodSpec{}
	if raw == nil {
		return spec, nil
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, spec); err != nil {
		return nil, err
	}
	return spec, nil
}

func fragmentedSpec(f *interpreter.Fragmented) map[string]any {
	spec := map[string]any{}
	var containers []any
	if f.Container != nil || f.Image != nil || f.Resources != nil {
		main := map[string]any{}
		for k, v := range f.Container {
			main[k] = v
		}
		if f.Image != nil {
			main["image"] = *f.Image
		}
		if f.Resources != nil {
			main["resources"] = f.Resources
		}
		containers = append(containers, main)
	}
	containers = append(containers, f.Containers...)
	if containers != nil {
		spec["containers"] = containers
	}
	if f.InitContainers != nil {
		spec["initContainers"] = f.InitContainers
	}
	if f.PriorityClassName != nil {
		spec["priorityClassName"] = *f.PriorityClassName
	}
	if f.SchedulerName != nil {
		spec["schedulerName"] = *f.SchedulerName
	}
	return spec
}

// PodRequests are the requests of one pod of a pod spec item, as
// kube-scheduler counts them (see podRequests): what the gang objects'
// minResources add up, and what the metrics exporter reports per
// component.
func PodRequests(it *interpreter.PodSpecItem) (corev1.ResourceList, error) {
	spec, err := podSpecOf(it)
	if err != nil {
		return nil, err
	}
	return podRequests(spec), nil
}

// podRequests are one pod's requests as kube-scheduler counts them
// (k8s.io/component-helpers' PodRequests: the larger of the containers'
// sum and each init container's, restartable init containers added, the
// pod-level resources where set, plus the overhead), after the API
// server's defaulting: a container (or the pod) that sets a limit and no
// request requests its limit.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: *spec.DeepCopy()}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			defaultRequests(&cs[i].Resources)
		}
	}
	if pod.Spec.Resources != nil {
		defaultRequests(pod.Spec.Resources)
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

func defaultRequests(r *corev1.ResourceRequirements) {
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		r.Requests[name] = q.DeepCopy()
	}
}
