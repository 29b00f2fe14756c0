package interpreter

import (
	"context"
	"fmt"
	"github.com/kartalua/karta/internal/jqvalue"
	"maps"
	"slices"
)

// suspend applies every component's suspendActions, or resumeActions when
// resume is set, in Karta order. Each action assigns its value
// to every location its path yields, as jq's `PATH = value` does: the
// locations come from path() on the object as the earlier actions left it,
// and are set one after the other. A path that is not assignable, fails,
// or yields no location is an error. All errors are reported together and
// the object is unchanged; obj is never modified.
func (m *model) suspend(ctx context.Context, obj map[string]any, resume bool) (map[string]any, []PatchOp, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	hook, field := HookSuspend, "suspendActions"
	if resume {
		hook, field = HookResume, "resumeActions"
	}
	defined := false
	cur := obj
	var errs []error
	for _, c := range m.comps {
		if c.c.SuspendDefinition == nil {
			continue
		}
		defined = true
		actions := c.suspend
		if resume {
			actions = c.resume
		}
		for i, a := range actions {
			src := WriteRef{Revision: -1, Component: c.c.Name, ViewPath: fmt.Sprintf("%s[%d]", field, i)}
			next, err := assign(ctx, c, a.p, cur, a.value, src, -1)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			cur = next
		}
	}
	if !defined {
		return nil, nil, &NotDefinedError{Karta: m.name, Hook: hook, Reason: "no component has a suspendDefinition"}
	}
	if len(errs) > 0 {
		return nil, nil, newReviseError(errs)
	}
	return cur, diffOps(obj, cur), nil
}

// assign sets value at every location p yields on obj, in order, and
// returns the new object. With want >= 0 the path must yield exactly that
// many locations, else at least one.
func assign(ctx context.Context, c *compModel, p *jqPath, obj map[string]any, value any, src WriteRef, want int) (map[string]any, error) {
	if p.notAssignable != "" {
		return nil, &PathError{Component: c.c.Name, Field: p.field, Expr: p.expr, Reason: p.notAssignable}
	}
	prog, err := p.pathProgram()
	if err != nil {
		return nil, err
	}
	in := jqvalue.Input(obj)
	outs, err := prog.all(ctx, in)
	if err != nil {
		return nil, pathFailure(c, p, err)
	}
	switch {
	case want >= 0 && len(outs) != want:
		return nil, fmt.Errorf("component %q: %s %q yields %d location(s), not %d", c.c.Name, p.field, p.expr, len(outs), want)
	case len(outs) == 0:
		return nil, fmt.Errorf("component %q: %s %q yields no location", c.c.Name, p.field, p.expr)
	}
	cur := obj
	for _, o := range outs {
		raw, _ := o.([]any)
		loc, err := resolveLoc(cur, raw) // only the shape matters here
		if err != nil {
			return nil, fmt.Errorf("component %q: %s %q: %w", c.c.Name, p.field, p.expr, err)
		}
		if len(loc) == 0 {
			return nil, fmt.Errorf("component %q: %s %q: the whole object cannot be replaced", c.c.Name, p.field, p.expr)
		}
		// Each location gets its own copy: results must not share
		// containers with the model, which outlives them.
		next, errs := applyWrites(cur, []*write{{src: src, loc: loc, value: deepCopyJSON(value)}})
		if len(errs) > 0 {
			return nil, errs[0]
		}
		cur = next
	}
	return cur, nil
}

// reviseReplica writes the integer n through a replicasPath:
// the root's if it has one, otherwise that of the only pod-bearing
// component when it has a single instance. The path must be assignable
// and yield exactly one location.
func (m *model) reviseReplica(ctx context.Context, obj map[string]any, n int64) (map[string]any, []PatchOp, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	c, err := m.replicaComponent()
	if err != nil {
		return nil, nil, err
	}
	if n < 0 || n > maxReplicas {
		return nil, nil, fmt.Errorf("karta %q: ReviseReplica: %d is out of range 0…%d", m.name, n, maxReplicas)
	}
	if c.index > 0 && c.ids != nil {
		insts, err := m.instances(ctx, c, jqvalue.Input(obj))
		if err != nil {
			return nil, nil, err
		}
		if len(insts) != 1 {
			return nil, nil, fmt.Errorf("karta %q: ReviseReplica: component %q has %d instances (%s), not one",
				m.name, c.c.Name, len(insts), idList(insts))
		}
	}
	src := WriteRef{Revision: -1, Component: c.c.Name, ViewPath: "replicasPath"}
	out, err := assign(ctx, c, c.replicas, obj, n, src, 1)
	if err != nil {
		return nil, nil, newReviseError([]error{err})
	}
	return out, diffOps(obj, out), nil
}

// replicaComponent picks the component whose replicasPath ReviseReplica
// writes; the choice depends on the Karta only.
func (m *model) replicaComponent() (*compModel, error) {
	notDefined := func(format string, args ...any) error {
		return &NotDefinedError{Karta: m.name, Hook: HookReviseReplica, Reason: fmt.Sprintf(format, args...)}
	}
	var c *compModel
	if len(m.comps) > 0 && m.comps[0].replicas != nil {
		c = m.comps[0]
	} else {
		var bearing []*compModel
		for _, cm := range m.comps {
			if cm.podBearing() {
				bearing = append(bearing, cm)
			}
		}
		switch {
		case len(bearing) != 1:
			return nil, notDefined("the root has no replicasPath and there are %d pod-bearing components, not one", len(bearing))
		case bearing[0].replicas == nil:
			return nil, notDefined("the root has no replicasPath, nor has component %q", bearing[0].c.Name)
		}
		c = bearing[0]
	}
	if r := c.replicas; r.notAssignable != "" {
		return nil, notDefined("component %q: replicasPath %q is not assignable: %s", c.c.Name, r.expr, r.notAssignable)
	}
	return c, nil
}

// deepCopyJSON copies the maps and slices of a JSON value.
func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := maps.Clone(x)
		for k, e := range out {
			out[k] = deepCopyJSON(e)
		}
		return out
	case []any:
		out := slices.Clone(x)
		for i, e := range out {
			out[i] = deepCopyJSON(e)
		}
		return out
	}
	return v
}
