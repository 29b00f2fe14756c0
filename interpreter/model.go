package interpreter

import (
	"context"
	"fmt"
	"sync"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/third_party/gojq"

	"github.com/kartalua/karta/karta"
)

// model is the compiled Go form of a Karta that the write engine
// (ReviseSpec, ReviseReplica, Suspend, Resume) runs on. Every jq program it
// needs, in value and in path() form, is compiled once by newModel, so that
// nothing is parsed on the evaluation path (docs/architecture.md, "The jq
// core"). A model is
// immutable and safe for concurrent use.
type model struct {
	karta *karta.Karta
	name  string
	// comps are in Karta order: the root, then the children as declared.
	comps  []*compModel
	byName map[string]*compModel
	// podBearing is how many of comps are pod-bearing: GetPodSpecs' room
	// for an item each, the common case.
	podBearing int
	// exprs are the checked Karta's expressions, compiled once.
	exprs *exprTable
}

// compModel is one component of a model.
type compModel struct {
	c        *karta.Component
	exprs    *exprTable
	index    int
	parent   *compModel
	children []*compModel
	style    karta.SpecStyle

	// ids is the instanceIdPath, nil without one.
	ids *jqProgram
	// spec is the podTemplateSpecPath or the podSpecPath; meta the
	// metadataPath. Nil when not defined.
	spec, meta *jqPath
	// fragments are the defined fragment paths, in Fragments() order.
	fragments []fragModel
	// views are the specDefinition's view expressions, in Views() order:
	// what GetPodSpecs reports in place of the paths' values.
	views []viewModel
	// reported are the fragments GetPodSpecs reports, a path's or a
	// view's, in Fragments() order, each with the field that computes it.
	reported []reportedFragment
	// nodes are the places of the PodTemplateSpec view the component
	// writes through; nil when it is not pod-bearing.
	nodes []viewNode
	// replicas is the scaleDefinition's replicasPath, nil when not defined.
	replicas *jqPath
	// scale holds the scale paths' value programs, nil without a scale
	// definition (or with {}); GetPodSpecs, minMember and the Karmada
	// hooks all read them.
	scale *scaleProgram
	// suspend and resume are the suspendDefinition's actions.
	suspend, resume []actionModel
	// idsFromRefs: its instanceIdPath reads references and nothing of
	// the object (idsFromReferences, podspecs.go; ComponentShape's
	// IDsFromReferences, from which the exports decide the same).
	idsFromRefs bool
	// emptyWithoutIDs: with no instance id the component's other programs
	// are not run. Either they would give no output anyway
	// (guardedByIDs, podspecs.go), or its ids come from references alone
	// (idsFromRefs): such a component without ids is what an export, which
	// cannot read references, has of it — no instance and nothing else
	// read (luaexport's NoInstances) — so a template path that fails on
	// the object does not fail the call in process either.
	emptyWithoutIDs bool
}

// absent reports whether n instance ids, read of c, mean the component
// is absent: none, where emptyWithoutIDs says its other programs are not
// run. instancesInto stops there, and each caller that goes on to views
// and scales asks the same, so the rule is said once.
func (c *compModel) absent(n int) bool {
	return n == 0 && c.emptyWithoutIDs
}

// jqPath is one path field of a component, compiled as a value program
// (EXPR) and as a location program (path(EXPR)).
type jqPath struct {
	// field names the Karta field in messages, e.g. "podTemplateSpecPath".
	field string
	expr  string
	value *jqProgram
	// presence is value for presence only, nil when value builds nothing
	// it outputs (presenceProgram); set on the spec paths alone.
	presence *jqProgram
	// pathQuery is path(EXPR), compiled by pathProgram on the first write
	// through the path: most Programs never write, and gojq compiling
	// path() of every path at Compile was a third of a Compile's
	// allocations. path(EXPR) compiles whenever EXPR does (path adds no
	// name, and gojq reports bad paths when they run), so deferring it
	// defers no error.
	pathQuery *gojq.Query
	// vars are the variables EXPR is compiled with (the Karta's
	// references): a write path may read them (`select($rt == null) |
	// .spec.x`), and path(EXPR) runs with the call's values (jqvars).
	vars     []string
	pathOnce sync.Once
	path     *jqProgram
	pathErr  error
	// notAssignable says why EXPR cannot be written through
	// (jqexpr.Assignable), "" when it can. Reads do not care; writes
	// fail with it.
	notAssignable string
}

// fragModel is one defined path of a fragmented pod spec definition.
type fragModel struct {
	key  string // the GetPodSpecs key, e.g. "labels"
	slot int    // the key's slot in fragValues
	p    *jqPath
}

// reportedFragment is a fragment GetPodSpecs reports and the field, a path
// or a view, it comes from (for messages).
type reportedFragment struct {
	key, field string
	slot       int // the key's slot in fragValues
}

// viewModel is one expression of a specDefinition's view.
type viewModel struct {
	key   string // the GetPodSpecs key, e.g. "podTemplateSpec" or "image"
	slot  int    // a fragment key's slot in fragValues, else -1
	field string // the Karta field in messages, e.g. "view.image"
	value *jqProgram
}

// actionModel is one suspend or resume action with its decoded value.
type actionModel struct {
	p     *jqPath
	value any
}

// newModel compiles k. It fails when an expression does not compile or a
// suspend value is not JSON; validation reports both earlier, with field
// paths, so this is a guard rather than the user's first notice.
func newModel(checked *karta.Checked) (*model, error) {
	k := checked.Karta
	m := &model{karta: k, name: k.Name, byName: map[string]*compModel{}, exprs: newExprTable(checked)}
	for i, c := range k.Spec.StructureDefinition.Components() {
		cm, err := newCompModel(m.exprs, c, i)
		if err != nil {
			return nil, fmt.Errorf("karta %q: component %q: %w", k.Name, c.Name, err)
		}
		if _, dup := m.byName[c.Name]; dup {
			return nil, fmt.Errorf("karta %q: duplicate component %q", k.Name, c.Name)
		}
		m.comps = append(m.comps, cm)
		m.byName[c.Name] = cm
		if cm.podBearing() {
			m.podBearing++
		}
	}
	for _, cm := range m.comps[min(1, len(m.comps)):] {
		if cm.c.OwnerRef == nil {
			continue
		}
		parent, ok := m.byName[*cm.c.OwnerRef]
		if !ok {
			return nil, fmt.Errorf("karta %q: component %q: unknown ownerRef %q", k.Name, cm.c.Name, *cm.c.OwnerRef)
		}
		cm.parent = parent
		parent.children = append(parent.children, cm)
	}
	return m, nil
}

func newCompModel(x *exprTable, c *karta.Component, index int) (*compModel, error) {
	cm := &compModel{c: c, index: index, exprs: x}
	var err error
	if c.InstanceIDPath != "" {
		if cm.ids, err = x.compile(c.InstanceIDPath); err != nil {
			return nil, fmt.Errorf("instanceIdPath: %w", err)
		}
	}
	if c.SpecDefinition != nil {
		if err := cm.compileSpec(c.SpecDefinition); err != nil {
			return nil, err
		}
	}
	if c.ScaleDefinition != nil && c.ScaleDefinition.ReplicasPath != "" {
		if cm.replicas, err = cm.exprs.path("replicasPath", c.ScaleDefinition.ReplicasPath); err != nil {
			return nil, err
		}
	}
	if cm.scale, err = compileScale(x, c.ScaleDefinition); err != nil {
		return nil, err
	}
	cm.idsFromRefs = cm.idsFromReferences()
	cm.emptyWithoutIDs = cm.guardedByIDs() || cm.idsFromRefs
	if sd := c.SuspendDefinition; sd != nil {
		if cm.suspend, err = compileActions(x, "suspendActions", sd.SuspendActions); err != nil {
			return nil, err
		}
		if cm.resume, err = compileActions(x, "resumeActions", sd.ResumeActions); err != nil {
			return nil, err
		}
	}
	return cm, nil
}

func (cm *compModel) compileSpec(sd *karta.SpecDefinition) error {
	var err error
	cm.style = sd.Style()
	switch cm.style {
	case karta.SpecStylePodTemplateSpec:
		cm.spec, err = cm.exprs.path("podTemplateSpecPath", sd.PodTemplateSpecPath)
	case karta.SpecStylePodSpec:
		if cm.spec, err = cm.exprs.path("podSpecPath", sd.PodSpecPath); err != nil {
			return err
		}
		if sd.MetadataPath != "" {
			cm.meta, err = cm.exprs.path("metadataPath", sd.MetadataPath)
		}
	case karta.SpecStyleFragmented:
		for _, f := range sd.FragmentedPodSpecDefinition.Fragments() {
			if f.Path == "" {
				continue
			}
			p, err := cm.exprs.path(f.Field, f.Path)
			if err != nil {
				return err
			}
			cm.fragments = append(cm.fragments, fragModel{key: f.Key, slot: fragSlot(f.Key), p: p})
		}
	}
	if err != nil {
		return err
	}
	if cm.spec != nil {
		cm.spec.presence = presenceProgram(cm.spec.value)
	}
	if err := cm.compileViews(sd.View); err != nil {
		return err
	}
	cm.nodes = cm.viewNodes()
	return nil
}

// compileViews compiles a view's expressions, and lists the fragments
// GetPodSpecs reports: those of a path, and those a view computes alone
// (a main container no path holds).
func (cm *compModel) compileViews(v *karta.SpecView) error {
	views := map[string]bool{}
	if v != nil {
		for _, e := range v.Views() {
			if e.Path == "" {
				continue
			}
			prog, err := cm.exprs.compile(e.Path)
			if err != nil {
				return fmt.Errorf("view.%s: %w", e.Field, err)
			}
			cm.views = append(cm.views, viewModel{key: e.Key, slot: fragSlot(e.Key), field: "view." + e.Field, value: prog})
			views[e.Key] = true
		}
	}
	if cm.style != karta.SpecStyleFragmented {
		return nil
	}
	paths := map[string]string{}
	for _, f := range cm.fragments {
		paths[f.key] = f.p.field
	}
	for _, f := range (&karta.FragmentedPodSpecDefinition{}).Fragments() {
		switch {
		case views[f.Key]:
			cm.reported = append(cm.reported, reportedFragment{key: f.Key, field: "view." + f.Key, slot: fragSlot(f.Key)})
		case paths[f.Key] != "":
			cm.reported = append(cm.reported, reportedFragment{key: f.Key, field: paths[f.Key], slot: fragSlot(f.Key)})
		}
	}
	return nil
}

func compileActions(x *exprTable, field string, actions []karta.SuspendAction) ([]actionModel, error) {
	out := make([]actionModel, 0, len(actions))
	for i := range actions {
		name := fmt.Sprintf("%s[%d].path", field, i)
		p, err := x.path(name, actions[i].Path)
		if err != nil {
			return nil, err
		}
		v, err := actions[i].DecodedValue()
		if err != nil {
			return nil, fmt.Errorf("%s[%d].value: %w", field, i, err)
		}
		out = append(out, actionModel{p: p, value: v})
	}
	return out, nil
}

// compilePath compiles expr in both forms. path(EXPR) is built on the
// parsed syntax tree rather than by pasting text, so that a trailing
// comment or an odd token in expr cannot change what is compiled.
func (x *exprTable) path(field, expr string) (*jqPath, error) {
	value, err := x.compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	a, err := x.analysis(expr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	q := a.Query
	p := &jqPath{field: field, expr: expr, value: value, vars: a.Vars}
	if ok, reason := a.Assignable(); !ok {
		p.notAssignable = reason
		return p, nil
	}
	// Writes go through the path without its defaults (`.spec.replicas //
	// 1` writes .spec.replicas; jqexpr.WritePath).
	p.pathQuery = &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc,
		Func: &gojq.Func{Name: "path", Args: []*gojq.Query{jqexpr.WritePath(q)}}}}
	return p, nil
}

// pathProgram is path(EXPR), compiled once, on first use.
func (p *jqPath) pathProgram() (*jqProgram, error) {
	p.pathOnce.Do(func() {
		code, err := gojq.Compile(p.pathQuery, gojq.WithVariables(p.vars))
		if err != nil {
			p.pathErr = fmt.Errorf("%s: jq path(%s): %w", p.field, p.expr, err)
			return
		}
		p.path = &jqProgram{expr: "path(" + p.expr + ")", code: func() *gojq.Code { return code }}
	})
	return p.path, p.pathErr
}

// podBearing reports whether the component has a spec definition.
func (cm *compModel) podBearing() bool { return cm.style != karta.SpecStyleNone }

// instance is one instance of a component on an object.
type instance struct {
	id      string
	index   int
	present bool
	// spec is the template or pod spec, meta the metadata (nil without a
	// metadataPath); fragments holds each defined fragment's value.
	spec      any
	meta      any
	fragments fragValues
	// sourcesOnly says only the dependencyFragments were read: the view's
	// main container is containerPath's object as it is, not overlaid
	// with the image and resources paths, which were not evaluated.
	sourcesOnly bool
}

// instances resolves the instances of c on obj: the ids (the
// single id "" without an instanceIdPath), the spec, metadata and fragment
// values zipped with them by position, and presence. obj must be a jq
// value (see jqInput).
func (m *model) instances(ctx context.Context, c *compModel, obj any) ([]instance, error) {
	return m.instancesWith(ctx, jqValueEvaluator{}, c, obj)
}

// singleInstance is the ids of a component without an instanceIdPath: the
// one id "". Shared, so never modified.
var singleInstance = []string{""}

// instancesWith is instances with the jq paths evaluated by ev (the
// call's evaluator inside a hook).
func (m *model) instancesWith(ctx context.Context, ev evaluator, c *compModel, obj any) ([]instance, error) {
	return m.instancesInto(ctx, ev, c, obj, nil, everyInstancePath)
}

// instanceReading says which of a component's per-instance paths a
// caller reads.
type instanceReading uint8

const (
	// everyInstancePath reads the ids, the spec, metadata and every
	// fragment path: what GetPodSpecs reports and revisions write.
	everyInstancePath instanceReading = iota
	// presenceOnly reads the ids and what presence depends on (the
	// podTemplateSpecPath or podSpecPath), nothing else of the spec
	// definition: what placing pods needs (GetGangGroups, PlacePod,
	// PlacePods), so that a gang hook does not compute a Flink
	// container's resources or Milvus' eight fragments per component to
	// throw them away — nor fails where only those fail.
	presenceOnly
	// dependencySources reads what everyInstancePath does except the
	// fragments that can name no dependency (dependencyFragment): what
	// Karmada's GetDependencies reads of a view.
	dependencySources
)

// instancesInto is instancesWith appending to buf[:0] (its room reused),
// reading the paths read says.
func (m *model) instancesInto(ctx context.Context, ev evaluator, c *compModel, obj any, buf []instance, read instanceReading) ([]instance, error) {
	name := c.c.Name
	ids := singleInstance
	if c.ids != nil {
		outs, err := ev.all(ctx, c.ids, obj)
		if err != nil {
			return nil, fmt.Errorf("component %q: instanceIdPath: %w", name, err)
		}
		if ids, err = instanceIDs(name, outs); err != nil {
			return nil, err
		}
		if c.absent(len(ids)) {
			// An absent component (four of LLMInferenceService's seven, a
			// Milvus cluster's standalone): its other programs would each
			// give no output, which zips with no id; they are not run.
			return buf[:0], nil
		}
	}
	insts := buf[:0]
	if cap(insts) < len(ids) {
		insts = make([]instance, 0, len(ids))
	}
	for i, id := range ids {
		insts = append(insts, instance{id: id, index: i, present: true})
	}
	zip := func(p *jqPath) ([]any, error) {
		outs, err := ev.all(ctx, p.reading(read), obj)
		if err != nil {
			return nil, fmt.Errorf("component %q: %s: %w", name, p.field, err)
		}
		if len(outs) != len(ids) {
			return nil, zipError(name, p.field, len(outs), ids)
		}
		return outs, nil
	}
	switch c.style {
	case karta.SpecStylePodTemplateSpec, karta.SpecStylePodSpec:
		specs, err := zip(c.spec)
		if err != nil {
			return nil, err
		}
		var metas []any
		if c.meta != nil && read != presenceOnly {
			if metas, err = zip(c.meta); err != nil {
				return nil, err
			}
		}
		for i := range insts {
			insts[i].spec = specs[i]
			// A null template or pod spec is an absent instance, e.g. a
			// PyTorchJob without a Master.
			insts[i].present = specs[i] != nil
			if metas != nil {
				insts[i].meta = metas[i]
			}
		}
	case karta.SpecStyleFragmented:
		if read == presenceOnly {
			break // a fragmented instance is always present
		}
		room := newFragValues(len(insts))
		for i := range insts {
			insts[i].fragments = fragValuesAt(room, i)
			insts[i].sourcesOnly = read == dependencySources
		}
		for _, f := range c.fragments {
			if read == dependencySources && !dependencyFragment(f.key) {
				continue // left null: the view leaves its node out
			}
			vals, err := zip(f.p)
			if err != nil {
				return nil, err
			}
			for i := range insts {
				insts[i].fragments[f.slot] = vals[i]
			}
		}
	}
	return insts, nil
}
