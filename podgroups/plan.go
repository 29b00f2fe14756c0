package podgroups

import (
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

type subPlan struct {
	sg *interpreter.SubGroup
	// name is the subgroup's name as a DNS label.
	name   string
	shares []share
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
			var all []share
			var sum int64
			for j := range g.SubGroups {
				sg := &g.SubGroups[j]
				units := b.model.subUnits(sg.Name)
				sp := subPlan{sg: sg, name: labelName(sg.Name), shares: shares(units, sg.MinMember)}
				p.subs = append(p.subs, sp)
				p.units = append(p.units, units...)
				all = append(all, sp.shares...)
				sum += sg.MinMember
				for _, pod := range sg.Pods {
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
