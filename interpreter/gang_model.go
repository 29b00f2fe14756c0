package interpreter

import (
	"context"
	"fmt"
	"sync"

	"github.com/kartalua/karta/karta"
)

// gangModel is the pod side of a Karta: every jq path that GetGangGroups
// and PlacePod evaluate on pods (type, instance and replica selectors,
// member keys and filters), plus the scale paths that minimum members read
// on the object. They are compiled once, by newGangModel, so that nothing
// is parsed per pod (docs/architecture.md, "The jq core"). A gangModel is immutable and safe for
// concurrent use.
type gangModel struct {
	m *model
	// comps are indexed like m.comps (compModel.index).
	comps []*gangComp
	// defs are the alpha podGroups in YAML order; membersOf[i] lists the
	// members that name component i, across groups in YAML order, which is
	// the order in which a pod's effective member is looked for.
	defs      []*gangDef
	membersOf [][]*gangMember
	// v2 is the podGroup form; nil with the alpha form or no instructions.
	v2 *gangV2
	// definitionMode says some component has a scale definition; without
	// one, minimum members count leaves.
	definitionMode bool
}

// gangComp is one component's pod-side paths and scale paths.
type gangComp struct {
	cm *compModel
	// typeKey is the componentTypeSelector's keyPath, nil without one;
	// typeValue its value, nil when the selector tests existence.
	typeKey   *podExpr
	typeValue *string
	// matchLabels are the selector's matchLabels, nil without; a pod must
	// carry every pair (and match typeKey too when both are set).
	matchLabels map[string]string
	// instanceID is the componentInstanceSelector's idPath, replicaKey the
	// replicaSelector's keyPath; nil when not defined.
	instanceID *podExpr
	replicaKey *podExpr
	// scaled says the component has a (non-empty) scale definition;
	// replicas and minReplicas are its paths, nil when not defined.
	scaled                bool
	replicas, minReplicas *jqProgram
}

func (gc *gangComp) name() string { return gc.cm.c.Name }

// gangDef is one alpha podGroups entry.
type gangDef struct {
	name    string
	index   int
	members []*gangMember
	// minMember is the definition's minMemberPath, nil without one;
	// minField names it in errors.
	minMember *jqProgram
	minField  string
}

// gangMember is one member of an alpha definition with its compiled keys
// and filters.
type gangMember struct {
	def     *gangDef
	comp    *gangComp
	keys    []*podExpr
	filters []*podExpr
}

// newGangModel compiles the pod-side and scale paths of m's Karta. Like
// newModel it fails on what validation reports first (an expression that
// does not compile, an unknown member component, both gang forms), so
// this is a guard rather than the user's first notice.
func newGangModel(m *model) (*gangModel, error) {
	g := &gangModel{m: m, comps: make([]*gangComp, len(m.comps)), membersOf: make([][]*gangMember, len(m.comps))}
	for _, cm := range m.comps {
		gc, err := newGangComp(cm)
		if err != nil {
			return nil, fmt.Errorf("karta %q: component %q: %w", m.name, cm.c.Name, err)
		}
		g.comps[cm.index] = gc
		g.definitionMode = g.definitionMode || gc.scaled
	}
	instr := m.karta.Spec.EffectiveInstructions()
	if instr == nil || instr.GangScheduling == nil {
		g.indexParents()
		return g, nil
	}
	gs := instr.GangScheduling
	if len(gs.PodGroups) > 0 && gs.PodGroup != nil {
		return nil, fmt.Errorf("karta %q: gangScheduling has both podGroups and podGroup", m.name)
	}
	var err error
	if gs.PodGroup != nil {
		g.v2, err = g.compileV2(gs.PodGroup)
	} else {
		err = g.compileAlpha(gs.PodGroups)
	}
	if err != nil {
		return nil, fmt.Errorf("karta %q: gangScheduling: %w", m.name, err)
	}
	g.indexParents()
	return g, nil
}

func newGangComp(cm *compModel) (*gangComp, error) {
	gc := &gangComp{cm: cm}
	var err error
	if ps := cm.c.PodSelector; ps != nil {
		if ts := ps.ComponentTypeSelector; ts != nil {
			if ts.KeyPath != "" {
				if gc.typeKey, err = newPodExpr(cm.exprs, ts.KeyPath); err != nil {
					return nil, fmt.Errorf("podSelector.componentTypeSelector.keyPath: %w", err)
				}
				gc.typeValue = ts.Value
			}
			if len(ts.MatchLabels) > 0 {
				gc.matchLabels = ts.MatchLabels
			}
		}
		if is := ps.ComponentInstanceSelector; is != nil {
			if gc.instanceID, err = newPodExpr(cm.exprs, is.IDPath); err != nil {
				return nil, fmt.Errorf("podSelector.componentInstanceSelector.idPath: %w", err)
			}
		}
		if rs := ps.ReplicaSelector; rs != nil {
			if gc.replicaKey, err = newPodExpr(cm.exprs, rs.KeyPath); err != nil {
				return nil, fmt.Errorf("podSelector.replicaSelector.keyPath: %w", err)
			}
		}
	}
	// Placement reads a pod's instance with the selector; without one a
	// pod of a multi-instance component could never be placed, so the
	// pairing that validation requires is required here too.
	if cm.ids != nil && gc.instanceID == nil {
		return nil, fmt.Errorf("instanceIdPath without podSelector.componentInstanceSelector")
	}
	if sp := cm.scale; sp != nil {
		gc.scaled = true
		gc.replicas, gc.minReplicas = sp.replicas, sp.min
	}
	return gc, nil
}

func (g *gangModel) comp(name string) (*gangComp, error) {
	cm, ok := g.m.byName[name]
	if !ok {
		return nil, fmt.Errorf("unknown component %q", name)
	}
	return g.comps[cm.index], nil
}

func (g *gangModel) compileAlpha(groups []karta.PodGroup) error {
	for i := range groups {
		pg := &groups[i]
		def := &gangDef{name: pg.Name, index: i, minField: fmt.Sprintf("podGroups[%d].minMemberPath", i)}
		if pg.MinMemberPath != "" {
			p, err := g.m.exprs.compile(pg.MinMemberPath)
			if err != nil {
				return fmt.Errorf("podGroups[%d].minMemberPath: %w", i, err)
			}
			def.minMember = p
		}
		for j := range pg.Members {
			mem := &pg.Members[j]
			field := fmt.Sprintf("podGroups[%d].members[%d]", i, j)
			gc, err := g.comp(mem.ComponentName)
			if err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			gm := &gangMember{def: def, comp: gc}
			for k, expr := range mem.GroupByKeyPaths {
				p, err := newPodExpr(g.m.exprs, expr)
				if err != nil {
					return fmt.Errorf("%s.groupByKeyPaths[%d]: %w", field, k, err)
				}
				gm.keys = append(gm.keys, p)
			}
			for k, expr := range mem.Filters {
				p, err := newPodExpr(g.m.exprs, expr)
				if err != nil {
					return fmt.Errorf("%s.filters[%d]: %w", field, k, err)
				}
				gm.filters = append(gm.filters, p)
			}
			def.members = append(def.members, gm)
			g.membersOf[gc.cm.index] = append(g.membersOf[gc.cm.index], gm)
		}
		g.defs = append(g.defs, def)
	}
	return nil
}

// hasInstructions reports whether the Karta has gang instructions.
func (g *gangModel) hasInstructions() bool { return g.v2 != nil || len(g.defs) > 0 }

// gangObject is what one call reads from the object: every component's
// instances and, in definition mode, eff(c, i) (effOf). Calls take
// one from gangObjects and give it back with release once their result is
// built (nothing of the result points into it), so that the slices are
// reused rather than allocated on every call.
type gangObject struct {
	// insts and eff are indexed by compModel.index; eff[i] is nil for a
	// component without a scale definition (own = 0).
	insts [][]instance
	eff   [][]int64
	// pop[i] are pop(c, i) (effOf), the pods that exist, read only when
	// some v2 entry needs only some of its leaves (gangV2.needs): they
	// split those pods.
	pop [][]int64
	// uid names the groups: metadata.uid, else metadata.name; ns is
	// metadata.namespace.
	uid, ns string
	// cands are the pod-bearing components with a present instance: the
	// candidates of every pod's component.
	cands []*gangComp
	// minOf[d] is alpha definition d's minimum read with its
	// minMemberPath, 0 when it has none or the path yields null or 0 (the
	// computed minimum applies); v2Min likewise for the v2 group.
	minOf []int64
	v2Min int64
	// reps[e] are v2 entry e's replica counts when it splits per replica
	// (gangV2.readEntryPaths).
	reps [][]int64
	// subMins[e] are v2 entry e's stated minimums (its minMemberPath), -1
	// where none is stated.
	subMins [][]int64
	// needs[e] are the leaves v2 entry e's subgroups need (its
	// perReplica.minCountPath), -1 where all of them are.
	needs [][]int64
	// routes and idx are GetGangGroups' per-pod routes and its groups'
	// pod indexes, recycled with the rest (nothing of the result points
	// into them).
	routes []podRoute
	idx    []int
	// groups and byKey are the room of the call's gangAssembly: a
	// LeaderWorkerSet of 16 groups grew its groups five times and built
	// its index on every call.
	groups []alphaGroup
	byKey  map[string]int
	// indexed says the last call wrote byKey, which release then
	// empties: clearing a map costs its capacity, and most calls (a
	// group per object, or a few groups) never index.
	indexed bool
}

// maxPooledPods bounds the routes a pooled gangObject keeps: a call with
// more pods allocates its own, so that one huge call does not leave its
// buffers in the pool.
const maxPooledPods = 1024

// takeRoutes returns n cleared routes.
func (o *gangObject) takeRoutes(n int) []podRoute {
	if cap(o.routes) < n {
		r := make([]podRoute, n)
		if n <= maxPooledPods {
			o.routes = r
		}
		return r
	}
	o.routes = o.routes[:n]
	return o.routes
}

// takeIdx returns room for n indexes.
func (o *gangObject) takeIdx(n int) []int {
	if cap(o.idx) < n {
		x := make([]int, n)
		if n <= 2*maxPooledPods {
			o.idx = x
		}
		return x
	}
	o.idx = o.idx[:n]
	return o.idx
}

var gangObjects = sync.Pool{New: func() any { return new(gangObject) }}

// newGangObject takes a gangObject for n components, its slices empty.
func newGangObject(n int) *gangObject {
	o := gangObjects.Get().(*gangObject)
	if cap(o.insts) < n {
		o.insts, o.eff, o.pop = make([][]instance, n), make([][]int64, n), make([][]int64, n)
	}
	o.insts, o.eff, o.pop = o.insts[:n], o.eff[:n], o.pop[:n]
	return o
}

// maxPooledGroups bounds the groups a pooled gangObject keeps, and a
// pooled index's size, as maxPooledPods bounds its routes.
const maxPooledGroups = 256

// assembly returns a gangAssembly on o's room for groups.
func (o *gangObject) assembly() gangAssembly {
	return gangAssembly{groups: o.groups[:0], byKey: o.byKey}
}

// keepAssembly keeps ga's room in o for the next call (release empties
// it), unless it grew past maxPooledGroups.
func (o *gangObject) keepAssembly(ga *gangAssembly) {
	if cap(ga.groups) <= maxPooledGroups {
		o.groups, o.byKey, o.indexed = ga.groups, ga.byKey, ga.indexed
	} else {
		o.groups, o.byKey, o.indexed = nil, nil, false
	}
}

// release clears o, so that the pool keeps no part of the object alive,
// and gives it back. o must not be used after.
func (o *gangObject) release() {
	for i := range o.insts {
		clear(o.insts[i])
		o.insts[i] = o.insts[i][:0]
		o.eff[i] = o.eff[i][:0]
		o.pop[i] = o.pop[i][:0]
	}
	clear(o.routes)
	o.routes = o.routes[:0]
	clear(o.groups)
	o.groups = o.groups[:0]
	if o.indexed {
		clear(o.byKey)
		o.indexed = false
	}
	o.uid, o.ns = "", ""
	clear(o.cands)
	o.cands = o.cands[:0]
	o.minOf = o.minOf[:0]
	o.v2Min = 0
	for i := range o.reps {
		o.reps[i] = o.reps[i][:0]
	}
	for i := range o.subMins {
		o.subMins[i] = o.subMins[i][:0]
	}
	for i := range o.needs {
		o.needs[i] = o.needs[i][:0]
	}
	gangObjects.Put(o)
}

// readObject reads everything the object contributes. Its errors fail the
// whole call, unlike a pod's, which only unmatch that pod. The caller
// releases the gangObject.
func (g *gangModel) readObject(ctx context.Context, ev evaluator, obj map[string]any) (*gangObject, error) {
	// The evaluator reads the object in place: direct evaluation as it
	// is, gojq after its own jqInput. A copy here cost a walk of the whole
	// object on every call.
	in := any(obj)
	o := newGangObject(len(g.comps))
	for _, gc := range g.comps {
		i := gc.cm.index
		insts, err := g.m.instancesInto(ctx, ev, gc.cm, in, o.insts[i][:0], presenceOnly)
		if err != nil {
			o.release()
			return nil, &GangObjectError{Component: gc.name(), Err: err}
		}
		o.insts[i] = insts
		if gc.scaled {
			var pop *[]int64
			if g.v2 != nil && g.v2.needs {
				pop = &o.pop[i]
			}
			if o.eff[i], err = g.effOf(ctx, ev, gc, insts, in, o.eff[i][:0], pop); err != nil {
				o.release()
				return nil, err
			}
		} else {
			o.eff[i], o.pop[i] = nil, nil
		}
	}
	g.scope(o, obj)
	for _, d := range g.defs {
		n, err := readMinMember(ctx, ev, d.minMember, in, d.minField)
		if err != nil {
			o.release()
			return nil, err
		}
		o.minOf = append(o.minOf, n)
	}
	if g.v2 != nil {
		var err error
		if o.v2Min, err = readMinMember(ctx, ev, g.v2.minMember, in, "podGroup.minMemberPath"); err != nil {
			o.release()
			return nil, err
		}
		if err := g.v2.readEntryPaths(ctx, ev, o, in); err != nil {
			o.release()
			return nil, err
		}
	}
	return o, nil
}

// scope sets what every pod's placement reads of the object besides the
// instances (o.insts, read first): the uid, the namespace and the
// candidate components.
func (g *gangModel) scope(o *gangObject, obj map[string]any) {
	o.uid = metaString(obj, "uid")
	if o.uid == "" {
		o.uid = metaString(obj, "name")
	}
	o.ns = metaString(obj, "namespace")
	for _, gc := range g.comps {
		if gc.cm.podBearing() && anyPresent(o.insts[gc.cm.index]) {
			o.cands = append(o.cands, gc)
		}
	}
}

// readMinMember evaluates a minMemberPath on the object: no output, null
// and 0 give 0 (the computed minimum applies); one positive integer (or
// decimal string, as scale paths take) is the group's minimum; anything
// else fails the call, like a broken scale path.
func readMinMember(ctx context.Context, ev evaluator, p *jqProgram, in any, field string) (int64, error) {
	if p == nil {
		return 0, nil
	}
	outs, err := ev.all(ctx, p, in)
	if err != nil {
		return 0, &GangObjectError{Field: field, Err: err}
	}
	switch len(outs) {
	case 0:
		return 0, nil
	case 1:
	default:
		return 0, &GangObjectError{Field: field, Err: fmt.Errorf("yields %d values, want at most one", len(outs))}
	}
	n, _, err := scaleInt(outs[0])
	if err != nil {
		return 0, &GangObjectError{Field: field, Err: err}
	}
	return n, nil
}

// GangObjectError is an error reading the object in GetGangGroups or
// PlacePod: an instance or scale path that fails, yields the wrong number
// of values, or yields an invalid instance id or scale value. It fails
// the whole call.
type GangObjectError struct {
	// Component is the component whose path failed; "" for a group's
	// minMemberPath (Field names it).
	Component string
	// Instance is the instance id, "" when the error is not about one.
	Instance string
	// Field is the Karta field, e.g. minReplicasPath; "" when Err already
	// names the component and the path (the instance resolution's errors).
	Field string
	Err   error
}

func (e *GangObjectError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	if e.Component == "" {
		return fmt.Sprintf("%s: %v", e.Field, e.Err)
	}
	if e.Instance == "" {
		return fmt.Sprintf("component %q: %s: %v", e.Component, e.Field, e.Err)
	}
	return fmt.Sprintf("component %q instance %q: %s: %v", e.Component, e.Instance, e.Field, e.Err)
}

func (e *GangObjectError) Unwrap() error { return e.Err }

// metaString returns metadata.<key> of a Kubernetes object when it is a
// string, else "".
func metaString(obj map[string]any, key string) string {
	meta, _ := obj["metadata"].(map[string]any)
	s, _ := meta[key].(string)
	return s
}
