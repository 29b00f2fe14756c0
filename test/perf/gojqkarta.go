package perf

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// GojqKarta is baseline (a), upstream Karta's library method: a Karta is
// interpreted from its definition on every call, each jq expression parsed
// and compiled with gojq at every evaluation, over a copy of the object
// normalised by a JSON marshal/unmarshal round trip. It covers the parts of
// the Karta semantics that PyTorchJob, JobSet and LeaderWorkerSet use (pod
// template specs, alpha podGroups in definition mode) and returns karta's
// result types, so that the benchmarks can assert equal results.
type GojqKarta struct {
	k     *karta.Karta
	comps []*gComp
}

// gComp is a component with its parent and children by ownerRef.
type gComp struct {
	c        *karta.Component
	parent   *gComp
	children []*gComp
}

// NewGojqKarta prepares k; nothing is compiled (that is the point).
func NewGojqKarta(k *karta.Karta) (*GojqKarta, error) {
	g := &GojqKarta{k: k}
	byName := map[string]*gComp{}
	for _, c := range k.Spec.StructureDefinition.Components() {
		gc := &gComp{c: c}
		byName[c.Name] = gc
		g.comps = append(g.comps, gc)
	}
	for _, gc := range g.comps {
		if gc.c.OwnerRef == nil || *gc.c.OwnerRef == "" {
			continue
		}
		p, ok := byName[*gc.c.OwnerRef]
		if !ok {
			return nil, fmt.Errorf("component %q: unknown ownerRef %q", gc.c.Name, *gc.c.OwnerRef)
		}
		gc.parent = p
		p.children = append(p.children, gc)
	}
	return g, nil
}

// jq parses, compiles and runs expr on v: every evaluation pays for all
// three, as upstream's library does.
func jq(expr string, v any) ([]any, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, err
	}
	var out []any
	iter := code.Run(v)
	for {
		x, ok := iter.Next()
		if !ok {
			return out, nil
		}
		if err, ok := x.(error); ok {
			return nil, fmt.Errorf("jq %s: %w", expr, err)
		}
		out = append(out, x)
	}
}

// normalise is the JSON round trip upstream makes of every object.
func normalise(obj map[string]any) (any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(b, &v)
}

// tostring is jq's tostring.
func tostring(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := gojq.Marshal(v)
	return string(b), err
}

// InterpretStatus is the generic status, by precedence.
func (g *GojqKarta) InterpretStatus(obj *unstructured.Unstructured) (*interpreter.StatusResult, error) {
	v, err := normalise(obj.Object)
	if err != nil {
		return nil, err
	}
	res := &interpreter.StatusResult{Status: karta.StatusUndefined, Matched: []karta.Status{}, Conditions: []interpreter.Condition{}}
	root := g.k.Spec.StructureDefinition.RootComponent
	if root == nil || root.StatusDefinition == nil {
		return res, nil
	}
	sd := root.StatusDefinition
	if pd := sd.PhaseDefinition; pd != nil {
		outs, err := jq(pd.Path, v)
		if err != nil {
			return nil, err
		}
		if len(outs) > 0 {
			switch p := outs[0].(type) {
			case string:
				res.Phase = &p
			case nil:
			default:
				return nil, fmt.Errorf("phase is a %T", p)
			}
		}
	}
	if cd := sd.ConditionsDefinition; cd != nil {
		outs, err := jq(cd.Path, v)
		if err != nil {
			return nil, err
		}
		if res.Conditions, err = flattenConditions(cd, outs); err != nil {
			return nil, err
		}
	}
	for _, sm := range sd.StatusMappings.InPrecedence() {
		for _, mt := range sm.Matchers {
			ok, err := matcherHolds(mt, res, v)
			if err != nil {
				return nil, err
			}
			if ok {
				res.Matched = append(res.Matched, sm.Status)
				break
			}
		}
	}
	if len(res.Matched) > 0 {
		res.Status = res.Matched[0]
	}
	return res, nil
}

func flattenConditions(cd *karta.ConditionsDefinition, outs []any) ([]interpreter.Condition, error) {
	conds := []interpreter.Condition{}
	field := func(m map[string]any, name string) (*string, error) {
		if name == "" || m[name] == nil {
			return nil, nil
		}
		s, ok := m[name].(string)
		if !ok {
			return nil, fmt.Errorf("condition field %q is a %T", name, m[name])
		}
		return &s, nil
	}
	for _, o := range outs {
		if o == nil {
			continue
		}
		arr, ok := o.([]any)
		if !ok {
			return nil, fmt.Errorf("conditions are a %T", o)
		}
		for _, e := range arr {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("a condition is a %T", e)
			}
			typ, _ := m[cd.TypeFieldName].(string)
			if typ == "" {
				continue
			}
			c := interpreter.Condition{Type: typ}
			var err error
			if c.Status, err = field(m, cd.StatusFieldName); err != nil {
				return nil, err
			}
			if c.Reason, err = field(m, cd.ReasonFieldName); err != nil {
				return nil, err
			}
			if c.Message, err = field(m, cd.MessageFieldName); err != nil {
				return nil, err
			}
			conds = append(conds, c)
		}
	}
	return conds, nil
}

func matcherHolds(mt karta.StatusMatcher, res *interpreter.StatusResult, v any) (bool, error) {
	if mt.ByPhase != "" && (res.Phase == nil || *res.Phase != mt.ByPhase) {
		return false, nil
	}
	for _, cm := range mt.ByConditions {
		var last *interpreter.Condition
		for i := range res.Conditions {
			if res.Conditions[i].Type == cm.Type {
				last = &res.Conditions[i]
			}
		}
		if last == nil ||
			(cm.Status != "" && (last.Status == nil || *last.Status != cm.Status)) ||
			(cm.Reason != "" && (last.Reason == nil || *last.Reason != cm.Reason)) {
			return false, nil
		}
	}
	if e := mt.ByExpression; e != nil {
		outs, err := jq(e.Expression, v)
		if err != nil || len(outs) == 0 {
			return false, err
		}
		s, err := tostring(outs[0])
		return s == e.ExpectedResult, err
	}
	return true, nil
}

// gInstance is one instance of a component.
type gInstance struct {
	id       string
	template any
	present  bool
	eff      int64 // eff(c, i): minReplicas if > 0, else replicas if > 0, else 0
	scale    *interpreter.Scale
}

// instances resolves a component's instances, templates and scales on the
// normalised object v.
func (g *GojqKarta) instances(gc *gComp, v any) ([]gInstance, error) {
	c := gc.c
	ids := []string{""}
	if c.InstanceIDPath != "" {
		outs, err := jq(c.InstanceIDPath, v)
		if err != nil {
			return nil, err
		}
		ids = ids[:0]
		for _, o := range outs {
			id, err := idString(o)
			if err != nil {
				return nil, fmt.Errorf("component %q: %w", c.Name, err)
			}
			ids = append(ids, id)
		}
	}
	insts := make([]gInstance, len(ids))
	for i, id := range ids {
		insts[i] = gInstance{id: id, present: true}
	}
	zip := func(expr string) ([]any, error) {
		outs, err := jq(expr, v)
		if err != nil {
			return nil, err
		}
		if len(outs) != len(ids) {
			return nil, fmt.Errorf("component %q: %s yields %d values for %d instances", c.Name, expr, len(outs), len(ids))
		}
		return outs, nil
	}
	if sd := c.SpecDefinition; sd != nil {
		if sd.PodTemplateSpecPath == "" {
			return nil, fmt.Errorf("component %q: the gojq baseline implements podTemplateSpecPath only", c.Name)
		}
		tmpls, err := zip(sd.PodTemplateSpecPath)
		if err != nil {
			return nil, err
		}
		for i := range insts {
			insts[i].template, insts[i].present = tmpls[i], tmpls[i] != nil
		}
	}
	if s := c.ScaleDefinition; s != nil && !s.IsEmpty() {
		for i := range insts {
			insts[i].scale = &interpreter.Scale{}
		}
		for _, f := range []struct {
			expr string
			set  func(*interpreter.Scale, *int64)
		}{
			{s.ReplicasPath, func(sc *interpreter.Scale, n *int64) { sc.Replicas = n }},
			{s.MinReplicasPath, func(sc *interpreter.Scale, n *int64) { sc.MinReplicas = n }},
			{s.MaxReplicasPath, func(sc *interpreter.Scale, n *int64) { sc.MaxReplicas = n }},
		} {
			if f.expr == "" {
				continue
			}
			outs, err := zip(f.expr)
			if err != nil {
				return nil, err
			}
			for i, o := range outs {
				n, err := scaleNumber(o)
				if err != nil {
					return nil, fmt.Errorf("component %q: %s: %w", c.Name, f.expr, err)
				}
				f.set(insts[i].scale, n)
			}
		}
		for i := range insts {
			if !insts[i].present {
				continue
			}
			sc := insts[i].scale
			switch {
			case sc.MinReplicas != nil && *sc.MinReplicas > 0:
				insts[i].eff = *sc.MinReplicas
			case sc.Replicas != nil && *sc.Replicas > 0:
				insts[i].eff = *sc.Replicas
			}
		}
	}
	return insts, nil
}

func idString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if x != "" {
			return x, nil
		}
	case float64, int:
		return tostring(x)
	}
	return "", fmt.Errorf("bad id %v", v)
}

func scaleNumber(v any) (*int64, error) {
	if v == nil {
		return nil, nil
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	default:
		return nil, fmt.Errorf("scale is a %T", v)
	}
	if f != math.Trunc(f) {
		return nil, fmt.Errorf("scale %v is not an integer", f)
	}
	n := int64(f)
	return &n, nil
}

// GetPodSpecs is GetPodSpecs, restricted to pod template specs.
func (g *GojqKarta) GetPodSpecs(obj *unstructured.Unstructured) (*interpreter.PodSpecs, error) {
	v, err := normalise(obj.Object)
	if err != nil {
		return nil, err
	}
	res := &interpreter.PodSpecs{Items: []interpreter.PodSpecItem{}}
	for _, gc := range g.comps {
		if gc.c.SpecDefinition == nil {
			continue
		}
		insts, err := g.instances(gc, v)
		if err != nil {
			return nil, err
		}
		for _, in := range insts {
			if !in.present {
				continue
			}
			tmpl, ok := in.template.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("component %q: the template is a %T", gc.c.Name, in.template)
			}
			res.Items = append(res.Items, interpreter.PodSpecItem{Component: gc.c.Name, Instance: in.id, PodTemplateSpec: tmpl, Scale: in.scale})
		}
	}
	return res, nil
}

// PlacePod is pod placement and gang grouping for one pod.
func (g *GojqKarta) PlacePod(obj, pod *unstructured.Unstructured) (*interpreter.PodPlacement, error) {
	v, err := normalise(obj.Object)
	if err != nil {
		return nil, err
	}
	pv, err := normalise(pod.Object)
	if err != nil {
		return nil, err
	}
	insts := map[*gComp][]gInstance{}
	for _, gc := range g.comps {
		if insts[gc], err = g.instances(gc, v); err != nil {
			return nil, err
		}
	}
	if ns := obj.GetNamespace(); ns != "" && pod.GetNamespace() != "" && ns != pod.GetNamespace() {
		return nil, errors.New("another namespace")
	}
	// §7.2: the component.
	var matched []*gComp
	for _, gc := range g.comps {
		if gc.c.SpecDefinition == nil || !slices.ContainsFunc(insts[gc], func(i gInstance) bool { return i.present }) {
			continue
		}
		ok, err := selects(gc, pv)
		if err != nil {
			return nil, err
		}
		if ok {
			matched = append(matched, gc)
		}
	}
	if len(matched) != 1 {
		return nil, fmt.Errorf("%d components match", len(matched))
	}
	comp := matched[0]
	pl := &interpreter.PodPlacement{Component: comp.c.Name}
	// §7.3: the instance.
	if comp.c.InstanceIDPath != "" {
		if pl.Instance, err = podKey(comp.c.PodSelector.ComponentInstanceSelector.IDPath, pv); err != nil {
			return nil, err
		}
	}
	// §7.4: the replica, from the nearest replicaSelector.
	for c := comp; c != nil; c = c.parent {
		if ps := c.c.PodSelector; ps != nil && ps.ReplicaSelector != nil {
			if pl.Replica, err = podKey(ps.ReplicaSelector.KeyPath, pv); err != nil {
				return nil, err
			}
			break
		}
	}
	if v2 := g.k.Spec.EffectiveInstructions().GangScheduling.PodGroup; v2 != nil {
		return g.placeV2(obj, v, pv, comp, pl, insts, v2)
	}
	// §8.1: the effective member and its keys.
	var def *karta.PodGroup
	var member *karta.PodGroupMember
	groups := g.k.Spec.EffectiveInstructions().GangScheduling.PodGroups
walk:
	for c := comp; c != nil; c = c.parent {
		for i := range groups {
			for j := range groups[i].Members {
				if m := &groups[i].Members[j]; m.ComponentName == c.c.Name && len(m.Filters) == 0 {
					def, member = &groups[i], m
					break walk
				}
			}
		}
	}
	if member == nil {
		return nil, errors.New("no pod group member applies")
	}
	uid := obj.GetUID()
	name := "pg-" + string(uid)
	if uid == "" {
		name = "pg-" + obj.GetName()
	}
	name += "-" + def.Name
	for _, kp := range member.GroupByKeyPaths {
		key, err := podKey(kp, pv)
		if err != nil {
			return nil, err
		}
		name += "-" + key
	}
	pl.Group = name
	// §8.2: minMember of a group of this one pod, in definition mode.
	for i := range def.Members {
		m := &def.Members[i]
		mc := g.comp(m.ComponentName)
		inst := -1
		if m == member && mc.c.InstanceIDPath != "" {
			id := pl.Instance
			if mc != comp {
				if id, err = podKey(mc.c.PodSelector.ComponentInstanceSelector.IDPath, pv); err != nil {
					return nil, err
				}
			}
			inst = slices.IndexFunc(insts[mc], func(i gInstance) bool { return i.id == id })
		}
		oneReplica := mc.c.PodSelector != nil && mc.c.PodSelector.ReplicaSelector != nil
		pl.MinMember += sub(mc, insts, inst, oneReplica)
	}
	pl.MinMember = max(1, pl.MinMember)
	return pl, nil
}

// placeV2 names the v2 group of a placed pod (docs/karta.md, "The v2
// podGroup"): one per object, or per instance or replica of the group's
// component; its minimum, the sum of its top-level subgroups' unless
// minMemberPath states it; and the pod's subgroup, of its nearest entry.
func (g *GojqKarta) placeV2(obj *unstructured.Unstructured, v, pv any, comp *gComp, pl *interpreter.PodPlacement,
	insts map[*gComp][]gInstance, v2 *karta.PodGroupV2) (*interpreter.PodPlacement, error) {
	scope := g.comps[0]
	for _, gc := range g.comps {
		if gc.parent == nil {
			scope = gc
		}
	}
	if v2.ComponentName != "" {
		scope = g.comp(v2.ComponentName)
	}
	under := func(c, a *gComp) bool {
		for ; c != nil; c = c.parent {
			if c == a {
				return true
			}
		}
		return false
	}
	if !under(comp, scope) {
		return nil, errors.New("not under the group's component")
	}
	uid := string(obj.GetUID())
	if uid == "" {
		uid = obj.GetName()
	}
	pl.Group = "pg-" + uid + "-" + v2.Name
	scopeInst, oneReplica := -1, false
	if v2.ComponentName != "" {
		var key string
		var err error
		switch ps := scope.c.PodSelector; {
		case scope.c.InstanceIDPath != "":
			if key, err = podKey(ps.ComponentInstanceSelector.IDPath, pv); err != nil {
				return nil, err
			}
			scopeInst = slices.IndexFunc(insts[scope], func(i gInstance) bool { return i.id == key })
		case ps != nil && ps.ReplicaSelector != nil:
			if key, err = podKey(ps.ReplicaSelector.KeyPath, pv); err != nil {
				return nil, err
			}
			oneReplica = true
		}
		if key != "" {
			pl.Group += "-" + key
		}
	}
	present := func(gc *gComp) bool {
		return slices.ContainsFunc(insts[gc], func(i gInstance) bool { return i.present })
	}
	nearest := -1
	for c := comp; c != nil && nearest < 0; c = c.parent {
		nearest = slices.IndexFunc(v2.SubGroups, func(s karta.SubGroup) bool { return s.ComponentName == c.c.Name })
	}
	for i, s := range v2.SubGroups {
		mc := g.comp(s.ComponentName)
		if i == nearest && present(mc) {
			pl.SubGroup = mc.c.Name
			at := 0
			if s.PerInstance {
				id := pl.Instance
				if mc != comp {
					var err error
					if id, err = podKey(mc.c.PodSelector.ComponentInstanceSelector.IDPath, pv); err != nil {
						return nil, err
					}
				}
				pl.SubGroup += "-" + id
				at = slices.IndexFunc(insts[mc], func(i gInstance) bool { return i.id == id })
			}
			if r := s.PerReplica; r != nil {
				key, err := replicaKey(r, v, pv, at)
				if err != nil {
					return nil, err
				}
				if key != "" {
					pl.SubGroup += "-replica-" + key
				}
			}
		}
		// Only top-level entries count in the group's minimum.
		top := true
		for a := mc.parent; a != nil; a = a.parent {
			if slices.ContainsFunc(v2.SubGroups, func(o karta.SubGroup) bool { return o.ComponentName == a.c.Name }) {
				top = false
			}
		}
		if !top {
			continue
		}
		if mc == scope {
			pl.MinMember += sub(mc, insts, scopeInst, oneReplica)
			continue
		}
		w := sub(mc, insts, -1, false)
		for a := mc.parent; a != nil && a != scope; a = a.parent {
			if own := ownOf(a, insts, -1); own > 0 {
				w *= own
			}
		}
		if own := ownOf(scope, insts, scopeInst); own > 0 && !oneReplica {
			w *= own
		}
		pl.MinMember += w
	}
	pl.MinMember = max(1, pl.MinMember)
	if v2.MinMemberPath != "" {
		outs, err := jq(v2.MinMemberPath, v)
		if err != nil {
			return nil, err
		}
		if len(outs) == 1 {
			if n, err := scaleNumber(outs[0]); err == nil && n != nil && *n > 0 {
				pl.MinMember = *n
			}
		}
	}
	return pl, nil
}

// replicaKey is the pod's replica index in a per-replica subgroup: below
// the count of replicas of the subgroup (the at'th value of countPath);
// "" when the count is 0, which makes no leaves.
func replicaKey(r *karta.SubGroupReplicas, v, pv any, at int) (string, error) {
	outs, err := jq(r.CountPath, v)
	if err != nil {
		return "", err
	}
	if at < 0 || at >= len(outs) {
		return "", fmt.Errorf("perReplica.countPath yields %d values", len(outs))
	}
	n, err := scaleNumber(outs[at])
	if err != nil || n == nil || *n <= 0 {
		return "", err
	}
	key, err := podKey(r.KeyPath, pv)
	if err != nil {
		return "", err
	}
	if k, err := strconv.ParseInt(key, 10, 64); err != nil || k < 0 || k >= *n {
		return "", fmt.Errorf("replica %q not found among the %d replicas", key, *n)
	}
	return key, nil
}

// ownOf is own(c, I): Σ eff over the instances (the one of inst >= 0).
func ownOf(gc *gComp, insts map[*gComp][]gInstance, inst int) int64 {
	var own int64
	for i, in := range insts[gc] {
		if inst < 0 || i == inst {
			own += in.eff
		}
	}
	return own
}

func (g *GojqKarta) comp(name string) *gComp {
	for _, gc := range g.comps {
		if gc.c.Name == name {
			return gc
		}
	}
	return nil
}

// sub is sub(c, I) of minMember in definition mode (docs/karta.md,
// "Minimum members").
func sub(gc *gComp, insts map[*gComp][]gInstance, inst int, oneReplica bool) int64 {
	var own int64
	for i, in := range insts[gc] {
		if inst < 0 || i == inst {
			own += in.eff
		}
	}
	if oneReplica {
		own = 1
	}
	var s int64
	for _, d := range gc.children {
		s += sub(d, insts, -1, false)
	}
	switch {
	case s == 0:
		return own
	case own == 0:
		return s
	}
	return own * s
}

// selects is the component type selector.
func selects(gc *gComp, pod any) (bool, error) {
	ps := gc.c.PodSelector
	if ps == nil || ps.ComponentTypeSelector == nil {
		return true, nil
	}
	ts := ps.ComponentTypeSelector
	outs, err := jq(ts.KeyPath, pod)
	if err != nil {
		return false, err
	}
	for _, o := range outs {
		if ts.Value == nil {
			if o != nil {
				return true, nil
			}
		} else if s, ok := o.(string); ok && s == *ts.Value {
			return true, nil
		}
	}
	return false, nil
}

// podKey reads one id or key of a pod: exactly one non-empty string or
// number.
func podKey(expr string, pod any) (string, error) {
	outs, err := jq(expr, pod)
	if err != nil {
		return "", err
	}
	if len(outs) != 1 {
		return "", fmt.Errorf("%s yields %d values", expr, len(outs))
	}
	return idString(outs[0])
}
