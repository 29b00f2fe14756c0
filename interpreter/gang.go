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
	// gi is the group's index in the call's gangAssembly, -1 for none
	// (unmatched, or the v2 form's one group per object).
	gi int
	// slot is the v2 subgroup's index in the call's layout, -1 for none.
	slot int
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
			res.Unmatched = append(res.Unmatched, Unmatched{Pod: PodKey(pod), Reason: reasonNoInstructions})
		}
		return res, nil
	}
	o, err := g.readObject(ctx, ev, obj)
	if err != nil {
		return nil, cancelled(ctx, err)
	}
	defer o.release()
	routes := o.takeRoutes(len(pods))
	ga := o.assembly()
	defer o.keepAssembly(&ga)
	if g.v2 != nil {
		ga.slots = g.v2.layout(o)
	}
	var namer podNamer
	for i, pod := range pods {
		if err := podsGoOn(ctx, ev, i); err != nil {
			return nil, err
		}
		pi := newPodIn(pod)
		g.route(ctx, ev, o, &pi, &ga, len(pods)-i, &routes[i])
		routes[i].name = namer.name(pi.name, pi.ns, len(pods)-i)
	}
	if g.v2 != nil {
		res.Groups = g.v2Groups(o, routes, &ga)
	} else {
		res.Groups = g.alphaGroups(ctx, ev, o, pods, routes, &ga)
	}
	// A cancelled call must fail rather than report every later pod as
	// unmatched with the context's error.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	unmatched := 0
	for i := range routes {
		if routes[i].reason != "" {
			unmatched++
		}
	}
	res.Placements = make([]Placement, 0, len(routes)-unmatched)
	for i := range routes {
		r := &routes[i]
		if r.reason != "" {
			res.Unmatched = append(res.Unmatched, Unmatched{Pod: r.name, Reason: r.reason})
			continue
		}
		res.Placements = append(res.Placements, Placement{Pod: r.name, Component: r.pl.comp.c.Name,
			Instance: r.pl.instance, Replica: r.pl.replica, Group: r.group})
	}
	return res, nil
}

// podNamer names pods as podName does, writing the names into a few
// large strings rather than allocating each.
type podNamer struct {
	b strings.Builder
	// room is the number of names write last made room for.
	room int
}

// name names the pod of metadata.name name and metadata.namespace ns;
// left is the number of pods still to name, this one included, to size
// the next string. A name is a substring of the builder's string: bytes a
// Builder wrote are never changed, and a full builder is replaced, not
// grown.
func (n *podNamer) name(name, ns string, left int) string {
	need := len(name)
	if ns != "" {
		need += len(ns) + 1
	}
	if n.b.Cap()-n.b.Len() < need {
		n.b = strings.Builder{}
		n.b.Grow(need*left + need*left/4)
	}
	start := n.b.Len()
	if ns != "" {
		n.b.WriteString(ns)
		n.b.WriteByte('/')
	}
	n.b.WriteString(name)
	return n.b.String()[start:]
}

// write returns the group name pg-<uid>-<key> as a string of the
// namer's. A group holds many pods, so groups are far fewer than the left
// pods still to route: the room starts at four names and doubles with
// every refill (never past left), instead of a name per pod, which left
// 3 KB unused in every 64-pod call of a kind with a few groups.
func (n *podNamer) write(uid string, key []byte, left int) string {
	need := len("pg-") + len(uid) + 1 + len(key)
	if n.b.Cap()-n.b.Len() < need {
		n.room = max(min(2*n.room, left), min(4, left), 1)
		n.b = strings.Builder{}
		n.b.Grow(need * n.room)
	}
	start := n.b.Len()
	n.b.WriteString("pg-")
	n.b.WriteString(uid)
	n.b.WriteByte('-')
	n.b.Write(key)
	return n.b.String()[start:]
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
	ga := o.assembly()
	defer o.keepAssembly(&ga)
	if g.v2 != nil {
		ga.slots = g.v2.layout(o)
	}
	pi := newPodIn(pod)
	routes := make([]podRoute, 1)
	g.route(ctx, ev, o, &pi, &ga, 1, &routes[0])
	var minMember int64
	if routes[0].reason == "" {
		if g.v2 != nil {
			n := wholeComponent
			if gi := routes[0].gi; gi >= 0 {
				n = ga.groups[gi].v2n
			}
			// The minimums' room on the stack for the usual few slots
			// (a make of a variable size is a heap allocation).
			var room [16]int64
			mins := room[:0]
			if len(ga.slots) > len(room) {
				mins = make([]int64, 0, len(ga.slots))
			}
			minMember = g.v2MinMembers(o, ga.slots, n, mins[:len(ga.slots)])
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
	pl := &PodPlacement{Component: r.pl.comp.c.Name, Instance: r.pl.instance, Replica: r.pl.replica,
		Group: r.group, MinMember: minMember}
	if r.slot >= 0 {
		pl.SubGroup = o.slotName(ga.slots[r.slot])
	}
	return pl, "", nil
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
// group of its effective member and keys, which joins the call's groups
// in ga; left is the number of pods still to route, this one included.
// The route is written into r (a zero podRoute), in place.
func (g *gangModel) route(ctx context.Context, ev evaluator, o *gangObject, pod *podIn, ga *gangAssembly, left int, r *podRoute) {
	// The pod's name is the caller's to set: PlacePod names a pod only
	// when it is unmatched.
	r.gi, r.slot = -1, -1
	pl, reason := g.placePod(ctx, ev, o, pod)
	if reason != "" {
		r.reason = reason
		return
	}
	r.pl = pl
	if g.v2 != nil {
		g.routeV2(ctx, ev, o, pod, ga, left, r)
		return
	}
	gm, reason := g.effectiveMember(ctx, ev, g.comps[pl.comp.index], pod)
	if reason != "" {
		r.reason = reason
		return
	}
	key, reason := gm.appendGroupKey(ctx, ev, pod, ga.buf[:0])
	ga.buf = key
	if reason != "" {
		r.reason = reason
		return
	}
	r.member, r.gi = gm, ga.join(o.uid, key, gm.def, left)
	r.group = ga.groups[r.gi].name
}

// gangAssembly is the alpha groups of one call, in the order their first
// pods came, as the pods are routed.
type gangAssembly struct {
	groups []alphaGroup
	// names holds the groups' names (see podNamer).
	names podNamer
	// byKey indexes groups by key once there are more than a few
	// (indexed); it may hold a previous call's map, emptied.
	byKey   map[string]int
	indexed bool
	// buf is the room in which each pod's group name is written.
	buf []byte
	// v2Name is the v2 group's name, once built (unscoped groups only);
	// slots is the v2 subgroup layout of the call.
	v2Name string
	slots  []v2Slot
	// last is the index of the group the previous pod joined: an
	// operator's pods come group by group, so it is tried first.
	last int
	// lastScope is the instance id or replica key of the v2 group the
	// previous pod joined (joined: one has), for routeV2.
	lastScope string
	joined    bool
}

// join adds one pod of definition def to the group of key (the group's
// name without its pg-<uid>- prefix, which every group of the call shares,
// written in ga.buf: strings are made only for a new group) and returns
// the group's index; left is the number of pods still to route, this one
// included. Another definition producing the same name is a clash.
func (ga *gangAssembly) join(uid string, key []byte, def *gangDef, left int) int {
	i := -1
	if ga.last < len(ga.groups) && ga.groups[ga.last].key == string(key) {
		i = ga.last
	} else if ga.indexed {
		if j, ok := ga.byKey[string(key)]; ok {
			i = j
		}
	} else {
		for j := range ga.groups {
			if ga.groups[j].key == string(key) {
				i = j
				break
			}
		}
	}
	if i < 0 {
		i = len(ga.groups)
		name := ga.names.write(uid, key, left)
		ga.groups = append(ga.groups, alphaGroup{name: name, key: name[len(name)-len(key):], def: def})
		switch {
		case ga.indexed:
			ga.byKey[ga.groups[i].key] = i
		case len(ga.groups) > 8:
			if ga.byKey == nil {
				ga.byKey = make(map[string]int, 2*len(ga.groups))
			}
			for j := range ga.groups {
				ga.byKey[ga.groups[j].key] = j
			}
			ga.indexed = true
		}
	}
	ag := &ga.groups[i]
	if ag.def != def && !slices.Contains(ag.clash, def) {
		ag.clash = append(ag.clash, def)
	}
	ag.n++
	ga.last = i
	return i
}

// effectiveMember walks from the pod's component up to the root; at each
// step the members naming that component are tried in YAML order, and the
// first whose filters all pass wins. A filter that
// yields something other than a boolean or null ends the walk: the Karta
// and the pod disagree, and trying an ancestor's member would hide it.
func (g *gangModel) effectiveMember(ctx context.Context, ev evaluator, gc *gangComp, pod *podIn) (*gangMember, string) {
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
func (gm *gangMember) filtersPass(ctx context.Context, ev evaluator, pod *podIn) (bool, string) {
	for _, f := range gm.filters {
		var one [1]any
		outs, err := f.all(ctx, ev, pod, &one)
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

// appendGroupKey appends the pod's group key to b: the group's name
// (groupName) without its pg-<uid>- prefix, which is <definition> followed
// by the member's groupByKeyPaths, each of which
// must yield one non-empty string, number or boolean; numbers and
// booleans go through jq tostring. Not sanitised: the name must stay
// predictable from the labels.
func (gm *gangMember) appendGroupKey(ctx context.Context, ev evaluator, pod *podIn, b []byte) ([]byte, string) {
	b = append(b, gm.def.name...)
	for _, k := range gm.keys {
		var one [1]any
		outs, err := k.all(ctx, ev, pod, &one)
		if err != nil {
			return b, err.Error()
		}
		if len(outs) != 1 {
			return b, fmt.Sprintf("%s: groupByKeyPath %q yields %d values, want exactly one", gm, k.expr, len(outs))
		}
		if s, ok := outs[0].(string); ok && s != "" {
			b = append(append(b, '-'), s...)
			continue
		}
		key, ok := keyString(outs[0])
		if !ok {
			return b, fmt.Sprintf("%s: groupByKeyPath %q yields %s, want a non-empty string, a number or a boolean", gm, k.expr, describe(outs[0]))
		}
		b = append(append(b, '-'), key...)
	}
	return b, ""
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
	// name is the group's name, key its part after pg-<uid>-.
	name, key string
	def       *gangDef
	pods      []int
	// n counts the pods that joined (gangAssembly.join).
	n int
	// clash lists further definitions that produce the same name.
	clash []*gangDef
	// v2n is a scoped v2 group's narrowing: its instance or replica.
	v2n narrowing
}

// alphaGroups gives the assembled groups their pods, computes each group's
// minMember (which unmatches the pods of a group that spans instances or
// replicas of a narrowing member) and returns the groups
// that keep a pod, sorted by name. The groups' pod indexes share one
// array, and so do their names.
func (g *gangModel) alphaGroups(ctx context.Context, ev evaluator, o *gangObject, pods []map[string]any, routes []podRoute, ga *gangAssembly) []Group {
	total := 0
	for i := range ga.groups {
		total += ga.groups[i].n
	}
	idx := o.takeIdx(total + len(ga.groups))
	off := 0
	for i := range ga.groups {
		ag := &ga.groups[i]
		ag.pods = idx[off : off : off+ag.n]
		off += ag.n
	}
	for i := range routes {
		if gi := routes[i].gi; gi >= 0 {
			ag := &ga.groups[gi]
			ag.pods = append(ag.pods, i)
		}
	}
	// The groups in name order (each group's minimum and pods are its
	// own, so the order of the work does not matter): the result is
	// built sorted rather than sorted after.
	order := idx[total:]
	for i := range order {
		order[i] = i
	}
	// Every name of the call is pg-<uid>-<key>: the keys' order is the
	// names'.
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(ga.groups[a].key, ga.groups[b].key) })
	groups := make([]Group, 0, len(ga.groups))
	names := make([]string, 0, total)
	for _, gi := range order {
		ag := &ga.groups[gi]
		if len(ag.clash) > 0 {
			g.unmatchClash(ag, routes)
			continue
		}
		minMember := g.groupMinMember(ctx, ev, o, ag, pods, routes)
		start := len(names)
		for _, i := range ag.pods {
			if routes[i].reason == "" {
				names = append(names, routes[i].name)
			}
		}
		if len(names) == start {
			continue
		}
		placed := names[start:len(names):len(names)]
		slices.Sort(placed)
		groups = append(groups, Group{Name: ag.name, Definition: ag.def.name, MinMember: minMember, Pods: placed})
	}
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
