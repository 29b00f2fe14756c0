package interpreter

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Minimum members (docs/karta.md, "Minimum members"): a property of the
// group, the expected pod count of the scope its members name. Ancestors'
// scales are never multiplied in, so a member names exactly the scope that
// is ganged.

// narrowing is a member's scope in one group: the instance of its
// component that the group's pods share (-1: all instances), and whether
// it counts one replica (the component has a replicaSelector).
type narrowing struct {
	inst       int
	oneReplica bool
}

var wholeComponent = narrowing{inst: -1}

// effOf reads eff(c, i) for every instance of a scaled component:
// minReplicas if > 0, else replicas if > 0, else 0. The scale paths zip
// with the ids like every per-instance path; an absent
// instance counts 0 and its values are not converted, as GetPodSpecs
// reports none for it. The result reuses buf's room. With pop non-nil it
// also writes pop(c, i), the pods that exist: replicas if > 0, else eff
// (leaves split those, not the minimum: see v2MinMembers), reusing
// *pop's room.
func (g *gangModel) effOf(ctx context.Context, ev evaluator, gc *gangComp, insts []instance, in any, buf []int64, pop *[]int64) ([]int64, error) {
	read := func(p *jqProgram, field string) ([]any, error) {
		if p == nil {
			return nil, nil
		}
		outs, err := ev.all(ctx, p, in)
		if err != nil {
			return nil, &GangObjectError{Component: gc.name(), Field: field, Err: err}
		}
		if len(outs) != len(insts) {
			return nil, &GangObjectError{Component: gc.name(), Err: zipError(gc.name(), field, len(outs), instanceIDList(insts))}
		}
		return outs, nil
	}
	reps, err := read(gc.replicas, "replicasPath")
	if err != nil {
		return nil, err
	}
	mins, err := read(gc.minReplicas, "minReplicasPath")
	if err != nil {
		return nil, err
	}
	count := func(outs []any, field string, i int) (int64, error) {
		if outs == nil {
			return 0, nil
		}
		n, ok, err := scaleInt(outs[i])
		if err != nil {
			return 0, &GangObjectError{Component: gc.name(), Instance: insts[i].id, Field: field, Err: err}
		}
		if !ok || n < 0 {
			return 0, nil
		}
		return n, nil
	}
	eff := append(buf[:0], make([]int64, len(insts))...)
	if pop != nil {
		*pop = append((*pop)[:0], make([]int64, len(insts))...)
	}
	for i, inst := range insts {
		if !inst.present {
			continue
		}
		if eff[i], err = count(mins, "minReplicasPath", i); err != nil {
			return nil, err
		}
		if eff[i] > 0 && pop == nil {
			// replicas is not read (nor converted) where minReplicas
			// answers.
			continue
		}
		n, err := count(reps, "replicasPath", i)
		if err != nil {
			return nil, err
		}
		if eff[i] == 0 {
			eff[i] = n
		}
		if pop != nil {
			(*pop)[i] = cmp.Or(n, eff[i])
		}
	}
	return eff, nil
}

// groupMinMember is max(1, Σ contrib(m, g)) over the members of the
// group's definition. Narrowing reads the pods' instance or replica of the
// member's component; a pod whose read fails is unmatched, and a group
// whose pods span several instances or replicas of one member is invalid:
// all its pods are unmatched (the count would describe no real scope).
func (g *gangModel) groupMinMember(ctx context.Context, ev evaluator, o *gangObject, ag *alphaGroup, pods []map[string]any, routes []podRoute) int64 {
	if n := o.minOf[ag.def.index]; n > 0 {
		// The object states the minimum (minMemberPath): it names the
		// group's scope itself, so there is nothing to narrow.
		return n
	}
	var total int64
	for _, gm := range ag.def.members {
		n, invalid := g.narrow(ctx, ev, o, ag, gm, pods, routes)
		if invalid != "" {
			for _, i := range ag.pods {
				if routes[i].reason == "" {
					routes[i].reason = invalid
				}
			}
			return 0
		}
		total = satAdd(total, g.sub(o, o.eff, gm.comp, n))
	}
	return max(1, total)
}

// narrow finds member gm's narrowing in group ag from the group's pods
// mapped to gm. The instance is read with the member component's own
// instance selector, since a descendant's pod carries its own component's
// instance in its placement; likewise the replica key with the member
// component's replicaSelector, since a nearer one may have set the pod's.
func (g *gangModel) narrow(ctx context.Context, ev evaluator, o *gangObject, ag *alphaGroup, gm *gangMember, pods []map[string]any, routes []podRoute) (narrowing, string) {
	c := gm.comp
	n := narrowing{inst: -1, oneReplica: c.replicaKey != nil}
	if c.cm.ids == nil && c.replicaKey == nil {
		return n, ""
	}
	// Room for the usual one id and one key, so that a group's narrowing
	// allocates nothing.
	var idRoom, keyRoom [2]string
	ids, replicas := idRoom[:0], keyRoom[:0]
	for _, i := range ag.pods {
		r := &routes[i]
		if r.reason != "" || r.member != gm {
			continue
		}
		if c.cm.ids != nil {
			id, reason := r.pl.instance, ""
			if r.pl.comp != c.cm {
				pi := newPodIn(pods[i])
				id, reason = g.podInstance(ctx, ev, c, o.insts, &pi)
			}
			if reason != "" {
				r.reason = reason
				continue
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if c.replicaKey != nil {
			key, reason := r.pl.replica, ""
			if g.replicaComp(g.comps[r.pl.comp.index]) != c {
				pi := newPodIn(pods[i])
				key, reason = g.podReplica(ctx, ev, c, &pi)
			}
			if reason != "" {
				r.reason = reason
				continue
			}
			if !slices.Contains(replicas, key) {
				replicas = append(replicas, key)
			}
		}
	}
	if len(ids) > 1 {
		// In the component's instance order, so the message is stable.
		order := func(a, b string) int { return o.instIndex(c, a) - o.instIndex(c, b) }
		slices.SortFunc(ids, order)
		return n, spansMessage(ag.name, "instances", ids, c.name())
	}
	if len(replicas) > 1 {
		slices.Sort(replicas)
		return n, spansMessage(ag.name, "replicas", replicas, c.name())
	}
	if len(ids) == 1 {
		n.inst = o.instIndex(c, ids[0])
	}
	return n, ""
}

func spansMessage(group, what string, values []string, component string) string {
	return fmt.Sprintf("group %s spans %s [%s] of component %s; separate them with a key or name an ancestor",
		group, what, strings.Join(values, " "), component)
}

// instIndex is the position of id among gc's instances.
func (o *gangObject) instIndex(gc *gangComp, id string) int {
	return slices.IndexFunc(o.insts[gc.cm.index], func(inst instance) bool { return inst.id == id })
}

// sub is sub(c, I) in definition mode, or the leaf count without any
// scale definition. tab holds the components' scales: o.eff, or o.pop
// for the pods that exist.
func (g *gangModel) sub(o *gangObject, tab [][]int64, gc *gangComp, n narrowing) int64 {
	if !g.definitionMode {
		return g.leafCount(o, gc, n)
	}
	own := own(tab, gc, n.inst)
	if n.oneReplica {
		// One replica of a replicated component: its children count per
		// replica already.
		own = 1
	}
	s := g.childSum(o, tab, gc)
	switch {
	case s == 0:
		return own
	case own == 0:
		return s
	}
	return satMul(own, s)
}

// childSum is S(c): the children's sub over all their instances.
func (g *gangModel) childSum(o *gangObject, tab [][]int64, gc *gangComp) int64 {
	var s int64
	for _, d := range gc.cm.children {
		s = satAdd(s, g.sub(o, tab, g.comps[d.index], wholeComponent))
	}
	return s
}

// own is own(c, I): Σ eff over the instances (one when inst >= 0), read
// from tab (o.eff or o.pop); 0 without a scale definition.
func own(tab [][]int64, gc *gangComp, inst int) int64 {
	eff := tab[gc.cm.index]
	if inst >= 0 {
		if eff == nil {
			return 0
		}
		return eff[inst]
	}
	var sum int64
	for _, e := range eff {
		sum = satAdd(sum, e)
	}
	return sum
}

// leafCount is sub(c) of leaf-count mode: present instances of a
// pod-bearing component (1 when narrowed) plus the children's. It counts
// one pod per instance, which is already one replica, so a replicaSelector
// changes nothing here; its pods must still share a replica key.
func (g *gangModel) leafCount(o *gangObject, gc *gangComp, n narrowing) int64 {
	var count int64
	if gc.cm.podBearing() {
		if n.inst >= 0 {
			count = 1
		} else {
			for _, inst := range o.insts[gc.cm.index] {
				if inst.present {
					count++
				}
			}
		}
	}
	for _, d := range gc.cm.children {
		count = satAdd(count, g.leafCount(o, g.comps[d.index], wholeComponent))
	}
	return count
}

// satAdd and satMul saturate at MaxInt64 rather than wrap: scales are
// each at most 2^31-1, but a deep tree of them could overflow, and a
// negative minMember would be worse than a huge one.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
