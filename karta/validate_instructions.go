package karta

import (
	"fmt"

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
	v.gangTraps(p.Child("podGroups"), gs.PodGroups)
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
		v.optionalExpr(gp.Child("minMemberPath"), g.MinMemberPath)
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
// single instance or replica: docs/karta.md, "Minimum members") with other members: the other
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
		group, listCapped(narrowing, ", "))
}

func (v *validator) podGroupV2(p *field.Path, g *PodGroupV2) {
	if g.Name == "" {
		v.errorf(p.Child("name"), "required: the group definition's name, used in the pod group name")
	}
	var scope *compRef
	if g.ComponentName != "" {
		if scope = v.byName[g.ComponentName]; scope == nil {
			v.errorf(p.Child("componentName"), "%q does not name a component (%s)", g.ComponentName, v.names())
		}
	}
	v.topology(p.Child("topology"), g.Topology)
	v.optionalExpr(p.Child("minMemberPath"), g.MinMemberPath)
	sp := p.Child("subGroups")
	if len(g.SubGroups) == 0 {
		v.errorf(sp, "must not be empty: list the components that form subgroups")
	}
	seen := map[string]int{}
	subs := make([]*compRef, len(g.SubGroups))
	for i, s := range g.SubGroups {
		subs[i] = v.memberComponent(sp.Index(i).Child("componentName"), s.ComponentName, seen, i, sp, "subgroup")
		if s.PerInstance && subs[i] != nil && subs[i].c.InstanceIDPath == "" {
			v.errorf(sp.Index(i).Child("perInstance"), "component %q has no instanceIdPath, so it has no instances to split by", s.ComponentName)
		}
		// A stated minimum on a per-replica entry is meaningful either
		// way (docs/karta.md, "The v2 podGroup"): its leaves share it, or,
		// with minCountPath, it counts where it is above the leaves the
		// subgroup needs (a Volcano task's minAvailable beside its
		// partitionPolicy's minPartitions).
		v.optionalExpr(sp.Index(i).Child("minMemberPath"), s.MinMemberPath)
		if r := s.PerReplica; r != nil {
			rp := sp.Index(i).Child("perReplica")
			v.requiredExpr(rp.Child("countPath"), r.CountPath, "a path on the object that yields the number of replicas of each subgroup")
			v.requiredExpr(rp.Child("keyPath"), r.KeyPath, "a path, evaluated on a pod, that yields its replica's index")
			v.optionalExpr(rp.Child("minCountPath"), r.MinCountPath)
		}
		v.topology(sp.Index(i).Child("topology"), s.Topology)
	}
	if !v.treeOK {
		return
	}
	v.subGroupNesting(p, g, scope, subs)
}

// subGroupNesting checks the v2 subgroups' places in the component tree
// (docs/karta.md, "The v2 podGroup"): each lies in the group's scope, an
// entry nests under the entry of its nearest listed ancestor, which must
// come first (the output lists parents before children, and a stated
// minimum is taken from the last entries first), and nothing nests under
// a per-instance entry, whose subgroups are per instance, nor under a
// per-replica one, whose pods are in its leaves.
func (v *validator) subGroupNesting(p *field.Path, g *PodGroupV2, scope *compRef, subs []*compRef) {
	sp := p.Child("subGroups")
	for i, a := range subs {
		if a == nil {
			continue
		}
		cp := sp.Index(i).Child("componentName")
		if scope != nil && a != scope && !isAncestor(scope, a) {
			v.errorf(cp, "%q is not %q or one of its descendants (%s); a subgroup lies in its group's component",
				a.c.Name, scope.c.Name, p.Child("componentName"))
			continue
		}
		if g.SubGroups[i].PerInstance && a == scope && a.c.InstanceIDPath != "" {
			v.errorf(sp.Index(i).Child("perInstance"), "%q is the group's component: its groups are per instance already", a.c.Name)
		}
		parent := -1
		for j, b := range subs {
			if b != nil && isAncestor(b, a) && (parent < 0 || isAncestor(subs[parent], b)) {
				parent = j
			}
		}
		switch {
		case parent < 0:
		case parent > i:
			v.errorf(cp, "%q nests under %q (%s), which must be listed before it", a.c.Name, subs[parent].c.Name, sp.Index(parent))
		case g.SubGroups[parent].PerInstance:
			v.errorf(cp, "%q is under %q (%s), whose subgroups are per instance; a subgroup cannot nest under a per-instance subgroup",
				a.c.Name, subs[parent].c.Name, sp.Index(parent))
		case g.SubGroups[parent].PerReplica != nil:
			v.errorf(cp, "%q is under %q (%s), whose subgroups split per replica; a subgroup cannot nest under a per-replica subgroup",
				a.c.Name, subs[parent].c.Name, sp.Index(parent))
		case g.SubGroups[parent].MinMemberPath != "":
			v.errorf(cp, "%q is under %q (%s), whose minimum is stated (minMemberPath); a subgroup cannot nest under one",
				a.c.Name, subs[parent].c.Name, sp.Index(parent))
		}
	}
}

func (v *validator) topology(p *field.Path, t *Topology) {
	if t != nil && t.TopologyName == "" {
		v.errorf(p.Child("topologyName"), "required: the name of the topology to place the pods in")
	}
}

// gangTraps warns about alpha groups that validate but cannot work at run
// time (docs/karta.md, "Gangs"):
//   - a group whose only member narrows to one replica (replicaSelector) or
//     one instance (instanceIdPath), with no groupByKeyPaths entry reading
//     the replica key or the instance id: the pods of every replica or
//     instance fall into one group, which spans them and is refused, so
//     every pod is unmatched;
//   - a member whose component has a descendant that another member names
//     (in this group or another, without filters): that member claims the
//     descendant's pods first, yet the outer member's minMember counts them,
//     so its group waits for pods it never gets.
//
// Both need a sound tree; member names that resolve nothing are errors
// already and are skipped.
func (v *validator) gangTraps(p *field.Path, groups []PodGroup) {
	if !v.treeOK {
		return
	}
	type claim struct {
		at    *field.Path
		group string
	}
	claims := map[*compRef][]claim{} // the unfiltered members naming each component
	for i, g := range groups {
		for j, m := range g.Members {
			if c := v.byName[m.ComponentName]; c != nil && len(m.Filters) == 0 {
				claims[c] = append(claims[c], claim{p.Index(i).Child("members").Index(j), g.Name})
			}
		}
	}
	for i, g := range groups {
		mp := p.Index(i).Child("members")
		if len(g.Members) == 1 {
			v.unseparated(mp.Index(0), g.Name, g.Members[0])
		}
		for j, m := range g.Members {
			c := v.byName[m.ComponentName]
			if c == nil {
				continue
			}
			for _, d := range v.comps {
				if d == c || !isAncestor(c, d) {
					continue
				}
				for _, cl := range claims[d] {
					if cl.group == g.Name {
						v.warnf(mp.Index(j).Child("componentName"),
							"the minimum of group %q can never be reached: member %q counts the pods of its descendant %q, "+
								"which %s counts again; name only one of the two", g.Name, c.c.Name, d.c.Name, cl.at)
						continue
					}
					v.warnf(mp.Index(j).Child("componentName"),
						"the minimum of group %q can never be reached: member %q counts the pods of its descendant %q, "+
							"but %s (group %q) claims them first; name only one of the two, or give that member filters",
						g.Name, c.c.Name, d.c.Name, cl.at, cl.group)
				}
			}
		}
	}
}

// unseparated warns about the only member of a group when it narrows to one
// replica or instance and no key separates them.
func (v *validator) unseparated(p *field.Path, group string, m PodGroupMember) {
	c := v.byName[m.ComponentName]
	if c == nil || c.c.PodSelector == nil {
		return
	}
	keys := map[string]bool{}
	for _, k := range m.GroupByKeyPaths {
		keys[v.canonical(k)] = true
	}
	sel := c.c.PodSelector
	if rs := sel.ReplicaSelector; rs != nil && v.parsed(rs.KeyPath) && !keys[v.canonical(rs.KeyPath)] {
		v.warnf(p, "group %q has one member, %q, whose replicaSelector counts one replica in minMember, but no groupByKeyPaths "+
			"entry reads the replica key: unless another key tells the replicas apart, the pods of several replicas fall "+
			"into one group that spans them and are unmatched at run time (one replica alone is matched); add the replica "+
			"key %s to groupByKeyPaths",
			group, c.c.Name, rs.KeyPath)
	}
	if is := sel.ComponentInstanceSelector; c.c.InstanceIDPath != "" && is != nil && v.parsed(is.IDPath) && !keys[v.canonical(is.IDPath)] {
		v.warnf(p, "group %q has one member, %q, whose instances each count alone in minMember, but no groupByKeyPaths "+
			"entry reads the instance id: unless another key tells the instances apart, the pods of several instances fall "+
			"into one group that spans them and are unmatched at run time (one instance alone is matched); add the "+
			"instance id %s to groupByKeyPaths",
			group, c.c.Name, is.IDPath)
	}
}

// parsed reports whether expr passed the jq checks.
func (v *validator) parsed(expr string) bool {
	r, ok := v.exprs[expr]
	return ok && r.query != nil
}

// canonical is an expression as gojq prints its syntax tree, so that
// spacing differences do not hide equal paths; the text
// itself when it did not parse.
func (v *validator) canonical(expr string) string {
	if r, ok := v.exprs[expr]; ok && r.query != nil {
		return r.query.String()
	}
	return expr
}
