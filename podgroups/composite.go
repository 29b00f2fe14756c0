package podgroups

import (
	"context"
	"fmt"
	"slices"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kartalua/karta/interpreter"
)

// The Workload API's hierarchy (KEP-4671's CompositePodGroup, alpha in
// Kubernetes 1.37 behind the CompositePodGroup gate, which needs
// GenericWorkload and TopologyAwareWorkloadScheduling). A v2 group with
// subgroups is a tree of CompositePodGroups with PodGroups at its leaves:
//
//   - the group is a root CompositePodGroup named as its flat PodGroup
//     would be, whose gang policy's minGroupCount is the number of its top
//     subgroups it needs (minSubGroups when set);
//   - a subgroup with children is a CompositePodGroup under its parent's,
//     needing its minSubGroups children when it states them (a Volcano
//     task's minPartitions), else as many as its minimum takes (all of
//     them when the minimum is their sum, the usual case);
//   - a leaf subgroup is a PodGroup under its parent's CompositePodGroup,
//     with the leaf's minimum as its gang minCount, and its pods name it.
//
// CompositePodGroup exists only in scheduling.k8s.io/v1alpha3 (k8s.io/api
// v0.37.2); the Workload and PodGroups stay v1beta1 (its
// compositePodGroupTemplates and parentCompositePodGroupName). The Workload's
// templates are one per level of the tree: the group's composite template,
// and under it, per depth, a composite template for the subgroups with
// children and a PodGroup template for the leaves, each with the smallest
// minimum of its objects (as the flat templates do). Subgroup names change
// with the workload (one per replica), so per-level templates are what stays
// the same while it scales.
var compositeGV = schedulingv1alpha3.SchemeGroupVersion

// compositeUnfit is why a Karta's groups cannot be written as
// CompositePodGroups, "" when they can: alpha definitions have no
// subgroups; a tree deeper than the API's; a subgroup with pods of its own
// besides its children's (the API links pods to PodGroups, the leaves,
// only); a leaf whose minimum is 0 (a gang PodGroup needs at least 1).
func compositeUnfit(defs []string, groups []*interpreter.Group) string {
	if len(defs) != 1 {
		return "alpha gang definitions have no subgroups"
	}
	for _, g := range groups {
		subs, _ := subTree(g)
		for j := range subs {
			sp := &subs[j]
			switch {
			case depth(subs, j)+2 > schedulingv1beta1.WorkloadMaxTreeDepth:
				return fmt.Sprintf("group %s: subgroup %s is deeper than the API's tree of %d levels", g.Name, sp.sg.Name, schedulingv1beta1.WorkloadMaxTreeDepth)
			case !sp.leaf() && sp.own > 0:
				return fmt.Sprintf("group %s: subgroup %s has %d pods of its own besides its subgroups', and only a leaf PodGroup holds pods", g.Name, sp.sg.Name, sp.own)
			case sp.leaf() && sp.sg.MinMember < 1:
				return fmt.Sprintf("group %s: leaf subgroup %s has minimum 0, and a gang PodGroup's minCount is at least 1", g.Name, sp.sg.Name)
			}
		}
	}
	return ""
}

// depth is the number of subgroups above subs[j].
func depth(subs []subPlan, j int) int {
	d := 0
	for parent := subs[j].parent; parent != ""; d++ {
		k := slices.IndexFunc(subs, func(sp subPlan) bool { return sp.name == parent })
		parent = subs[k].parent
	}
	return d
}

// groupsNeeded is how many children, taken in order, make up minimum; all
// of them when their minimums add up to it.
func groupsNeeded(mins []int64, minimum int64) int64 {
	var sum, n int64
	for _, m := range mins {
		if sum >= minimum && n > 0 {
			break
		}
		sum += m
		n++
	}
	return max(n, 1)
}

// levelTemplates are the Workload's templates of one depth (0: the
// groups).
type levelTemplates struct {
	composite *schedulingv1beta1.CompositePodGroupTemplate
	leaves    *schedulingv1beta1.PodGroupTemplate
}

// workloadAPIComposite builds the Workload with composite templates, the
// groups' CompositePodGroups and their leaves' PodGroups.
func (b *builder) workloadAPIComposite(def string, plans []*plan) error {
	wl := b.newWorkload()
	levels := []levelTemplates{{composite: &schedulingv1beta1.CompositePodGroupTemplate{Name: labelName(def)}}}
	// composite and leaf templates of depth d (d ≥ 1).
	level := func(d int, leaf bool) string {
		for len(levels) <= d {
			levels = append(levels, levelTemplates{})
		}
		l := &levels[d]
		if leaf && l.leaves == nil {
			l.leaves = &schedulingv1beta1.PodGroupTemplate{Name: labelName(fmt.Sprintf("%s-level%d-pods", def, d))}
		}
		if !leaf && l.composite == nil {
			l.composite = &schedulingv1beta1.CompositePodGroupTemplate{Name: labelName(fmt.Sprintf("%s-level%d", def, d))}
		}
		if leaf {
			return l.leaves.Name
		}
		return l.composite.Name
	}
	composites := map[int][]int32{}
	leaves := map[int][]int32{}
	var cpgs []*schedulingv1alpha3.CompositePodGroup
	var pgs []*schedulingv1beta1.PodGroup
	for _, p := range plans {
		objectOfSub := map[string]string{}
		var top []int64
		for _, sp := range p.subs {
			if sp.parent == "" {
				top = append(top, sp.sg.MinMember)
			}
		}
		need := groupsNeeded(top, p.g.MinMember)
		if p.g.MinSubGroups != nil && *p.g.MinSubGroups > 0 {
			need = *p.g.MinSubGroups
		}
		root, err := b.compositePodGroup(p.name, p.g.Name, "", levels[0].composite.Name, wl.Name, need, p.priority, p.g.Topology)
		if err != nil {
			return err
		}
		composites[0] = append(composites[0], root.Spec.SchedulingPolicy.Gang.MinGroupCount)
		cpgs = append(cpgs, root)
		for j := range p.subs {
			sp := &p.subs[j]
			parent := p.name
			if sp.parent != "" {
				parent = objectOfSub[sp.parent]
			}
			name := subgroupObjectName(p.g.Name, sp.sg.Name)
			objectOfSub[sp.name] = name
			d := depth(p.subs, j) + 1
			if !sp.leaf() {
				mins := make([]int64, len(sp.children))
				for i, c := range sp.children {
					mins[i] = p.subs[c].sg.MinMember
				}
				need := groupsNeeded(mins, sp.sg.MinMember)
				if ms := sp.sg.MinSubGroups; ms != nil {
					switch {
					case *ms > 0:
						need = sp.needed()
					default:
						b.warn("group %s: subgroup %s needs none of its subgroups, and a CompositePodGroup's minGroupCount is at least 1: it needs %d, as many as its minimum %d takes", p.g.Name, sp.sg.Name, need, sp.sg.MinMember)
					}
					if x := beyond(p.subs, sp); x > 0 && *ms > 0 {
						b.warn("group %s: subgroup %s needs %d of its subgroups and %d pods in all, and a CompositePodGroup counts subgroups only: the %d pods beyond them are not kept", p.g.Name, sp.sg.Name, need, sp.sg.MinMember, x)
					}
				}
				cpg, err := b.compositePodGroup(name, p.g.Name, parent, level(d, false), wl.Name, need, p.priority, sp.sg.Topology)
				if err != nil {
					return err
				}
				composites[d] = append(composites[d], cpg.Spec.SchedulingPolicy.Gang.MinGroupCount)
				cpgs = append(cpgs, cpg)
				continue
			}
			leafPlan := &plan{g: p.g, name: name, priority: p.priority}
			tmpl := &schedulingv1beta1.PodGroupTemplate{Name: level(d, true)}
			pg, err := b.workloadPodGroup(leafPlan, wl.Name, tmpl, sp.sg.MinMember, sp.sg.Topology)
			if err != nil {
				return err
			}
			pg.Spec.ParentCompositePodGroupName = &parent
			leaves[d] = append(leaves[d], pg.Spec.SchedulingPolicy.Gang.MinCount)
			pgs = append(pgs, pg)
			for _, pod := range sp.sg.Pods {
				b.objectOfPod[pod] = name
			}
		}
	}
	// Nest the levels' templates and give each the smallest minimum of
	// its objects.
	for d := len(levels) - 1; d >= 0; d-- {
		l := levels[d]
		if l.composite != nil {
			l.composite.SchedulingPolicy.Gang = &schedulingv1beta1.CompositeGangSchedulingPolicy{MinGroupCount: least(composites[d])}
		}
		if l.leaves != nil {
			l.leaves.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: least(leaves[d])}
		}
		if d == 0 {
			continue
		}
		up := levels[d-1].composite
		if l.composite != nil {
			up.CompositePodGroupTemplates = append(up.CompositePodGroupTemplates, *l.composite)
		}
		if l.leaves != nil {
			up.PodGroupTemplates = append(up.PodGroupTemplates, *l.leaves)
		}
	}
	wl.Spec.CompositePodGroupTemplates = []schedulingv1beta1.CompositePodGroupTemplate{*levels[0].composite}
	if err := b.addWorkload(wl); err != nil {
		return err
	}
	op := b.workloadOperation()
	for _, cpg := range cpgs {
		errs := append(checkMeta(&cpg.ObjectMeta), schedulingv1alpha3.Validate_CompositePodGroup(context.Background(), op, nil, cpg, nil)...)
		if err := invalid("CompositePodGroup", cpg.Name, errs); err != nil {
			return err
		}
		if err := b.add(cpg); err != nil {
			return err
		}
	}
	return b.addWorkloadPodGroups(pgs)
}

// least is the smallest of ns, 1 when there is none.
func least(ns []int32) int32 {
	out := int32(0)
	for _, n := range ns {
		if out == 0 || n < out {
			out = n
		}
	}
	return max(out, 1)
}

// compositePodGroup is one CompositePodGroup of group's tree, under parent
// ("" for the root), of template, that needs need children.
func (b *builder) compositePodGroup(name, group, parent, template, workload string, need int64, priority string, t topology) (*schedulingv1alpha3.CompositePodGroup, error) {
	n, err := count32("CompositePodGroup", name, "spec.schedulingPolicy.gang.minGroupCount", need)
	if err != nil {
		return nil, err
	}
	cpg := &schedulingv1alpha3.CompositePodGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: compositeGV.String(), Kind: "CompositePodGroup"},
		ObjectMeta: b.meta(name, group),
		Spec: schedulingv1alpha3.CompositePodGroupSpec{
			WorkloadRef:       &schedulingv1alpha3.WorkloadReference{WorkloadName: workload, TemplateName: template},
			SchedulingPolicy:  schedulingv1alpha3.CompositePodGroupSchedulingPolicy{Gang: &schedulingv1alpha3.CompositeGangSchedulingPolicy{MinGroupCount: n}},
			PriorityClassName: priority,
			// The API server's default, as for PodGroups.
			DisruptionMode: &schedulingv1alpha3.CompositeDisruptionMode{Single: &schedulingv1alpha3.SingleCompositeDisruptionMode{}},
		},
	}
	if parent != "" {
		cpg.Spec.ParentCompositePodGroupName = &parent
	}
	if key := b.requiredLevel(group, t); key != "" {
		cpg.Spec.SchedulingConstraints = &schedulingv1alpha3.CompositePodGroupSchedulingConstraints{Topology: []schedulingv1alpha3.TopologyConstraint{{Key: key}}}
	}
	return cpg, nil
}

// requiredLevel is the node label key of t's required level that the
// Workload API's schedulingConstraints take, "" (with a warning) when
// there is none or it cannot be written.
func (b *builder) requiredLevel(group string, t topology) string {
	if t == nil {
		return ""
	}
	if t.PreferredTopologyLevel != "" {
		b.warn("group %s: the Workload API has no preferred topology: preferredTopologyLevel %q is left out", group, t.PreferredTopologyLevel)
	}
	lvl := t.RequiredTopologyLevel
	switch {
	case lvl == "":
	case !b.opts.TopologyAwareWorkloadScheduling && !b.opts.CompositePodGroup:
		b.warn("group %s: requiredTopologyLevel %q is left out: schedulingConstraints needs the TopologyAwareWorkloadScheduling feature gate (Options.TopologyAwareWorkloadScheduling)", group, lvl)
	case len(validation.IsQualifiedName(lvl)) > 0:
		b.warn("group %s: requiredTopologyLevel %q is no node label key: it is left out", group, lvl)
	default:
		return lvl
	}
	return ""
}
