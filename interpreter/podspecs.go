package interpreter

import (
	"context"
	"fmt"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/karta"
)

// podSpecs is GetPodSpecs: one item per present instance of each
// pod-bearing component, components in Karta order, instances in id order.
// Values are the object's own Go values, type-checked, never copied.
func (p *Program) podSpecs(ctx context.Context, ev evaluator, obj map[string]any) (*PodSpecs, error) {
	// Room for an item per pod-bearing component, the common case, at
	// once rather than grown by appending (never nil: no item is []).
	res := &PodSpecs{Items: make([]PodSpecItem, 0, p.model.podBearing)}
	// One instance buffer for the call: a component's instances are done
	// with once its items are built (an item copies what it keeps), so
	// the next component's go in the same room (Milvus: six components,
	// a slice each before).
	var buf []instance
	for _, c := range p.model.comps {
		if !c.podBearing() {
			continue
		}
		insts, err := p.model.instancesInto(ctx, ev, c, obj, buf, everyInstancePath)
		if err != nil {
			return nil, err
		}
		buf = insts[:0]
		if c.absent(len(insts)) {
			continue // absent (instancesInto): its views and scales give nothing either
		}
		if err := applyViews(ctx, ev, c, obj, insts); err != nil {
			return nil, err
		}
		scales, err := p.scales(ctx, ev, c, obj, insts, everyScalePath)
		if err != nil {
			return nil, err
		}
		for i, in := range insts {
			if !in.present {
				continue
			}
			item, err := podSpecItem(c, in)
			if err != nil {
				return nil, err
			}
			item.Scale = scales[i]
			res.Items = append(res.Items, item)
		}
	}
	return res, nil
}

// applyViews replaces the values the paths read with those the
// component's view computes, for the present instances; presence stays the
// paths' (docs/karta.md, "Views"). Each view yields one value per instance.
func applyViews(ctx context.Context, ev evaluator, c *compModel, obj map[string]any, insts []instance) error {
	for _, v := range c.views {
		outs, err := ev.all(ctx, v.value, obj)
		if err != nil {
			return fmt.Errorf("component %q: %s: %w", c.c.Name, v.field, err)
		}
		if len(outs) != len(insts) {
			return zipError(c.c.Name, v.field, len(outs), instanceIDList(insts))
		}
		for i := range insts {
			in := &insts[i]
			if !in.present {
				continue
			}
			switch v.key {
			case "podTemplateSpec", "podSpec":
				in.spec = outs[i]
			case "metadata":
				in.meta = outs[i]
			default:
				in.fragments[v.slot] = outs[i]
			}
		}
	}
	return nil
}

// specField names the field GetPodSpecs read key from: the view's, when
// the component has one for key, else path.
func (c *compModel) specField(key, path string) string {
	for _, v := range c.views {
		if v.key == key {
			return v.field
		}
	}
	return path
}

// podSpecItem builds the item of one present instance, checking the JSON
// types of its values (typecheck.go).
func podSpecItem(c *compModel, in instance) (PodSpecItem, error) {
	item := PodSpecItem{Component: c.c.Name, Instance: in.id}
	where := func(field string) string {
		return fmt.Sprintf("component %q instance %q: %s", c.c.Name, in.id, field)
	}
	var err error
	// The checks that pass build no message: where() runs on failure only.
	switch c.style {
	case karta.SpecStylePodTemplateSpec:
		var ok bool
		if item.PodTemplateSpec, ok = in.spec.(map[string]any); !ok {
			item.PodTemplateSpec, err = asObject(in.spec, where(c.specField("podTemplateSpec", "podTemplateSpecPath")))
		}
	case karta.SpecStylePodSpec:
		var ok bool
		if item.PodSpec, ok = in.spec.(map[string]any); !ok {
			item.PodSpec, err = asObject(in.spec, where(c.specField("podSpec", "podSpecPath")))
		}
		if err == nil && (c.meta != nil || in.meta != nil) {
			if item.Metadata, ok = in.meta.(map[string]any); !ok {
				item.Metadata, err = asObjectOrNull(in.meta, where(c.specField("metadata", "metadataPath")))
			}
		}
	case karta.SpecStyleFragmented:
		item.Fragmented, err = fragmented(c, in, where)
	}
	return item, err
}

// fragmented builds the fragments of an instance; a fragment is absent when
// neither its path nor a view defines it, or its value is null. The checks
// that pass build no message: a failed one runs again with where its
// value came from (a Milvus call checks some forty fragments).
func fragmented(c *compModel, in instance, where func(string) string) (*Fragmented, error) {
	f := &Fragmented{}
	for _, fm := range c.reported {
		v := in.fragments[fm.slot]
		if v == nil {
			continue
		}
		if err := setFragment(f, fm.key, v, ""); err != nil {
			return nil, setFragment(&Fragmented{}, fm.key, v, where(fm.field))
		}
	}
	return f, nil
}

// setFragment checks the value of the fragment key and sets it on f; at
// names it in the error.
func setFragment(f *Fragmented, key string, v any, at string) error {
	var err error
	switch key {
	case "schedulerName":
		f.SchedulerName, err = asString(v, at)
	case "priorityClassName":
		f.PriorityClassName, err = asString(v, at)
	case "image":
		f.Image, err = asString(v, at)
	case "labels":
		f.Labels, err = asStringMap(v, at)
	case "annotations":
		f.Annotations, err = asStringMap(v, at)
	case "resources":
		f.Resources, err = asObject(v, at)
	case "podAffinity":
		f.PodAffinity, err = asObject(v, at)
	case "nodeAffinity":
		f.NodeAffinity, err = asObject(v, at)
	case "container":
		f.Container, err = asObject(v, at)
	case "containers":
		f.Containers, err = asArray(v, at)
	case "initContainers":
		f.InitContainers, err = asArray(v, at)
	case "resourceClaims":
		f.ResourceClaims, err = asArray(v, at)
	}
	return err
}

// scaleProgram holds a component's scale paths compiled once.
type scaleProgram struct {
	replicas, min, max *jqProgram
}

// scaleReading says which of a scale definition's paths a caller reads.
type scaleReading bool

const (
	// everyScalePath reads replicas, min and max (GetPodSpecs' Scale).
	everyScalePath scaleReading = false
	// replicasOnly reads the replicas path alone: what Karmada's replica
	// operations and their export read, so that a min or max path they
	// do not use cannot fail them.
	replicasOnly scaleReading = true
)

// scales evaluates a component's scale definition per instance:
// nil without one (or with {}), else each path read zipped with the ids
// and converted by scaleValue's rules (scaleInt), for the present
// instances (an absent one's count is not read, as the exports do not
// read it).
func (p *Program) scales(ctx context.Context, ev evaluator, c *compModel, obj map[string]any, insts []instance, read scaleReading) ([]*Scale, error) {
	sp := c.scale
	if sp == nil {
		return make([]*Scale, len(insts)), nil
	}
	// One allocation for the scales and their counts: a Milvus call reads
	// some fifteen, each its own int64 before; and for the one instance
	// most components have, the slice of its pointer in it too.
	var out []*Scale
	var room []scaleRoom
	if len(insts) == 1 {
		one := &oneScale{}
		out, room = one.out[:], one.room[:]
	} else {
		out, room = make([]*Scale, len(insts)), make([]scaleRoom, len(insts))
	}
	for i := range out {
		out[i] = &room[i].s
	}
	for k, f := range [...]struct {
		field string
		prog  *jqProgram
	}{
		{"replicasPath", sp.replicas},
		{"minReplicasPath", sp.min},
		{"maxReplicasPath", sp.max},
	} {
		if f.prog == nil || read == replicasOnly && f.prog != sp.replicas {
			continue
		}
		vals, err := ev.all(ctx, f.prog, obj)
		if err != nil {
			return nil, fmt.Errorf("component %q: %s: %w", c.c.Name, f.field, err)
		}
		if len(vals) != len(insts) {
			return nil, zipError(c.c.Name, f.field, len(vals), instanceIDList(insts))
		}
		for i, v := range vals {
			if !insts[i].present {
				continue // no pods: its count is nobody's answer
			}
			n, ok, err := scaleInt(v)
			if err != nil {
				return nil, fmt.Errorf("component %q instance %q: %s %s: %w", c.c.Name, insts[i].id, f.field, oneLine(f.prog.expr), err)
			}
			if !ok {
				continue // null: no count
			}
			r := &room[i]
			r.n[k] = n
			switch k {
			case 0:
				r.s.Replicas = &r.n[k]
			case 1:
				r.s.MinReplicas = &r.n[k]
			default:
				r.s.MaxReplicas = &r.n[k]
			}
		}
	}
	return out, nil
}

// scaleRoom is one instance's Scale with room for its three counts.
type scaleRoom struct {
	s Scale
	n [3]int64
}

// oneScale is the scales of a component of one instance in one
// allocation: the slice scales returns and the Scale it points to.
type oneScale struct {
	out  [1]*Scale
	room [1]scaleRoom
}

// compileScale compiles a scale definition's paths; nil when there is
// none or it is empty ({} defines nothing).
func compileScale(x *exprTable, sd *karta.ScaleDefinition) (*scaleProgram, error) {
	if sd == nil || sd.IsEmpty() {
		return nil, nil
	}
	sp := &scaleProgram{}
	for _, f := range []struct {
		field, expr string
		dst         **jqProgram
	}{
		{"replicasPath", sd.ReplicasPath, &sp.replicas},
		{"minReplicasPath", sd.MinReplicasPath, &sp.min},
		{"maxReplicasPath", sd.MaxReplicasPath, &sp.max},
	} {
		if f.expr == "" {
			continue
		}
		prog, err := x.compile(f.expr)
		if err != nil {
			return nil, fmt.Errorf("scaleDefinition.%s: %w", f.field, err)
		}
		*f.dst = prog
	}
	return sp, nil
}

// guardedByIDs reports that every program GetPodSpecs evaluates for the
// component gives no output (and cannot fail) when its instanceIdPath
// gives none, so that an absent component's programs need not run: the
// instanceIdPath is `Q | literal` (one id per output of Q: `.spec |
// select(.worker == null) | "main"`), and every other program — spec,
// metadata, fragments, views, scale paths — begins with Q's segments
// (`.spec | select(.worker == null) | .labels`). Q is pure, so on the same
// object and variables it gives no output there either, and a pipe whose
// left side gives none runs nothing on its right.
// idsFromReferences reports whether the component's instanceIdPath reads
// nothing of the object (only references and constants): the trainjob
// built-in's job, whose instances are its runtime's replicated jobs.
func (cm *compModel) idsFromReferences() bool {
	if cm.ids == nil || !cm.podBearing() {
		return false
	}
	a, err := cm.exprs.analysis(cm.ids.expr)
	if err != nil || a.Query == nil || len(a.Vars) == 0 {
		return false
	}
	return !jqexpr.ReadsInput(a.Query)
}

func (cm *compModel) guardedByIDs() bool {
	if cm.ids == nil || !cm.podBearing() {
		return false
	}
	segs, a, err := cm.exprs.segments(cm.ids.expr)
	if err != nil {
		return false
	}
	if len(segs) < 2 || !literalTerm(lastOfChain(a.Query)) {
		return false
	}
	guard := segs[:len(segs)-1]
	var progs []*jqProgram
	if cm.spec != nil {
		progs = append(progs, cm.spec.value)
	}
	if cm.meta != nil {
		progs = append(progs, cm.meta.value)
	}
	for _, f := range cm.fragments {
		progs = append(progs, f.p.value)
	}
	for _, v := range cm.views {
		progs = append(progs, v.value)
	}
	if sp := cm.scale; sp != nil {
		for _, p := range []*jqProgram{sp.replicas, sp.min, sp.max} {
			if p != nil {
				progs = append(progs, p)
			}
		}
	}
	for _, p := range progs {
		ps, _, err := cm.exprs.segments(p.expr)
		if err != nil {
			return false
		}
		if len(ps) < len(guard) {
			return false
		}
		for i, sg := range guard {
			if ps[i].Text != sg.Text {
				return false
			}
		}
	}
	return true
}

// lastOfChain is the last query of q's pipe chain (q is s1 | … | sn),
// as jqdirect.Segments walks it.
func lastOfChain(q *gojq.Query) *gojq.Query {
	for q != nil && q.Op == gojq.OpPipe && len(q.Patterns) == 0 && len(q.FuncDefs) == 0 &&
		q.Meta == nil && len(q.Imports) == 0 && q.Left != nil && q.Right != nil {
		q = q.Right
	}
	return q
}

// literalTerm reports that q is a string or number literal: one output
// on any input, never an error.
func literalTerm(q *gojq.Query) bool {
	if q == nil || q.Term == nil || q.Left != nil || q.Right != nil || len(q.Patterns) > 0 ||
		len(q.FuncDefs) > 0 || len(q.Term.SuffixList) > 0 {
		return false
	}
	switch q.Term.Type {
	case gojq.TermTypeString:
		return q.Term.Str != nil && q.Term.Str.Queries == nil
	case gojq.TermTypeNumber:
		return true
	}
	return false
}
