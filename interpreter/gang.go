package interpreter

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// reasonNoInstructions is the reason of every pod of a Karta without gang
// instructions.
const reasonNoInstructions = "no gang scheduling instructions"

// podRoute is one pod's way through GetGangGroups: its placement and group
// name, or the reason it is unmatched.
type podRoute struct {
	name string
	pl   placement
	// member is the effective alpha member; nil with the v2 form.
	member *gangMember
	group  string
	// reason is non-empty when the pod is unmatched.
	reason string
}

// gangGroups computes GetGangGroups. Every pod ends up exactly
// once: in Placements and one group, or in Unmatched. Placements and
// Unmatched keep input order; groups and their pods are sorted. Errors
// reading the object fail the call; a pod's own problems only unmatch it.
func (g *gangModel) gangGroups(ctx context.Context, ev evaluator, obj map[string]any, pods []map[string]any) (*GangResult, error) {
	res := &GangResult{Groups: []Group{}, Placements: []Placement{}, Unmatched: []Unmatched{}}
	if !g.hasInstructions() {
		for _, pod := range pods {
			res.Unmatched = append(res.Unmatched, Unmatched{Pod: podName(pod), Reason: reasonNoInstructions})
		}
		return res, nil
	}
	o, err := g.readObject(ctx, ev, obj)
	if err != nil {
		return nil, cancelled(ctx, err)
	}
	defer o.release()
	routes := make([]podRoute, len(pods))
	for i, pod := range pods {
		routes[i] = g.route(ctx, ev, obj, o, pod)
		routes[i].name = podName(pod)
	}
	if g.v2 != nil {
		res.Groups = append(res.Groups, g.v2Group(o, routes))
	} else {
		res.Groups = g.alphaGroups(ctx, ev, o, pods, routes)
	}
	// A cancelled call must fail rather than report every later pod as
	// unmatched with the context's error.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, r := range routes {
		if r.reason != "" {
			res.Unmatched = append(res.Unmatched, Unmatched{Pod: r.name, Reason: r.reason})
			continue
		}
		res.Placements = append(res.Placements, Placement{Pod: r.name, Component: r.pl.comp.c.Name,
			Instance: r.pl.instance, Replica: r.pl.replica, Group: r.group})
	}
	return res, nil
}

// placeOne is PlacePod: one pod's component, instance, replica, group and
// the group's minMember. One pod cannot see its group's other pods, so
// minMember is computed for a group that holds just this pod: the pod's
// member narrows by the pod's own instance and replica where its component
// has them, and every other member of the definition counts all its
// instances, as a member that no pod of its group maps to does. That equals
// GetGangGroups' number for every valid group unless the group mixes a
// narrowing member with others (which validation warns about); a group
// spanning instances or replicas cannot be detected from one pod. Without
// gang instructions the pod is unmatched, as in GetGangGroups.
func (g *gangModel) placeOne(ctx context.Context, ev evaluator, obj map[string]any, pod map[string]any) (*PodPlacement, string, error) {
	if !g.hasInstructions() {
		return nil, reasonNoInstructions, nil
	}
	o, err := g.readObject(ctx, ev, obj)
	if err != nil {
		return nil, "", cancelled(ctx, err)
	}
	defer o.release()
	routes := []podRoute{g.route(ctx, ev, obj, o, pod)}
	var minMember int64
	if routes[0].reason == "" {
		if g.v2 != nil {
			minMember, _ = g.v2MinMembers(o)
		} else {
			ag := &alphaGroup{name: routes[0].group, def: routes[0].member.def, pods: []int{0}}
			minMember = g.groupMinMember(ctx, ev, o, ag, []map[string]any{pod}, routes)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	r := routes[0]
	if r.reason != "" {
		return nil, r.reason, nil
	}
	return &PodPlacement{Component: r.pl.comp.c.Name, Instance: r.pl.instance, Replica: r.pl.replica,
		Group: r.group, MinMember: minMember}, "", nil
}

// cancelled reports a cancelled call as the context's error rather than
// as a failure of whichever path was running when it was cancelled.
func cancelled(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return err
}

// route places a pod and names its group: the v2 group, or the alpha
// group of its effective member and keys.
func (g *gangModel) route(ctx context.Context, ev evaluator, obj map[string]any, o *gangObject, pod map[string]any) podRoute {
	// The pod's name is the caller's to set: PlacePod names a pod only
	// when it is unmatched.
	var r podRoute
	pl, reason := g.placePod(ctx, ev, obj, o.insts, pod)
	if reason != "" {
		r.reason = reason
		return r
	}
	r.pl = pl
	if g.v2 != nil {
		r.group = groupName(o.uid, g.v2.name, nil)
		return r
	}
	gm, reason := g.effectiveMember(ctx, ev, g.comps[pl.comp.index], pod)
	if reason != "" {
		r.reason = reason
		return r
	}
	keys, reason := gm.keyValues(ctx, ev, pod)
	if reason != "" {
		r.reason = reason
		return r
	}
	r.member, r.group = gm, groupName(o.uid, gm.def.name, keys)
	return r
}

// effectiveMember walks from the pod's component up to the root; at each
// step the members naming that component are tried in YAML order, and the
// first whose filters all pass wins. A filter that
// yields something other than a boolean or null ends the walk: the Karta
// and the pod disagree, and trying an ancestor's member would hide it.
func (g *gangModel) effectiveMember(ctx context.Context, ev evaluator, gc *gangComp, pod map[string]any) (*gangMember, string) {
	for c := gc.cm; c != nil; c = c.parent {
		for _, gm := range g.membersOf[c.index] {
			pass, reason := gm.filtersPass(ctx, ev, pod)
			if reason != "" {
				return nil, reason
			}
			if pass {
				return gm, ""
			}
		}
	}
	return nil, "no pod group member applies"
}

// filtersPass evaluates the member's filters: each
// must yield exactly one output; true passes, false and null do not.
func (gm *gangMember) filtersPass(ctx context.Context, ev evaluator, pod map[string]any) (bool, string) {
	for _, f := range gm.filters {
		outs, err := ev.all(ctx, f, pod)
		if err != nil {
			return false, err.Error()
		}
		if len(outs) != 1 {
			return false, fmt.Sprintf("%s: filter %q yields %d values, want exactly one", gm, f.expr, len(outs))
		}
		switch outs[0] {
		case true:
			continue
		case false, nil:
			return false, ""
		}
		return false, fmt.Sprintf("%s: filter %q yields %s, want true, false or null", gm, f.expr, describe(outs[0]))
	}
	return true, ""
}

// keyValues evaluates the member's groupByKeyPaths:
// each must yield one non-empty string, number or boolean; numbers and
// booleans go through jq tostring.
func (gm *gangMember) keyValues(ctx context.Context, ev evaluator, pod map[string]any) ([]string, string) {
	keys := make([]string, 0, len(gm.keys))
	for _, k := range gm.keys {
		outs, err := ev.all(ctx, k, pod)
		if err != nil {
			return nil, err.Error()
		}
		if len(outs) != 1 {
			return nil, fmt.Sprintf("%s: groupByKeyPath %q yields %d values, want exactly one", gm, k.expr, len(outs))
		}
		key, ok := keyString(outs[0])
		if !ok {
			return nil, fmt.Sprintf("%s: groupByKeyPath %q yields %s, want a non-empty string, a number or a boolean", gm, k.expr, describe(outs[0]))
		}
		keys = append(keys, key)
	}
	return keys, ""
}

// keyString converts one key value: a non-empty string as is, a number or
// a boolean through jq tostring.
func keyString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, x != ""
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	}
	if isJQNumber(v) {
		s, err := jqNumberString(v)
		return s, err == nil
	}
	return "", false
}

// String names the member in reasons: group "job" member "worker".
func (gm *gangMember) String() string {
	return fmt.Sprintf("group %q member %q", gm.def.name, gm.comp.name())
}

// groupName is pg-<uid>-<definition>[-<key>…], not
// sanitised: the name must stay predictable from the labels.
func groupName(uid, definition string, keys []string) string {
	var b strings.Builder
	n := len("pg-") + len(uid) + 1 + len(definition)
	for _, k := range keys {
		n += 1 + len(k)
	}
	b.Grow(n)
	b.WriteString("pg-")
	b.WriteString(uid)
	b.WriteString("-")
	b.WriteString(definition)
	for _, k := range keys {
		b.WriteString("-" + k)
	}
	return b.String()
}

// alphaGroup is one alpha group being assembled: its pods are indexes into
// the routes, in input order.
type alphaGroup struct {
	name string
	def  *gangDef
	pods []int
	// clash lists further definitions that produce the same name.
	clash []*gangDef
}

// alphaGroups gathers the routed pods into groups, computes each group's
// minMember (which unmatches the pods of a group that spans instances or
// replicas of a narrowing member) and returns the groups
// that keep a pod, sorted by name.
func (g *gangModel) alphaGroups(ctx context.Context, ev evaluator, o *gangObject, pods []map[string]any, routes []podRoute) []Group {
	byName := map[string]*alphaGroup{}
	var order []*alphaGroup
	for i := range routes {
		r := &routes[i]
		if r.reason != "" {
			continue
		}
		ag := byName[r.group]
		if ag == nil {
			ag = &alphaGroup{name: r.group, def: r.member.def}
			byName[r.group] = ag
			order = append(order, ag)
		} else if ag.def != r.member.def && !slices.Contains(ag.clash, r.member.def) {
			ag.clash = append(ag.clash, r.member.def)
		}
		ag.pods = append(ag.pods, i)
	}
	groups := []Group{}
	for _, ag := range order {
		if len(ag.clash) > 0 {
			g.unmatchClash(ag, routes)
			continue
		}
		minMember := g.groupMinMember(ctx, ev, o, ag, pods, routes)
		names := placedNames(ag.pods, routes)
		if len(names) == 0 {
			continue
		}
		groups = append(groups, Group{Name: ag.name, Definition: ag.def.name, MinMember: minMember, Pods: names})
	}
	slices.SortFunc(groups, func(a, b Group) int { return strings.Compare(a.Name, b.Name) })
	return groups
}

// unmatchClash unmatches every pod of a name that several definitions
// produce. Names are not sanitised, so definition "a" with key "b-c" and
// definition "a-b" with key "c" meet; one group cannot have two
// definitions and two minimum counts, and letting the first pod's
// definition win would make the result depend on the pods' order.
func (g *gangModel) unmatchClash(ag *alphaGroup, routes []podRoute) {
	defs := append([]*gangDef{ag.def}, ag.clash...)
	slices.SortFunc(defs, func(a, b *gangDef) int { return slices.Index(g.defs, a) - slices.Index(g.defs, b) })
	quoted := make([]string, len(defs))
	for i, d := range defs {
		quoted[i] = fmt.Sprintf("%q", d.name)
	}
	reason := fmt.Sprintf("group name %s is produced by definitions %s", ag.name, strings.Join(quoted, ", "))
	for _, i := range ag.pods {
		routes[i].reason = reason
	}
}

// placedNames returns the sorted names of the pods among idx that are
// still placed.
func placedNames(idx []int, routes []podRoute) []string {
	names := []string{}
	for _, i := range idx {
		if routes[i].reason == "" {
			names = append(names, routes[i].name)
		}
	}
	slices.Sort(names)
	return names
}

// v2Group builds the one group of the v2 form. It exists
// whatever the pods, as the group is per object: a scheduler can create
// it before the pods. Filters and keys do not apply.
func (g *gangModel) v2Group(o *gangObject, routes []podRoute) Group {
	v2 := g.v2
	total, subMins := g.v2MinMembers(o)
	subs := make([]SubGroup, len(v2.subs))
	for i, s := range v2.subs {
		subs[i] = SubGroup{Name: s.comp.name(), MinMember: subMins[i], Pods: []string{}, Topology: s.topology}
	}
	grp := Group{Name: groupName(o.uid, v2.name, nil), Definition: v2.name, MinMember: total,
		Pods: []string{}, SubGroups: subs, Topology: v2.topology}
	n := int64(len(subs))
	grp.MinSubGroups = &n
	for _, r := range routes {
		if r.reason != "" {
			continue
		}
		grp.Pods = append(grp.Pods, r.name)
		// A pod that no subgroup covers stays in the group only.
		if s := v2.subOf[r.pl.comp.index]; s != nil {
			i := slices.Index(v2.subs, s)
			subs[i].Pods = append(subs[i].Pods, r.name)
		}
	}
	slices.Sort(grp.Pods)
	for i := range subs {
		slices.Sort(subs[i].Pods)
	}
	return grp
}
