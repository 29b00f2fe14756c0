package interpreter

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kartalua/karta/karta"
)

// The v2 podGroup form (docs/karta.md, "The v2 podGroup"): one group per
// object, or per instance or replica of the group's component, with
// subgroups that nest along the component tree, may split per instance,
// and may split into one leaf per replica.

// gangV2 is the podGroup (v2) form.
type gangV2 struct {
	name     string
	topology *karta.Topology
	subs     []*gangSub
	// minMember is the group's minMemberPath, nil without one.
	minMember *jqProgram
	// scope is the group's component (the root when podGroup.componentName
	// is empty): pods of other components are unmatched. scoped says it
	// splits the group per instance or replica, which only a named
	// componentName does, so that a Karta written before componentName
	// keeps its one group per object.
	scope  *gangComp
	scoped bool
	// needs says some entry states how many of its leaves it needs
	// (perReplica.minCountPath), so that subgroups report minSubGroups.
	needs bool
	// subOf[i] is the subgroup entry that pods of component i join: the
	// one of the component itself or of its nearest ancestor; nil when
	// none covers it.
	subOf []*gangSub
}

// gangSub is one v2 subgroup entry.
type gangSub struct {
	comp     *gangComp
	topology *karta.Topology
	// index is the entry's position; parent the index of the entry it
	// nests under (its nearest listed ancestor component), -1 under the
	// group.
	index, parent int
	perInstance   bool
	// repCount and repKey are the entry's perReplica paths (the replica
	// count on the object, the replica index on a pod); nil without.
	repCount *jqProgram
	repKey   *podExpr
	// countField names repCount in errors.
	countField string
	// repNeed is the entry's perReplica.minCountPath, the leaves each of
	// its subgroups needs, nil without; needField names it in errors.
	repNeed   *jqProgram
	needField string
	// minMember is the entry's minMemberPath, nil without; minField names
	// it in errors.
	minMember *jqProgram
	minField  string
}

// maxReplicaLeaves bounds the per-replica leaves of one call, as jq's
// output limit bounds instances: a count is the object's to state, and a
// hostile one must not make a billion subgroups.
const maxReplicaLeaves = maxJQOutputs

// v2Slot is one subgroup of a call: an entry, or one present instance of
// a per-instance entry (inst, the instance's index; -1 for a whole entry),
// or one replica's leaf of either (rep, the replica's index; -1 for none).
// parent is the index of the slot it nests under, -1 under the group; a
// leaf's is its subgroup's, which it directly follows.
type v2Slot struct {
	sub    *gangSub
	inst   int
	rep    int
	parent int
}

func (g *gangModel) compileV2(pg *karta.PodGroupV2) (*gangV2, error) {
	v2 := &gangV2{name: pg.Name, topology: pg.Topology, subOf: make([]*gangSub, len(g.comps))}
	if pg.MinMemberPath != "" {
		p, err := g.m.exprs.compile(pg.MinMemberPath)
		if err != nil {
			return nil, fmt.Errorf("podGroup.minMemberPath: %w", err)
		}
		v2.minMember = p
	}
	for _, gc := range g.comps {
		if gc.cm.parent == nil {
			v2.scope = gc
		}
	}
	if pg.ComponentName != "" {
		gc, err := g.comp(pg.ComponentName)
		if err != nil {
			return nil, fmt.Errorf("podGroup.componentName: %w", err)
		}
		v2.scope, v2.scoped = gc, gc.cm.ids != nil || gc.replicaKey != nil
	}
	own := make([]*gangSub, len(g.comps))
	for i := range pg.SubGroups {
		sg := &pg.SubGroups[i]
		field := fmt.Sprintf("podGroup.subGroups[%d]", i)
		gc, err := g.comp(sg.ComponentName)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		if !descends(gc.cm, v2.scope.cm) {
			return nil, fmt.Errorf("%s: component %q is not under the group's component %q", field, gc.name(), v2.scope.name())
		}
		if sg.PerInstance && (gc.cm.ids == nil || gc == v2.scope) {
			return nil, fmt.Errorf("%s: perInstance needs a component with instances below the group's component", field)
		}
		sub := &gangSub{comp: gc, topology: sg.Topology, index: i, parent: -1, perInstance: sg.PerInstance}
		if sg.MinMemberPath != "" {
			sub.minField = field + ".minMemberPath"
			if sub.minMember, err = g.m.exprs.compile(sg.MinMemberPath); err != nil {
				return nil, fmt.Errorf("%s.minMemberPath: %w", field, err)
			}
		}
		if r := sg.PerReplica; r != nil {
			sub.countField = field + ".perReplica.countPath"
			if sub.repCount, err = g.m.exprs.compile(r.CountPath); err != nil {
				return nil, fmt.Errorf("%s.perReplica.countPath: %w", field, err)
			}
			if sub.repKey, err = newPodExpr(g.m.exprs, r.KeyPath); err != nil {
				return nil, fmt.Errorf("%s.perReplica.keyPath: %w", field, err)
			}
			if r.MinCountPath != "" {
				sub.needField = field + ".perReplica.minCountPath"
				if sub.repNeed, err = g.m.exprs.compile(r.MinCountPath); err != nil {
					return nil, fmt.Errorf("%s.perReplica.minCountPath: %w", field, err)
				}
				v2.needs = true
			}
		}
		for a := gc.cm.parent; a != nil; a = a.parent {
			if p := own[a.index]; p != nil {
				if p.perInstance {
					return nil, fmt.Errorf("%s: component %q nests under a per-instance subgroup", field, gc.name())
				}
				if p.repCount != nil {
					return nil, fmt.Errorf("%s: component %q nests under a per-replica subgroup", field, gc.name())
				}
				if p.minMember != nil {
					return nil, fmt.Errorf("%s: component %q nests under a subgroup with a minMemberPath", field, gc.name())
				}
				sub.parent = p.index
				break
			}
		}
		for _, later := range pg.SubGroups[i+1:] {
			if lc, ok := g.m.byName[later.ComponentName]; ok && descends(gc.cm, lc) && lc != gc.cm {
				return nil, fmt.Errorf("%s: component %q must come after its ancestor %q", field, gc.name(), lc.c.Name)
			}
		}
		v2.subs = append(v2.subs, sub)
		own[gc.cm.index] = sub
	}
	for _, cm := range g.m.comps {
		for a := cm; a != nil; a = a.parent {
			if own[a.index] != nil {
				v2.subOf[cm.index] = own[a.index]
				break
			}
		}
	}
	return v2, nil
}

// descends reports whether c is a or one of its descendants.
func descends(c, a *compModel) bool {
	for ; c != nil; c = c.parent {
		if c == a {
			return true
		}
	}
	return false
}

// layout lists the call's subgroups: the entries in order, a per-instance
// entry as one slot per present instance (in instance order), and no slot
// for an entry whose component has no present instance (a TFJob without
// an evaluator has no evaluator subgroup). A per-replica entry's slot is
// followed by its leaves, one per replica of its count. A slot nests
// under the slot of its nearest entry that has one; a parent entry is
// never per instance nor per replica, so that is its entry's one slot.
func (v2 *gangV2) layout(o *gangObject) []v2Slot {
	n := 0
	for _, s := range v2.subs {
		k := 1
		if s.perInstance {
			k = len(o.insts[s.comp.cm.index])
		}
		n += k
		for _, c := range o.reps[s.index] {
			n += int(c)
		}
	}
	slots := make([]v2Slot, 0, n)
	var room [8]int
	slotOf := append(room[:0], make([]int, len(v2.subs))...)
	for i, s := range v2.subs {
		slotOf[i] = -1
		parent := -1
		for p := s.parent; p >= 0 && parent < 0; p = v2.subs[p].parent {
			parent = slotOf[p]
		}
		insts := o.insts[s.comp.cm.index]
		if !s.perInstance {
			if anyPresent(insts) {
				slotOf[i] = len(slots)
				slots = append(slots, v2Slot{sub: s, inst: -1, rep: -1, parent: parent})
				slots = o.appendLeaves(slots)
			}
			continue
		}
		for k, inst := range insts {
			if inst.present {
				slots = append(slots, v2Slot{sub: s, inst: k, rep: -1, parent: parent})
				slots = o.appendLeaves(slots)
			}
		}
	}
	return slots
}

// appendLeaves appends the per-replica leaves of the last slot, when its
// entry splits per replica.
func (o *gangObject) appendLeaves(slots []v2Slot) []v2Slot {
	p := len(slots) - 1
	sl := slots[p]
	for r := range o.replicaCount(sl) {
		slots = append(slots, v2Slot{sub: sl.sub, inst: sl.inst, rep: int(r), parent: p})
	}
	return slots
}

// replicaCount is the number of replicas of a per-replica entry's slot
// (its leaves), 0 for any other.
func (o *gangObject) replicaCount(sl v2Slot) int64 {
	if sl.sub.repCount == nil {
		return 0
	}
	return o.reps[sl.sub.index][max(sl.inst, 0)]
}

// readEntryPaths reads every per-replica entry's counts into o.reps, the
// leaves its subgroups need into o.needs, and every entry's stated
// minimums into o.subMins, by entry: one per instance of the component
// (zipped with the ids, as every per-instance path is; an absent
// instance's is not read) for a per-instance entry, else one. Values
// convert as scale values; a null count is 0, a null minimum or need is
// none (-1). A need above its subgroup's replicas fails the call: that
// gang could never form.
func (v2 *gangV2) readEntryPaths(ctx context.Context, ev evaluator, o *gangObject, in any) error {
	o.reps = resizeEntries(o.reps, len(v2.subs))
	o.subMins = resizeEntries(o.subMins, len(v2.subs))
	if v2.needs {
		o.needs = resizeEntries(o.needs, len(v2.subs))
	}
	var leaves int64
	for _, s := range v2.subs {
		if s.minMember != nil {
			mins, err := s.entryValues(ctx, ev, o, in, s.minMember, s.minField, "minMemberPath", o.subMins[s.index][:0], -1)
			if err != nil {
				return err
			}
			o.subMins[s.index] = mins
		}
		if s.repCount == nil {
			continue
		}
		counts, err := s.entryValues(ctx, ev, o, in, s.repCount, s.countField, "perReplica.countPath", o.reps[s.index][:0], 0)
		if err != nil {
			return err
		}
		for _, n := range counts {
			if leaves += n; leaves > maxReplicaLeaves {
				return &GangObjectError{Field: s.countField, Err: fmt.Errorf("makes more than %d per-replica subgroups", maxReplicaLeaves)}
			}
		}
		o.reps[s.index] = counts
		if s.repNeed == nil {
			continue
		}
		needs, err := s.entryValues(ctx, ev, o, in, s.repNeed, s.needField, "perReplica.minCountPath", o.needs[s.index][:0], -1)
		if err != nil {
			return err
		}
		for k, n := range needs {
			if n > counts[k] {
				err := fmt.Errorf("yields %d, more than the %d replicas of its subgroup", n, counts[k])
				if s.perInstance {
					err = fmt.Errorf("instance %q: %w", o.insts[s.comp.cm.index][k].id, err)
				}
				return &GangObjectError{Field: s.needField, Err: err}
			}
		}
		o.needs[s.index] = needs
	}
	return nil
}

// resizeEntries returns e with room for n entries' values, each emptied.
func resizeEntries(e [][]int64, n int) [][]int64 {
	if cap(e) < n {
		e = make([][]int64, n)
	}
	return e[:n]
}

// entryValues evaluates one of the entry's paths on the object and
// appends its values to dst: one per instance for a per-instance entry
// (null, and an absent instance, give null), else exactly one.
func (s *gangSub) entryValues(ctx context.Context, ev evaluator, o *gangObject, in any, prog *jqProgram, field, name string, dst []int64, null int64) ([]int64, error) {
	outs, err := ev.all(ctx, prog, in)
	if err != nil {
		return nil, &GangObjectError{Field: field, Err: err}
	}
	insts := o.insts[s.comp.cm.index]
	switch {
	case s.perInstance && len(outs) != len(insts):
		return nil, &GangObjectError{Field: field, Err: zipError(s.comp.name(), name, len(outs), instanceIDList(insts))}
	case !s.perInstance && len(outs) != 1:
		return nil, &GangObjectError{Field: field, Err: fmt.Errorf("yields %d values, want exactly one", len(outs))}
	}
	for i, out := range outs {
		if s.perInstance && !insts[i].present {
			dst = append(dst, null)
			continue
		}
		n, ok, err := scaleInt(out)
		if err != nil {
			if s.perInstance {
				err = fmt.Errorf("instance %q: %w", insts[i].id, err)
			}
			return nil, &GangObjectError{Field: field, Err: err}
		}
		if !ok {
			n = null
		}
		dst = append(dst, n)
	}
	return dst, nil
}

// statedMin is the minimum a slot's entry states for it (its
// minMemberPath), -1 when none.
func (o *gangObject) statedMin(sl v2Slot) int64 {
	if sl.sub.minMember == nil {
		return -1
	}
	return o.subMins[sl.sub.index][max(sl.inst, 0)]
}

// neededLeaves is how many of its leaves a per-replica slot needs (its
// entry's perReplica.minCountPath), -1 when all of them are or the slot
// has none.
func (o *gangObject) neededLeaves(sl v2Slot) int64 {
	if sl.sub.repNeed == nil || sl.rep >= 0 || o.replicaCount(sl) == 0 {
		return -1
	}
	return o.needs[sl.sub.index][max(sl.inst, 0)]
}

// slotName is a subgroup's name: the entry's component, with -<id> for one
// instance of a per-instance entry, and -replica-<index> for a leaf.
func (o *gangObject) slotName(s v2Slot) string {
	if s.inst < 0 && s.rep < 0 {
		return s.sub.comp.name()
	}
	// Written in room on the stack: growing a nil buffer took three
	// allocations before the string's own.
	var room [64]byte
	return string(o.appendSlotName(room[:0], s))
}

// appendSlotName appends slot s's name to buf.
func (o *gangObject) appendSlotName(buf []byte, s v2Slot) []byte {
	buf = append(buf, s.sub.comp.name()...)
	if s.inst >= 0 {
		buf = append(append(buf, '-'), o.insts[s.sub.comp.cm.index][s.inst].id...)
	}
	if s.rep >= 0 {
		buf = strconv.AppendInt(append(buf, "-replica-"...), int64(s.rep), 10)
	}
	return buf
}

// slotNames names every slot of the call, the names cut from one string
// so that a JobSet's many leaves cost one allocation, not one each.
func (o *gangObject) slotNames(slots []v2Slot) []string {
	names := make([]string, len(slots))
	var endRoom [32]int
	var bufRoom [512]byte
	ends, buf := endRoom[:0], bufRoom[:0]
	if len(slots) > len(endRoom) {
		ends = make([]int, 0, len(slots))
	}
	for _, sl := range slots {
		buf = o.appendSlotName(buf, sl)
		ends = append(ends, len(buf))
	}
	all, start := string(buf), 0
	for k, end := range ends {
		names[k], start = all[start:end], end
	}
	return names
}

// routeV2 names a placed pod's v2 group and finds its subgroup: the group
// of the pod's instance or replica of the group's component when the
// group is scoped, and the slot of its nearest subgroup entry (of its
// instance of that entry's component when the entry is per instance). It
// sets r.reason when the pod cannot be read or lies outside the scope.
func (g *gangModel) routeV2(ctx context.Context, ev evaluator, o *gangObject, pod *podIn, ga *gangAssembly, left int, r *podRoute) {
	v2 := g.v2
	pc := g.comps[r.pl.comp.index]
	if !descends(pc.cm, v2.scope.cm) {
		r.reason = fmt.Sprintf("component %q is not under the group's component %q", pc.name(), v2.scope.name())
		return
	}
	if !v2.scoped {
		if ga.v2Name == "" {
			ga.v2Name = groupName(o.uid, v2.name, nil)
		}
		r.group = ga.v2Name
	} else {
		key, n, reason := g.scopeKey(ctx, ev, o, pod, r)
		if reason != "" {
			r.reason = reason
			return
		}
		if ga.joined && key == ga.lastScope {
			// The previous pod's instance or replica, as an operator's
			// pods come group by group: its group, without writing and
			// comparing the group's key again.
			ga.groups[ga.last].n++
		} else {
			ga.buf = append(append(append(ga.buf[:0], v2.name...), '-'), key...)
			ga.join(o.uid, ga.buf, nil, left)
			ga.lastScope, ga.joined = key, true
		}
		r.gi = ga.last
		r.group = ga.groups[r.gi].name
		ga.groups[r.gi].v2n = n
	}
	s := v2.subOf[pc.cm.index]
	if s == nil {
		return
	}
	inst := -1
	if s.perInstance {
		id, reason := r.pl.instance, ""
		if pc != s.comp {
			id, reason = g.podInstance(ctx, ev, s.comp, o.insts, pod)
		}
		if reason != "" {
			r.reason = reason
			return
		}
		inst = o.instIndex(s.comp, id)
	}
	for i, sl := range ga.slots {
		if sl.sub == s && sl.inst == inst && sl.rep < 0 {
			r.slot = i
			break
		}
	}
	if r.slot < 0 {
		return
	}
	if n := o.replicaCount(ga.slots[r.slot]); n > 0 {
		k, reason := podReplicaIndex(ctx, ev, s, pod, n)
		if reason != "" {
			r.reason = reason
			return
		}
		// The leaves follow their subgroup, in replica order.
		r.slot += 1 + k
	}
}

// podReplicaIndex reads a pod's replica index with a per-replica entry's
// keyPath: one value (by the selectors' single-value rule) that is an
// index below n, written as jq writes an integer.
func podReplicaIndex(ctx context.Context, ev evaluator, s *gangSub, pod *podIn, n int64) (int, string) {
	var one [1]any
	outs, err := s.repKey.all(ctx, ev, pod, &one)
	if err != nil {
		return 0, err.Error()
	}
	key, why := singleID(outs)
	if why != "" {
		return 0, fmt.Sprintf("subgroup %s: perReplica.keyPath %s", s.comp.name(), why)
	}
	k, ok := replicaIndex(key, n)
	if !ok {
		return 0, fmt.Sprintf("replica %q not found among the %d replicas of subgroup %s", key, n, s.comp.name())
	}
	return k, ""
}

// replicaIndex is key as an index below n when it is one written as jq
// writes an integer (decimal digits, no sign, no leading zero): what
// strconv.Atoi and a check that strconv.Itoa gives key back accept, in one
// conversion per pod instead of two.
func replicaIndex(key string, n int64) (int, bool) {
	if len(key) > 1 && key[0] == '0' {
		return 0, false
	}
	k, err := strconv.ParseUint(key, 10, 63)
	if err != nil || k >= uint64(max(n, 0)) {
		return 0, false
	}
	return int(k), true
}

// scopeKey reads the pod's instance id or replica key of the group's
// component, with that component's own selector unless the pod's
// placement already holds it, and the narrowing it makes.
func (g *gangModel) scopeKey(ctx context.Context, ev evaluator, o *gangObject, pod *podIn, r *podRoute) (string, narrowing, string) {
	sc := g.v2.scope
	pc := g.comps[r.pl.comp.index]
	if sc.cm.ids != nil {
		id, reason := r.pl.instance, ""
		if pc != sc {
			id, reason = g.podInstance(ctx, ev, sc, o.insts, pod)
		}
		return id, narrowing{inst: o.instIndex(sc, id)}, reason
	}
	key, reason := r.pl.replica, ""
	if g.replicaComp(pc) != sc {
		key, reason = g.podReplica(ctx, ev, sc, pod)
	}
	return key, narrowing{inst: -1, oneReplica: true}, reason
}

// v2Groups builds the v2 groups: the one group of the object, which exists
// whatever the pods (a scheduler can create it before them), or one per
// instance or replica of the group's component that a pod maps to, sorted
// by name. Filters and keys do not apply. The groups' subgroups, minimums
// and pod lists are carved from a few arrays sized by a first count, so
// that a call allocates per call rather than per group and per pod.
//
// Sorting is most of this work (a quarter of a 64-pod PyTorchJob call), so
// each group's pods are sorted once, as indexes into routes (swapping ints
// writes no pointers, so no write barrier runs while the collector marks),
// and a subgroup's pods are appended in that order: a subgroup's list is a
// subset of its group's, so it comes out sorted without a sort of its own
// (PyTorchJob's worker subgroup, JobSet's subgroups and leaves repeated
// their group's sort). Groups are put in name order by index as well.
func (g *gangModel) v2Groups(o *gangObject, routes []podRoute, ga *gangAssembly) []Group {
	n := len(ga.groups)
	if !g.v2.scoped {
		n = 1
	}
	groupOf := func(r *podRoute) int {
		if g.v2.scoped {
			return r.gi
		}
		return 0
	}
	ns := len(ga.slots)
	// idx holds counts, then the placed routes group by group (group gi's
	// from start[gi]), then the groups in name order.
	// counts[gi*(ns+1)] is group gi's pods, counts[gi*(ns+1)+1+k] its
	// slot k's.
	idx := o.takeIdx(n*(ns+1) + len(routes) + 2*n)
	counts := idx[:n*(ns+1)]
	clear(counts)
	placed, inSlots := 0, 0
	for i := range routes {
		if r := &routes[i]; r.reason == "" {
			gi := groupOf(r)
			counts[gi*(ns+1)]++
			placed++
			if r.slot >= 0 {
				counts[gi*(ns+1)+1+r.slot]++
				inSlots++
			}
		}
	}
	rest := idx[len(counts):]
	byGroup, start, order := rest[:placed], rest[placed:placed+n], rest[placed+n:placed+2*n]
	off := 0
	for gi := range n {
		start[gi] = off
		off += counts[gi*(ns+1)]
	}
	for i := range routes {
		if r := &routes[i]; r.reason == "" {
			gi := groupOf(r)
			byGroup[start[gi]] = i
			start[gi]++
		}
	}
	for gi := range n {
		order[gi] = gi
	}
	if g.v2.scoped {
		// Every name of the call is pg-<uid>-<key>: the keys' order is the
		// names'.
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(ga.groups[a].key, ga.groups[b].key) })
	}
	byName := func(a, b int) int { return strings.Compare(routes[a].name, routes[b].name) }
	names := make([]string, 0, placed+inSlots)
	take := func(c int) []string {
		out := names[len(names) : len(names) : len(names)+c]
		names = names[:len(names)+c]
		return out
	}
	slotNames := o.slotNames(ga.slots)
	subs := make([]SubGroup, n*ns)
	// A group's subgroup minimums are copied into its subgroups at once,
	// so the groups share one room.
	var minRoom [16]int64
	gm := minRoom[:0]
	if ns > len(minRoom) {
		gm = make([]int64, ns)
	}
	gm = gm[:ns]
	tops := make([]int64, n)
	// needs holds the subgroups' minSubGroups, only when some entry
	// states how many leaves it needs.
	var needs []int64
	if g.v2.needs {
		needs = make([]int64, n*ns)
	}
	groups := make([]Group, n)
	// The minimums are a function of the group's narrowing, and groups
	// of one replica each (LeaderWorkerSet's) all narrow alike: gm keeps
	// the last group's, so a group narrowed as the last one reuses them.
	var total int64
	last := narrowing{inst: -2}
	for k, gi := range order {
		name, nar := ga.v2Name, wholeComponent
		if g.v2.scoped {
			name, nar = ga.groups[gi].name, ga.groups[gi].v2n
		} else if name == "" {
			name = groupName(o.uid, g.v2.name, nil)
		}
		grp := &groups[k]
		if nar != last {
			total, last = g.v2MinMembers(o, ga.slots, nar, gm), nar
		}
		*grp = Group{Name: name, Definition: g.v2.name, MinMember: total, Pods: take(counts[gi*(ns+1)]),
			SubGroups: subs[k*ns : (k+1)*ns : (k+1)*ns], MinSubGroups: &tops[k], Topology: g.v2.topology}
		for s, sl := range ga.slots {
			sg := &grp.SubGroups[s]
			*sg = SubGroup{Name: slotNames[s], MinMember: gm[s], Pods: take(counts[gi*(ns+1)+1+s]), Topology: sl.sub.topology}
			if sl.parent >= 0 {
				sg.Parent = slotNames[sl.parent]
			} else {
				tops[k]++
			}
			if needs != nil {
				if need := o.neededLeaves(sl); need >= 0 {
					needs[k*ns+s] = need
					sg.MinSubGroups = &needs[k*ns+s]
				}
			}
		}
		// start[gi] is now the end of the group's routes.
		mine := byGroup[start[gi]-counts[gi*(ns+1)] : start[gi]]
		slices.SortFunc(mine, byName)
		for _, i := range mine {
			r := &routes[i]
			grp.Pods = append(grp.Pods, r.name)
			if r.slot >= 0 {
				grp.SubGroups[r.slot].Pods = append(grp.SubGroups[r.slot].Pods, r.name)
			}
		}
	}
	return groups
}

// slotCount is W(C) of slot s in a group narrowed as n, its
// components' scales read from tab (o.eff, or o.pop for the pods that
// exist): see v2MinMembers.
func (g *gangModel) slotCount(o *gangObject, tab [][]int64, s v2Slot, n narrowing) int64 {
	v2 := g.v2
	c := s.sub.comp
	if c == v2.scope {
		return g.sub(o, tab, c, n)
	}
	w := g.sub(o, tab, c, narrowing{inst: s.inst})
	for a := c.cm.parent; a != nil && a != v2.scope.cm; a = a.parent {
		if m := own(tab, g.comps[a.index], -1); m > 0 {
			w = satMul(w, m)
		}
	}
	if m := own(tab, v2.scope, n.inst); m > 0 && !n.oneReplica {
		w = satMul(w, m)
	}
	return w
}

// v2MinMembers returns a v2 group's minMember and writes each slot's into
// mins (one per slot): the pod
// count of its component (of its one instance for a per-instance slot)
// within the group's scope, W(C) = sub(C) × Π m(A) over C's proper
// ancestors A up to the group's component G, m(A) = own(A) if > 0 else 1,
// m(G) narrowed like the group (one replica counts 1, one instance its
// eff). A per-replica leaf counts an equal share of its subgroup's pods
// (of its stated minimum, when it needs all its leaves), the first leaves
// one more while a remainder lasts, so that the leaves sum to their
// subgroup; a subgroup that needs only some of its leaves
// (perReplica.minCountPath) splits the pods that exist (replicas, not
// minReplicas: its leaves are whole) and counts the first leaves it needs,
// or its stated minimum when that is more. A parent's count includes its children's, as sub does. The
// group's minMember is max(1, the sum over the top-level slots), unless the object
// states it (podGroup.minMemberPath); a stated minimum below that sum is
// taken from the last slots first, each giving up its own pods (its count
// less its counted children's) and its ancestors the same, so that no subgroup
// demands more than the group and parents stay the sum of their parts;
// a leaf its subgroup does not need gives up nothing.
func (g *gangModel) v2MinMembers(o *gangObject, slots []v2Slot, n narrowing, mins []int64) int64 {
	var total int64
	for i, s := range slots {
		if s.rep >= 0 {
			// Written with its subgroup's, which it follows.
			continue
		}
		stated, need := o.statedMin(s), o.neededLeaves(s)
		tab := o.eff
		if need >= 0 {
			// Leaves it may do without split the pods that exist, not its
			// minimum: a Volcano task's partitions are partitionSize pods
			// each whatever its minAvailable. (need >= 0 only with
			// replicas.)
			tab = o.pop
		}
		w := g.slotCount(o, tab, s, n)
		if reps := o.replicaCount(s); reps > 0 {
			// The leaves share the subgroup's count: its stated minimum
			// when it needs all of them, else its pods, each leaf whole.
			share := w
			if need < 0 && stated >= 0 {
				share = stated
			}
			for r := range reps {
				mins[i+1+int(r)] = share / reps
				if r < share%reps {
					mins[i+1+int(r)]++
				}
			}
			if need >= 0 {
				// The first need leaves, and a stated minimum above them
				// (Volcano checks a task's minTaskMember and its
				// partitions' minSubGroups alike).
				w = max(need*(share/reps)+min(need, share%reps), stated)
				stated = -1
			}
		}
		if stated >= 0 {
			// The object states the subgroup's minimum (nothing nests under
			// it): 0 included, as Volcano's minTaskMember of a task with
			// minAvailable: 0.
			w = stated
		}
		mins[i] = w
		if s.parent < 0 {
			total = satAdd(total, w)
		}
	}
	if o.v2Min <= 0 {
		// A gang of no pod is no gang: like the alpha form's, the
		// computed minimum is at least 1.
		return max(1, total)
	}
	deficit := total - o.v2Min
	if deficit <= 0 {
		return o.v2Min
	}
	// A slot's own pods, its count less its children's: giving up pods
	// lowers a slot and its ancestors alike, so this does not change
	// during the walk.
	var room [16]int64
	own := room[:]
	if len(slots) > len(room) {
		own = make([]int64, len(slots))
	}
	for i, s := range slots {
		own[i] += mins[i]
		if s.parent >= 0 && o.counted(slots, s) {
			own[s.parent] -= mins[i]
		}
	}
	for i := len(slots) - 1; i >= 0 && deficit > 0; i-- {
		if !o.counted(slots, slots[i]) {
			// A leaf its subgroup does not need gives up nothing: it is
			// in no minimum.
			continue
		}
		take := min(deficit, max(own[i], 0))
		for s := i; s >= 0; s = slots[s].parent {
			mins[s] -= take
		}
		deficit -= take
	}
	return o.v2Min
}

// counted reports whether slot s counts in its parent's minimum: every
// slot but a leaf past those its subgroup needs.
func (o *gangObject) counted(slots []v2Slot, s v2Slot) bool {
	if s.rep < 0 || s.sub.repNeed == nil {
		return true
	}
	need := o.neededLeaves(slots[s.parent])
	return need < 0 || int64(s.rep) < need
}
