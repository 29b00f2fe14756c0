package interpreter

import (
	"context"
	"errors"
	"fmt"
	"slices"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/luaapi"
)

// The Go API of a Program. Every method is safe for concurrent use.
//
// Aliasing: results hold the input object's own Go values wherever they are
// unchanged parts of it (a pod template in GetPodSpecs, the untouched
// subtrees of a revised object), not copies. Callers must not mutate them;
// copy first (runtime.DeepCopyJSONValue) when they need to.

// Revised is the result of the writing hooks: the revised object, sharing
// every untouched subtree with the input, and the RFC 6902 operations from
// the input to it.
type Revised struct {
	Object *unstructured.Unstructured
	Patch  []PatchOp
	// Warnings are ReviseSpec's: merge patches that replace lists whose
	// elements lose fields a strategic merge patch would keep.
	Warnings []ReviseWarning
}

// GetPodSpecs returns the pod definition of each present instance of each
// pod-bearing component (docs/karta.md, "Pod specs").
func (p *Program) GetPodSpecs(ctx context.Context, obj *unstructured.Unstructured) (*PodSpecs, error) {
	ctx, err := p.enter(ctx, HookGetPodSpecs, obj)
	if err != nil {
		return nil, err
	}
	if !p.overridden[HookGetPodSpecs] {
		return runHook(ctx, p, HookGetPodSpecs, func(ctx context.Context, ev evaluator) (*PodSpecs, error) {
			return p.podSpecs(ctx, ev, obj.Object)
		})
	}
	var items []PodSpecItem
	err = p.callLua(ctx, HookGetPodSpecs, objectArgs(obj.Object), func(L *lua.LState, v lua.LValue) error {
		return decodeResultWith(L, v, &items, func(g any) bool {
			var ok bool
			items, ok = podSpecItems(g)
			return ok
		})
	})
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []PodSpecItem{}
	}
	return &PodSpecs{Items: items}, nil
}

// InterpretStatus returns the generic status of the object: the first
// status in precedence order (karta.StatusPrecedence) whose matchers hold,
// or Undefined; an Argo CD health script's word when an override is one.
func (p *Program) InterpretStatus(ctx context.Context, obj *unstructured.Unstructured) (*StatusResult, error) {
	ctx, err := p.enter(ctx, HookInterpretStatus, obj)
	if err != nil {
		return nil, err
	}
	if p.argo != nil {
		return p.argoStatus(ctx, obj)
	}
	if !p.overridden[HookInterpretStatus] {
		return runHook(ctx, p, HookInterpretStatus, func(ctx context.Context, ev evaluator) (*StatusResult, error) {
			return p.status.run(ctx, ev.(*directEvaluator), obj.Object)
		})
	}
	var res StatusResult
	err = p.callLua(ctx, HookInterpretStatus, objectArgs(obj.Object), func(L *lua.LState, v lua.LValue) error {
		return decodeStatus(L, v, &res)
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// ReviseSpec applies revisions through each component's PodTemplateSpec
// view (docs/revisions.md), all or nothing: each revision's patch, of its Type
// (merge, strategic or json), gives the patched view, and the difference
// is written back through the component's paths.
func (p *Program) ReviseSpec(ctx context.Context, obj *unstructured.Unstructured, revisions []Revision) (*Revised, error) {
	ctx, err := p.enter(ctx, HookReviseSpec, obj)
	if err != nil {
		return nil, err
	}
	if !p.overridden[HookReviseSpec] {
		return runHook(ctx, p, HookReviseSpec, func(ctx context.Context, ev evaluator) (*Revised, error) {
			dev, _ := ev.(*directEvaluator) // nil: on gojq alone (the tests' evaluators)
			if err := p.chargeRevisions(ctx, dev, revisions); err != nil {
				return nil, err
			}
			revised, ops, warnings, err := p.model.revise(ctx, dev, obj.Object, revisions)
			if err != nil {
				return nil, err
			}
			return &Revised{Object: &unstructured.Unstructured{Object: revised}, Patch: ops, Warnings: warnings}, nil
		})
	}
	// The script may call the generated ReviseSpec
	// (karta.generated.ReviseSpec): its warnings come back through the
	// sink.
	sink := &warningSink{}
	res, err := p.reviseByScript(context.WithValue(ctx, warningsKey{}, sink), HookReviseSpec, obj, func(L *lua.LState) (lua.LValue, error) {
		// Handed to the script, the revisions cost what the Go algorithm's
		// charge says (their tables are built from every value).
		if err := p.chargeRevisions(L.Context(), nil, revisions); err != nil {
			return nil, err
		}
		return revisionsToLua(L, revisions)
	})
	if err != nil {
		return nil, err
	}
	res.Warnings = sink.ws
	return res, nil
}

// revisionsToLua passes revisions to a script as {component, instance,
// type, patch} tables, type always set ("merge" when the revision does not
// say), so that a script handing them to karta.generated.ReviseSpec gets
// the same revision. A JSON null inside a patch is karta.null (as in
// every script), members of objects included: it is how a merge patch removes a
// field, so it may not vanish the way a null member of an input object
// does.
func revisionsToLua(L *lua.LState, revisions []Revision) (lua.LValue, error) {
	arr := luaapi.NewArray(L)
	for i, r := range revisions {
		patch, err := patchToLua(L, r.Patch)
		if err != nil {
			return nil, fmt.Errorf("revisions[%d].patch: %w", i, err)
		}
		t := luaapi.NewObject(L)
		t.RawSetString("component", lua.LString(r.Component))
		t.RawSetString("instance", lua.LString(r.Instance))
		typ := r.Type
		if typ == "" {
			typ = PatchMerge
		}
		t.RawSetString("type", lua.LString(typ))
		t.RawSetString("patch", patch)
		arr.RawSetInt(i+1, t)
	}
	return arr, nil
}

func patchToLua(L *lua.LState, v any) (lua.LValue, error) {
	switch x := v.(type) {
	case nil:
		return luaapi.Null(L), nil
	case map[string]any:
		t := luaapi.NewObject(L)
		for k, e := range x {
			lv, err := patchToLua(L, e)
			if err != nil {
				return nil, err
			}
			t.RawSetString(k, lv)
		}
		return t, nil
	case []map[string]any:
		// A json revision's operations, as a Go caller may build them.
		list := make([]any, len(x))
		for i, m := range x {
			list[i] = m
		}
		return patchToLua(L, list)
	case []any:
		t := luaapi.NewArray(L)
		for i, e := range x {
			lv, err := patchToLua(L, e)
			if err != nil {
				return nil, err
			}
			t.RawSetInt(i+1, lv)
		}
		return t, nil
	}
	return luaapi.ToLuaTable(L, v)
}

// Suspend applies every component's suspendActions, in Karta order.
func (p *Program) Suspend(ctx context.Context, obj *unstructured.Unstructured) (*Revised, error) {
	return p.suspendOrResume(ctx, HookSuspend, obj)
}

// Resume applies every component's resumeActions, in Karta order.
func (p *Program) Resume(ctx context.Context, obj *unstructured.Unstructured) (*Revised, error) {
	return p.suspendOrResume(ctx, HookResume, obj)
}

func (p *Program) suspendOrResume(ctx context.Context, h Hook, obj *unstructured.Unstructured) (*Revised, error) {
	ctx, err := p.enter(ctx, h, obj)
	if err != nil {
		return nil, err
	}
	if !p.enabled[h] {
		return nil, &HookError{Karta: p.name, Hook: h, Err: ErrHookNotEnabled}
	}
	if !p.overridden[h] {
		return runHook(ctx, p, h, func(ctx context.Context, ev evaluator) (*Revised, error) {
			revised, ops, err := p.model.suspend(metered(ctx, ev), obj.Object, h == HookResume)
			if err != nil {
				return nil, err
			}
			return &Revised{Object: &unstructured.Unstructured{Object: revised}, Patch: ops}, nil
		})
	}
	return p.reviseByScript(ctx, h, obj, nil)
}

// reviseByScript runs a writing hook a script overrides: its result is the
// whole revised object, applied as a diff against the input.
func (p *Program) reviseByScript(ctx context.Context, h Hook, obj *unstructured.Unstructured, extra func(L *lua.LState) (lua.LValue, error)) (*Revised, error) {
	var revised map[string]any
	args := func(L *lua.LState, generated bool) ([]lua.LValue, error) {
		a, err := objectArgs(obj.Object)(L, generated)
		if err != nil || extra == nil {
			return a, err
		}
		x, err := extra(L)
		return append(a, x), err
	}
	err := p.callLua(ctx, h, args, func(L *lua.LState, v lua.LValue) error {
		g, err := luaapi.FromLua(L, v)
		if err != nil {
			return resultError(err)
		}
		m, ok := g.(map[string]any)
		if !ok {
			return fmt.Errorf("result must be the revised object, got %s", describe(g))
		}
		revised = m
		return nil
	})
	if err != nil {
		return nil, err
	}
	out, err := scriptRevision(obj.Object, revised)
	if err != nil {
		return nil, &HookError{Karta: p.name, Hook: h, Err: err}
	}
	return &Revised{Object: &unstructured.Unstructured{Object: out}, Patch: diffOps(obj.Object, out)}, nil
}

// scriptRevision applies a writing hook's result as a diff against the
// input: the changes from obj to revised, scalars compared by value
// (1 = 1.0, as ReviseSpec compares them), are written onto obj, so that
// whatever the script left alone keeps the input's own values and number
// spellings, and the patch holds only real changes. A null member of an
// input object is absent from the script's tables, so its absence from the
// result is not a change.
func scriptRevision(obj, revised map[string]any) (map[string]any, error) {
	changes := diff(obj, revised, nil, jsonEqual, nil)
	ws := make([]*write, 0, len(changes))
	for _, c := range changes {
		if c.del && isNullAt(obj, c.at) {
			continue
		}
		ws = append(ws, &write{loc: c.at, del: c.del, value: c.value})
	}
	slices.SortStableFunc(ws, func(a, b *write) int { return compareLoc(a.loc, b.loc) })
	out, errs := applyWrites(obj, ws)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// isNullAt reports whether the value at loc in v is a JSON null (present).
func isNullAt(v any, loc []any) bool {
	for _, step := range loc {
		switch k := step.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = m[k]; !ok {
				return false
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return false
			}
			v = a[k]
		}
	}
	return v == nil
}

// GetGangGroups places every pod and groups them into gangs (docs/karta.md,
// "Pods" and "Gangs").
func (p *Program) GetGangGroups(ctx context.Context, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) (*GangResult, error) {
	ctx, err := p.enter(ctx, HookGetGangGroups, obj)
	if err != nil {
		return nil, err
	}
	podObjs := make([]map[string]any, len(pods))
	for i, pod := range pods {
		podObjs[i] = pod.Object
	}
	if !p.overridden[HookGetGangGroups] {
		return runHook(ctx, p, HookGetGangGroups, func(ctx context.Context, ev evaluator) (*GangResult, error) {
			return p.gang.gangGroups(ctx, ev, obj.Object, podObjs)
		})
	}
	podList := make([]any, len(podObjs))
	for i, po := range podObjs {
		podList[i] = po
	}
	var res GangResult
	args := func(L *lua.LState, generated bool) ([]lua.LValue, error) {
		a, err := objectArgs(obj.Object)(L, generated)
		if err != nil {
			return nil, err
		}
		lp, err := luaapi.ToLuaTable(L, podList)
		return append(a, lp), err
	}
	err = p.callLua(ctx, HookGetGangGroups, args, func(L *lua.LState, v lua.LValue) error {
		return decodeResult(L, v, &res)
	})
	if err != nil {
		return nil, err
	}
	res.normalize()
	return &res, nil
}

// PlacePod places one pod: its component, instance, replica, group and the
// group's minMember (docs/karta.md, "Minimum members").
func (p *Program) PlacePod(ctx context.Context, obj, pod *unstructured.Unstructured) (*PodPlacement, error) {
	ctx, err := p.enter(ctx, "PlacePod", obj)
	if err != nil {
		return nil, err
	}
	return runHook(ctx, p, "PlacePod", func(ctx context.Context, ev evaluator) (*PodPlacement, error) {
		pl, reason, err := p.gang.placeOne(ctx, ev, obj.Object, pod.Object)
		if err != nil {
			return nil, err
		}
		if pl == nil {
			return nil, &UnmatchedError{Pod: PodKey(pod.Object), Reason: reason}
		}
		return pl, nil
	})
}

// PlacePods places every pod in its component, instance and replica
// (docs/karta.md, "Pods: component, instance and replica"): the steps
// GetGangGroups and PlacePod take before the gang, without it, so that a
// Karta without gang scheduling instructions places its pods too. Every
// pod appears once: in Placements (Group empty), or in Unmatched with the
// reason, both in input order. For a pod that GetGangGroups places, the
// component, instance and replica are the same; a pod it leaves unmatched
// for a reason of the gang alone (no member applies, a key is missing) is
// placed here. Like PlacePod it runs the Karta's own selectors: a
// script's override of GetGangGroups does not apply.
func (p *Program) PlacePods(ctx context.Context, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) (*PlacementResult, error) {
	ctx, err := p.enter(ctx, "PlacePods", obj)
	if err != nil {
		return nil, err
	}
	podObjs := make([]map[string]any, len(pods))
	for i, pod := range pods {
		podObjs[i] = pod.Object
	}
	return runHook(ctx, p, "PlacePods", func(ctx context.Context, ev evaluator) (*PlacementResult, error) {
		return p.gang.placeAll(ctx, ev, obj.Object, podObjs)
	})
}

// UnmatchedError is a pod that belongs to no group, with the reason.
type UnmatchedError struct {
	Pod    string
	Reason string
}

func (e *UnmatchedError) Error() string {
	return fmt.Sprintf("pod %s is unmatched: %s", e.Pod, e.Reason)
}

// objectArgs passes the object to a hook: a lazy view to generated code, a
// real table with JSON semantics to scripts.
func objectArgs(obj map[string]any) func(L *lua.LState, generated bool) ([]lua.LValue, error) {
	return func(L *lua.LState, generated bool) ([]lua.LValue, error) {
		if generated {
			return []lua.LValue{luaapi.ToLuaView(L, obj)}, nil
		}
		t, err := luaapi.NewLazyJSON(L, obj)
		if err != nil {
			return nil, fmt.Errorf("object: %w", err)
		}
		return []lua.LValue{t}, nil
	}
}

// normalize makes the lists of a gang result empty rather than nil.
func (r *GangResult) normalize() {
	if r.Groups == nil {
		r.Groups = []Group{}
	}
	if r.Placements == nil {
		r.Placements = []Placement{}
	}
	if r.Unmatched == nil {
		r.Unmatched = []Unmatched{}
	}
	for i := range r.Groups {
		if r.Groups[i].Pods == nil {
			r.Groups[i].Pods = []string{}
		}
		for j := range r.Groups[i].SubGroups {
			if sg := &r.Groups[i].SubGroups[j]; sg.Pods == nil {
				sg.Pods = []string{}
			}
		}
	}
}
