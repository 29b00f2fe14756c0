package podgroups

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kartalua/karta/interpreter"
)

// plan is what the targets need of one group.
type plan struct {
	g *interpreter.Group
	// name is the group's object name.
	name string
	// shares apportion the group's minMember over its units.
	shares []share
	// units are every unit of the group's scope.
	units []*unit
	// subs are a v2 group's subgroups.
	subs []subPlan
	// roles are the alpha group's roles (component[-instance]) and their
	// minimums, in unit order.
	roles []roleMin
	// priority is the priority class the group's pod templates agree on.
	priority string
}

// subPlan is one subgroup of a v2 group. Subgroups nest (SubGroup.Parent):
// a parent's minimum covers its own pods and its children's, and a leaf,
// a subgroup without children, is where a pod belongs.
type subPlan struct {
	sg *interpreter.SubGroup
	// name is the subgroup's name as a DNS label; parent is its parent's,
	// "" directly under the group.
	name, parent string
	// children are the indices of its children in plan.subs.
	children []int
	// own is its minimum less its children's: the pods of its own, which
	// only a leaf should have.
	own    int64
	shares []share
}

func (sp *subPlan) leaf() bool { return len(sp.children) == 0 }

// needed is how many of sp's children it needs, the first ones: its
// minSubGroups, else all of them.
func (sp *subPlan) needed() int64 {
	if ms := sp.sg.MinSubGroups; ms != nil {
		return min(*ms, int64(len(sp.children)))
	}
	return int64(len(sp.children))
}

// neededSum is the sum of the minimums of the children sp needs.
func neededSum(subs []subPlan, sp *subPlan) int64 {
	var sum int64
	for _, c := range sp.children[:sp.needed()] {
		sum += subs[c].sg.MinMember
	}
	return sum
}

// beyond is how many pods sp's minimum asks above the children it needs
// when it needs only some of them (a stated minimum above its
// minSubGroups' leaves: a Volcano task's minAvailable beside its
// minPartitions), 0 otherwise. Per-replica subgroups, the ones with
// minSubGroups, have no pods of their own.
func beyond(subs []subPlan, sp *subPlan) int64 {
	if sp.sg.MinSubGroups == nil {
		return 0
	}
	return max(sp.sg.MinMember-neededSum(subs, sp), 0)
}

// optional reports whether subs[j] is a child its parent does not need
// (past its parent's minSubGroups).
func optional(subs []subPlan, j int) bool {
	for k := range subs {
		if i := slices.Index(subs[k].children, j); i >= 0 {
			return int64(i) >= subs[k].needed()
		}
	}
	return false
}

type roleMin struct {
	name string
	min  int64
}

// plans are the groups' plans, in GetGangGroups' order.
func (b *builder) plans() []*plan {
	out := make([]*plan, 0, len(b.in.Gangs.Groups))
	for i := range b.in.Gangs.Groups {
		g := &b.in.Gangs.Groups[i]
		p := &plan{g: g, name: b.objectOf[g.Name]}
		if len(g.SubGroups) == 0 {
			p.units = b.model.groupUnits(g, b.in.Gangs.Placements)
			p.shares = shares(p.units, g.MinMember)
			for _, s := range p.shares {
				role := labelName(s.u.role())
				if k := slices.IndexFunc(p.roles, func(r roleMin) bool { return r.name == role }); k >= 0 {
					p.roles[k].min += s.n
				} else {
					p.roles = append(p.roles, roleMin{role, s.n})
				}
			}
			for _, pl := range b.in.Gangs.Placements {
				// A pod's role is its Volcano task; KAI has subgroups only
				// for a v2 group.
				if pl.Group == g.Name && b.target == Volcano {
					b.roleOf[pl.Pod] = labelName(roleName(pl.Component, pl.Instance))
				}
			}
		} else {
			p.subs = b.subPlans(g)
			// The group's shares are its top subgroups': each one's
			// minimum covers its descendants.
			var all []share
			var sum int64
			for _, sp := range p.subs {
				if sp.parent != "" {
					continue
				}
				p.units = append(p.units, b.subgroupUnits(g, p.subs, sp)...)
				all = append(all, sp.shares...)
				sum += sp.sg.MinMember
			}
			// A pod's role is its leaf subgroup (the deepest that lists
			// it: parents come before their children).
			for _, sp := range p.subs {
				for _, pod := range sp.sg.Pods {
					if b.target == Volcano || b.target == KAI {
						b.roleOf[pod] = sp.name
					}
				}
			}
			p.shares = all
			if sum != g.MinMember {
				// minMemberPath set the group's minimum: apportion it over
				// the subgroups' shares in their order.
				counts := make([]int64, len(all))
				for k, s := range all {
					counts[k] = s.n
				}
				p.shares = nil
				for k, n := range apportion(counts, g.MinMember) {
					if n > 0 {
						p.shares = append(p.shares, share{all[k].u, n})
					}
				}
			}
		}
		if b.target != Coscheduling { // it has no priority class
			p.priority = b.priority(p)
		}
		out = append(out, p)
	}
	return out
}

// subPlans are g's subgroups with their tree, own minimums and shares.
func (b *builder) subPlans(g *interpreter.Group) []subPlan {
	subs, problems := subTree(g)
	for _, msg := range problems {
		b.warn("%s", msg)
	}
	for j := range subs {
		subs[j].shares = shares(b.subgroupUnits(g, subs, subs[j]), subs[j].sg.MinMember)
	}
	return subs
}

// subTree is g's subgroups with their tree: parent names, children and
// own minimums; and what is wrong with the tree.
func subTree(g *interpreter.Group) ([]subPlan, []string) {
	var problems []string
	subs := make([]subPlan, len(g.SubGroups))
	index := map[string]int{}
	for j := range g.SubGroups {
		sg := &g.SubGroups[j]
		subs[j] = subPlan{sg: sg, name: labelName(sg.Name), own: sg.MinMember}
		index[sg.Name] = j
	}
	for j := range subs {
		parent := subs[j].sg.Parent
		if parent == "" {
			continue
		}
		// Parents come before their children: a parent after its child
		// (or none) leaves the subgroup at the top, so the tree has no
		// cycle.
		k, ok := index[parent]
		if !ok || k >= j {
			problems = append(problems, fmt.Sprintf("group %s: subgroup %s names parent %q, which is no subgroup before it: it is put directly under the group", g.Name, subs[j].sg.Name, parent))
			continue
		}
		subs[j].parent = subs[k].name
		subs[k].children = append(subs[k].children, j)
		subs[k].own -= subs[j].sg.MinMember
	}
	for j := range subs {
		subs[j].own = max(subs[j].own, 0)
	}
	return subs, problems
}

// subgroupUnits are the units a subgroup's minimum is apportioned over:
// its component's scope when it is named after a component (a role
// subgroup), else the unit it is named after (component-instance), else
// the units its pods and its descendants' pods are placed in, else its
// children's.
func (b *builder) subgroupUnits(g *interpreter.Group, subs []subPlan, sp subPlan) []*unit {
	if units := b.model.subUnits(sp.sg.Name); len(units) > 0 {
		return units
	}
	var out []*unit
	add := func(u *unit) {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	for _, u := range b.model.units {
		if u.role() == sp.sg.Name {
			add(u)
		}
	}
	if len(out) > 0 {
		return out
	}
	pods := map[string]bool{}
	var mark func(sp subPlan)
	mark = func(sp subPlan) {
		for _, pod := range sp.sg.Pods {
			pods[pod] = true
		}
		for _, c := range sp.children {
			mark(subs[c])
		}
	}
	mark(sp)
	for _, pl := range b.in.Gangs.Placements {
		if pl.Group != g.Name || !pods[pl.Pod] {
			continue
		}
		for _, u := range b.model.units {
			if u.item.Component == pl.Component && u.item.Instance == pl.Instance {
				add(u)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, c := range sp.children {
		for _, u := range b.subgroupUnits(g, subs, subs[c]) {
			add(u)
		}
	}
	return out
}

// labelName is a DNS label for a template, subgroup or task name.
func labelName(s string) string { return dnsName(s, maxLabel, true) }

// priority is the priority class the group's pod templates agree on; when
// they differ there is none, with a warning.
func (b *builder) priority(p *plan) string {
	var names []string
	for _, u := range p.units {
		if !slices.Contains(names, u.priorityClass) {
			names = append(names, u.priorityClass)
		}
	}
	switch {
	case len(names) == 1:
		return names[0]
	case len(names) > 1:
		slices.Sort(names)
		for i, n := range names {
			if n == "" {
				names[i] = "(none)"
			}
		}
		b.warn("group %s: its pod templates name different priority classes (%s): no priorityClassName is set", p.g.Name, strings.Join(names, ", "))
	}
	return ""
}

// noMinResources warns when a group's minimum cannot be told apart into
// its pods (no unit expects a pod).
func (b *builder) noMinResources(p *plan) {
	if len(p.shares) == 0 {
		b.warn("group %s: no pod template of its scope expects a pod (replicas 0 or undefined): minResources is left out", p.g.Name)
	}
}

// queue is the queue the objects name: Options.Queue, else the first of
// keys (looked up in the workload's labels, then its annotations, then its
// pods' labels) that holds one.
func (b *builder) queue(keys ...string) string {
	if b.opts.Queue != "" {
		return b.opts.Queue
	}
	obj := b.in.Object
	for _, k := range keys {
		if v := obj.GetLabels()[k]; v != "" {
			return v
		}
		if v := obj.GetAnnotations()[k]; v != "" {
			return v
		}
	}
	for _, pod := range b.in.Pods {
		for _, k := range keys {
			if v := pod.GetLabels()[k]; v != "" {
				return v
			}
		}
	}
	return ""
}
