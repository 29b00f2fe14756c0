package karta

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// instructions checks both instruction blocks; setting both names is an
// error of its own, and each block is still checked so that all problems
// show at once.
func (v *validator) instructions() {
	s := &v.k.Spec
	p := field.NewPath("spec")
	if s.Instructions != nil && s.OptimizationInstructions != nil {
		v.errorf(p.Child("optimizationInstructions"),
			"instructions is also set; optimizationInstructions is the legacy name of the same block, keep only instructions")
	}
	if s.Instructions != nil {
		v.gangScheduling(p.Child("instructions", "gangScheduling"), s.Instructions.GangScheduling)
	}
	if s.OptimizationInstructions != nil {
		v.gangScheduling(p.Child("optimizationInstructions", "gangScheduling"), s.OptimizationInstructions.GangScheduling)
	}
}

func (v *validator) gangScheduling(p *field.Path, gs *GangScheduling) {
	if gs == nil {
		return
	}
	switch {
	case len(gs.PodGroups) > 0 && gs.PodGroup != nil:
		v.errorf(p, "podGroups and podGroup are both set; use either the alpha form podGroups or the v2 form podGroup")
	case len(gs.PodGroups) == 0 && gs.PodGroup == nil:
		v.errorf(p, "empty: set podGroups (alpha) or podGroup (v2)")
	}
	v.podGroups(p.Child("podGroups"), gs.PodGroups)
	if gs.PodGroup != nil {
		v.podGroupV2(p.Child("podGroup"), gs.PodGroup)
	}
}

func (v *validator) podGroups(p *field.Path, groups []PodGroup) {
	names := map[string]int{}
	for i, g := range groups {
		gp := p.Index(i)
		if g.Name == "" {
			v.errorf(gp.Child("name"), "required: the group definition's name, used in pod group names")
		} else if j, dup := names[g.Name]; dup {
			v.errorf(gp.Child("name"), "duplicate group name %q (also used by %s)", g.Name, p.Index(j))
		} else {
			names[g.Name] = i
		}
		mp := gp.Child("members")
		if len(g.Members) == 0 {
			v.errorf(mp, "must not be empty: list the components whose pods form the group")
		}
		seen := map[string]int{}
		var members []*compRef
		for j, m := range g.Members {
			if c := v.memberComponent(mp.Index(j).Child("componentName"), m.ComponentName, seen, j, mp, "member"); c != nil {
				members = append(members, c)
			}
			for k, e := range m.GroupByKeyPaths {
				v.requiredExpr(mp.Index(j).Child("groupByKeyPaths").Index(k), e, "a path, evaluated on a pod, that yields one group key")
			}
			for k, e := range m.Filters {
				v.requiredExpr(mp.Index(j).Child("filters").Index(k), e, "a path, evaluated on a pod, that yields true for the pods to keep")
			}
		}
		v.narrowingMix(mp, g.Name, members)
	}
}

// memberComponent checks the component a member or subgroup names and
// returns it, or nil when it names none. seen records the components
// already in the group, by the index of their entry in list.
func (v *validator) memberComponent(p *field.Path, name string, seen map[string]int, i int, list *field.Path, what string) *compRef {
	if name == "" {
		v.errorf(p, "required: the component whose pods the %s places (%s)", what, v.names())
		return nil
	}
	c := v.byName[name]
	if c == nil {
		v.errorf(p, "%q does not name a component (%s)", name, v.names())
		return nil
	}
	if j, dup := seen[name]; dup {
		v.errorf(p, "component %q is already in this group (%s); list each component once", name, list.Index(j))
		return nil
	}
	seen[name] = i
	return c
}

// narrowingMix warns about a group that mixes a narrowing member (one with
// instances or a replicaSelector, whose contribution to minMember is a
// single instance or replica, SPEC §8.2) with other members: the other
// members count in full, so the total rarely describes one gang.
func (v *validator) narrowingMix(p *field.Path, group string, members []*compRef) {
	if len(members) < 2 {
		return
	}
	var narrowing []string
	for _, c := range members {
		switch {
		case c.c.InstanceIDPath != "":
			narrowing = append(narrowing, fmt.Sprintf("%q (instances)", c.c.Name))
		case c.c.PodSelector != nil && c.c.PodSelector.ReplicaSelector != nil:
			narrowing = append(narrowing, fmt.Sprintf("%q (replicaSelector)", c.c.Name))
		}
	}
	if len(narrowing) == 0 {
		return
	}
	v.warnf(p, "group %q mixes narrowing member %s with other members; a narrowing member counts one instance or replica "+
		"in minMember while the others count in full, so give it a group of its own or name a common ancestor",
		group, strings.Join(narrowing, ", "))
}

func (v *validator) podGroupV2(p *field.Path, g *PodGroupV2) {
	if g.Name == "" {
		v.errorf(p.Child("name"), "required: the group definition's name, used in the pod group name")
	}
	v.topology(p.Child("topology"), g.Topology)
	sp := p.Child("subGroups")
	if len(g.SubGroups) == 0 {
		v.errorf(sp, "must not be empty: list the components that form subgroups")
	}
	seen := map[string]int{}
	subs := make([]*compRef, len(g.SubGroups))
	for i, s := range g.SubGroups {
		subs[i] = v.memberComponent(sp.Index(i).Child("componentName"), s.ComponentName, seen, i, sp, "subgroup")
		v.topology(sp.Index(i).Child("topology"), s.Topology)
	}
	if !v.treeOK {
		return
	}
	// A pod joins the subgroup of its nearest covered component, so nested
	// subgroups would split one component's pods unpredictably.
	for i, a := range subs {
		for j := 0; j < i && a != nil; j++ {
			b := subs[j]
			switch {
			case b == nil:
			case isAncestor(b, a):
				v.errorf(sp.Index(i).Child("componentName"), "%q is a descendant of %q (%s); subgroups must not nest",
					a.c.Name, b.c.Name, sp.Index(j))
			case isAncestor(a, b):
				v.errorf(sp.Index(i).Child("componentName"), "%q is an ancestor of %q (%s); subgroups must not nest",
					a.c.Name, b.c.Name, sp.Index(j))
			}
		}
	}
}

func (v *validator) topology(p *field.Path, t *Topology) {
	if t != nil && t.TopologyName == "" {
		v.errorf(p.Child("topologyName"), "required: the name of the topology to place the pods in")
	}
}
