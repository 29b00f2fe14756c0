package interpreter

import (
	"context"
	"fmt"
	"strings"

	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/internal/jsonpatch"
)

// Revision is one entry of a ReviseSpec call (docs/cli.md `karta revise`).
type Revision struct {
	Component string `json:"component"`
	// Instance is "" (a component without instanceIdPath), an instance id,
	// or "*" for every present instance.
	Instance string `json:"instance"`
	// Type is how Patch applies to the instance's PodTemplateSpec view:
	// PatchMerge (also when empty), PatchStrategic or PatchJSON.
	Type PatchType `json:"type,omitempty"`
	// Patch is, for merge and strategic, an object over the view
	// (map[string]any; a JSON null in it is Go nil); for json, a list of
	// RFC 6902 operations ([]any of map[string]any) whose paths are JSON
	// pointers into the view.
	Patch any `json:"patch"`
}

// PatchOp is one RFC 6902 JSON Patch operation from the input object to a
// revised one.
type PatchOp = jsonpatch.Operation

// The instance name that selects every present instance.
const allInstances = "*"

// reviseSpec applies revisions to obj (docs/karta.md, "The PodTemplateSpec view"; docs/karta.md, "Writes: all or nothing"), all or nothing.
// Each revision's patch, of its type, gives the patched view of each
// instance it names; the differences from the view are written back
// through the component's paths. It returns the revised object, the RFC
// 6902 operations from obj to it, and the warnings of merge patches that
// drop list elements' fields. obj is not modified; the result shares
// every untouched subtree with it, and only the maps and slices on the way
// to a written leaf are copied. Written values are the patches' own, as
// they are. On error (a *ReviseError holding every error found) it
// returns no object and no warnings.
func (m *model) reviseSpec(ctx context.Context, obj map[string]any, revs []Revision) (map[string]any, []PatchOp, []ReviseWarning, error) {
	return m.revise(ctx, nil, obj, revs)
}

// revise is reviseSpec on gojq (dev nil) or on the call's evaluator dev:
// instances with dev.all and locations with jqdirect's Paths, on obj in
// place, each expression the direct form declines evaluated alone on its
// gojq program (eval_direct.go, locator.eval).
func (m *model) revise(ctx context.Context, dev *directEvaluator, obj map[string]any, revs []Revision) (map[string]any, []PatchOp, []ReviseWarning, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	r := &reviser{m: m, ctx: ctx, insts: map[*compModel][]instance{}}
	if dev != nil {
		r.obj, r.ev = obj, dev
	} else {
		r.obj, r.ev = jqvalue.Input(obj), jqValueEvaluator{}
	}
	r.loc = &locator{ctx: ctx, obj: r.obj, dev: dev, cache: map[*jqPath]locResult{}}
	for i := range revs {
		r.revision(i, &revs[i])
	}
	writes := resolveConflicts(r.writes, &r.errs)
	if dev == nil {
		// Values from the instance views are gojq's copies (int, not
		// client-go's int64); what is written must be the object's types.
		for _, w := range writes {
			w.value = jqvalue.Output(w.value)
		}
	}
	result, applyErrs := applyWrites(obj, writes)
	r.errs = append(r.errs, applyErrs...)
	if len(r.errs) > 0 {
		return nil, nil, nil, newReviseError(r.errs)
	}
	return result, writtenOps(obj, result, writes), r.warnings, nil
}

// reviser holds the state of one reviseSpec call.
type reviser struct {
	m      *model
	ctx    context.Context
	obj    any // the object as ev's input
	ev     evaluator
	loc    *locator
	insts  map[*compModel][]instance
	writes []*write
	// writeBuf holds the writes' storage, a chunk at a time; locBuf
	// their locations' (see carve).
	writeBuf []write
	locBuf   []any
	errs     []error
	warnings []ReviseWarning
}

// revision turns one revision into located writes.
func (r *reviser) revision(i int, rev *Revision) {
	fail := func(inst string, err error) {
		r.errs = append(r.errs, &RevisionError{Index: i, Component: rev.Component, Instance: inst, Err: err})
	}
	c := r.m.byName[rev.Component]
	switch {
	case c == nil:
		fail(rev.Instance, fmt.Errorf("unknown component %q (components: %s)", rev.Component, r.m.componentList()))
		return
	case !c.podBearing():
		fail(rev.Instance, fmt.Errorf("component %q is not pod-bearing (it has no specDefinition)", rev.Component))
		return
	}
	pp, err := preparePatch(rev)
	if err != nil {
		fail(rev.Instance, err)
		return
	}
	if errs := c.checkPatchReach(pp); len(errs) > 0 {
		for _, err := range errs {
			fail(rev.Instance, err)
		}
		return
	}
	insts, err := r.instancesOf(c)
	if err != nil {
		// Not the revision's fault, and the same for every revision of c:
		// reported once, unwrapped.
		r.errs = append(r.errs, err)
		return
	}
	selected, err := selectInstances(c, insts, rev.Instance)
	if err != nil {
		fail(rev.Instance, err)
		return
	}
	for _, inst := range selected {
		for _, err := range r.reviseInstance(i, c, inst, pp) {
			fail(inst.id, err)
		}
	}
}

func (r *reviser) instancesOf(c *compModel) ([]instance, error) {
	if insts, ok := r.insts[c]; ok {
		return insts, nil
	}
	insts, err := r.m.instancesWith(r.ctx, r.ev, c, r.obj)
	if err != nil {
		return nil, err
	}
	r.insts[c] = insts
	return insts, nil
}

// selectInstances resolves a revision's instance (docs/karta.md, "The PodTemplateSpec view").
func selectInstances(c *compModel, insts []instance, name string) ([]*instance, error) {
	if name == allInstances {
		var out []*instance
		for i := range insts {
			if insts[i].present {
				out = append(out, &insts[i])
			}
		}
		return out, nil
	}
	if name == "" && c.ids != nil {
		return nil, fmt.Errorf("component %q has an instanceIdPath: name an instance (%s) or %q", c.c.Name, idList(insts), allInstances)
	}
	for i := range insts {
		if insts[i].id != name {
			continue
		}
		if !insts[i].present {
			return nil, fmt.Errorf("instance %q of component %q is absent (its %s is null)", name, c.c.Name, c.spec.field)
		}
		return []*instance{&insts[i]}, nil
	}
	return nil, fmt.Errorf("component %q has no instance %q (instances: %s)", c.c.Name, name, idList(insts))
}

// reviseInstance diffs the instance's view against the patched view and
// locates each change.
func (r *reviser) reviseInstance(rev int, c *compModel, inst *instance, pp preparedPatch) []error {
	v, fv, err := c.view(inst)
	if err != nil {
		return []error{err}
	}
	rt := &router{r: r, c: c, inst: inst, fv: fv, view: v,
		src: WriteRef{Revision: rev, Component: c.c.Name, Instance: inst.id}}
	keepMain := fv != nil && fv.hasMain
	var patched map[string]any
	var changes []change
	if pp.typ == PatchMerge && !keepMain {
		// The same changes, without the patched view.
		changes = mergeDiff(v, pp.obj)
	} else {
		if patched, err = c.patchInstanceView(pp, v, fv); err != nil {
			return []error{err}
		}
		changes = diff(v, patched, nil, jsonEqual, nil)
	}
	if pp.typ == PatchMerge {
		r.warnings = append(r.warnings, mergeWarnings(v, pp.obj, rt.src)...)
	}
	for _, ch := range changes {
		rt.route(ch)
	}
	if keepMain && len(rt.errs) == 0 {
		rt.checkMainKept(patched)
	}
	return rt.errs
}

func (m *model) componentList() string {
	names := make([]string, len(m.comps))
	for i, c := range m.comps {
		names[i] = c.c.Name
	}
	return strings.Join(names, ", ")
}

func idList(insts []instance) string {
	if len(insts) == 0 {
		return "none"
	}
	ids := make([]string, len(insts))
	for i := range insts {
		ids[i] = fmt.Sprintf("%q", insts[i].id)
	}
	return strings.Join(ids, ", ")
}

// newWrite returns storage for one write, from a chunk of eight.
func (r *reviser) newWrite() *write {
	if len(r.writeBuf) == cap(r.writeBuf) {
		r.writeBuf = make([]write, 0, 8)
	}
	r.writeBuf = r.writeBuf[:len(r.writeBuf)+1]
	return &r.writeBuf[len(r.writeBuf)-1]
}
