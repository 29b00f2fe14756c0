package perf

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/jsonpatch"
	"github.com/kartalua/karta/interpreter"
)

// ReviseSpec of the baselines: merge patches over the pod template specs
// of PyTorchJob, JobSet and LeaderWorkerSet (what their revisions.yaml
// hold), with karta's result — the revised object and the RFC 6902
// operations from the object to it — so that the benchmarks can assert
// equal results. Both compute the operations with revisedOps, the same
// walk over what was written.

// ReviseSpec is upstream Karta's method: the object is normalised by a
// JSON round trip; each instance's template location is found with
// path(podTemplateSpecPath) (parsed and compiled on the call); and every
// field of every merge patch is written by its own jq assignment
// (`.loc.field = $v`, or `del(.loc.field)` for a null), parsed, compiled
// and run on the object.
func (g *GojqKarta) ReviseSpec(obj *unstructured.Unstructured, revs []interpreter.Revision) (*interpreter.Revised, error) {
	orig, err := normalise(obj.Object)
	if err != nil {
		return nil, err
	}
	v := orig
	for i, rev := range revs {
		if rev.Type != "" && rev.Type != interpreter.PatchMerge {
			return nil, fmt.Errorf("revisions[%d]: the gojq baseline implements merge patches only", i)
		}
		locs, err := g.templateLocations(rev, v)
		if err != nil {
			return nil, fmt.Errorf("revisions[%d]: %w", i, err)
		}
		patch, ok := rev.Patch.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("revisions[%d]: the patch is not an object", i)
		}
		for _, loc := range locs {
			if v, err = assignMerge(v, loc, patch); err != nil {
				return nil, fmt.Errorf("revisions[%d]: %w", i, err)
			}
		}
	}
	out, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the revised object is a %T", v)
	}
	return &interpreter.Revised{Object: &unstructured.Unstructured{Object: out},
		Patch: revisedOps(orig.(map[string]any), out)}, nil
}

// templateLocations returns the locations of the instances a revision
// names, by path(podTemplateSpecPath) zipped with the instance ids.
func (g *GojqKarta) templateLocations(rev interpreter.Revision, v any) ([][]any, error) {
	var gc *gComp
	for _, c := range g.comps {
		if c.c.Name == rev.Component {
			gc = c
		}
	}
	if gc == nil || gc.c.SpecDefinition == nil || gc.c.SpecDefinition.PodTemplateSpecPath == "" {
		return nil, fmt.Errorf("component %q has no podTemplateSpecPath", rev.Component)
	}
	ids := []string{""}
	if expr := gc.c.InstanceIDPath; expr != "" {
		outs, err := jq(expr, v)
		if err != nil {
			return nil, err
		}
		ids = ids[:0]
		for _, o := range outs {
			id, err := idString(o)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
	}
	expr := gc.c.SpecDefinition.PodTemplateSpecPath
	tmpls, err := jq(expr, v)
	if err != nil {
		return nil, err
	}
	paths, err := jq("path("+expr+")", v)
	if err != nil {
		return nil, err
	}
	if len(paths) != len(ids) || len(tmpls) != len(ids) {
		return nil, fmt.Errorf("component %q: %d locations for %d instances", rev.Component, len(paths), len(ids))
	}
	var out [][]any
	for i, id := range ids {
		if tmpls[i] == nil || (rev.Instance != "*" && rev.Instance != id) {
			continue
		}
		out = append(out, paths[i].([]any))
	}
	if len(out) == 0 && rev.Instance != "*" {
		return nil, fmt.Errorf("component %q has no instance %q", rev.Component, rev.Instance)
	}
	return out, nil
}

// assignMerge writes a merge patch at loc, one jq assignment per field:
// objects recurse into the target's object (or replace what is not one),
// null deletes, anything else is assigned.
func assignMerge(v any, loc []any, patch map[string]any) (any, error) {
	target, err := jqVars("getpath($p)", v, "$p", loc)
	if err != nil {
		return nil, err
	}
	tm, _ := target[0].(map[string]any)
	for _, k := range slices.Sorted(mapKeys(patch)) {
		at := append(slices.Clip(loc), k)
		switch pv := patch[k].(type) {
		case nil:
			if _, present := tm[k]; !present {
				continue
			}
			if v, err = jqOne("del("+jqPathText(at)+")", v); err != nil {
				return nil, err
			}
		case map[string]any:
			if _, isMap := tm[k].(map[string]any); isMap {
				if v, err = assignMerge(v, at, pv); err != nil {
					return nil, err
				}
				continue
			}
			if v, err = jqOne(jqPathText(at)+" = $v", v, "$v", jsonValue(dropNulls(pv))); err != nil {
				return nil, err
			}
		default:
			if v, err = jqOne(jqPathText(at)+" = $v", v, "$v", jsonValue(pv)); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// jqOne parses, compiles and runs expr with the variables given as name,
// value pairs, and returns its one output.
func jqOne(expr string, v any, vars ...any) (any, error) {
	outs, err := jqVars(expr, v, vars...)
	if err != nil {
		return nil, err
	}
	if len(outs) != 1 {
		return nil, fmt.Errorf("jq %s: %d outputs", expr, len(outs))
	}
	return outs[0], nil
}

// jqVars is jq with variables, given as name, value pairs: parsed,
// compiled and run on every call.
func jqVars(expr string, v any, vars ...any) ([]any, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	var values []any
	for i := 0; i+1 < len(vars); i += 2 {
		names = append(names, vars[i].(string))
		values = append(values, vars[i+1])
	}
	code, err := gojq.Compile(q, gojq.WithVariables(names))
	if err != nil {
		return nil, err
	}
	var out []any
	iter := code.Run(v, values...)
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

// jqPathText spells a location as a jq path: .["a"][0]["b"].
func jqPathText(loc []any) string {
	var b strings.Builder
	b.WriteByte('.')
	for _, e := range loc {
		switch x := e.(type) {
		case string:
			q, _ := json.Marshal(x)
			b.WriteByte('[')
			b.Write(q)
			b.WriteByte(']')
		case int:
			b.WriteString("[" + strconv.Itoa(x) + "]")
		case float64:
			b.WriteString("[" + strconv.Itoa(int(x)) + "]")
		}
	}
	return b.String()
}

// dropNulls is a patch object merged into a missing or non-object target
// (RFC 7386): its nulls go.
func dropNulls(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case nil:
		case map[string]any:
			out[k] = dropNulls(x)
		default:
			out[k] = x
		}
	}
	return out
}

// jsonValue is a patch value as gojq takes it (the patch is YAML-decoded:
// its numbers may be json.Number or int64).
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// ReviseSpec is the hand-written revision: the kind's template locations
// read in place, then each merge patch written into copies of the maps on
// the way to what it changes (the rest shared with the object).
func (h *HandGo) ReviseSpec(obj *unstructured.Unstructured, revs []interpreter.Revision) (*interpreter.Revised, error) {
	if h.templates == nil {
		return nil, fmt.Errorf("no hand-written ReviseSpec")
	}
	out := obj.Object
	for i, rev := range revs {
		if rev.Type != "" && rev.Type != interpreter.PatchMerge {
			return nil, fmt.Errorf("revisions[%d]: the hand-written Go implements merge patches only", i)
		}
		patch, ok := rev.Patch.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("revisions[%d]: the patch is not an object", i)
		}
		locs, err := h.templates(out, rev.Component, rev.Instance)
		if err != nil {
			return nil, fmt.Errorf("revisions[%d]: %w", i, err)
		}
		for _, loc := range locs {
			out = cowMerge(obj.Object, out, loc, patch)
		}
	}
	return &interpreter.Revised{Object: &unstructured.Unstructured{Object: out}, Patch: revisedOps(obj.Object, out)}, nil
}

// cowMerge merges patch at loc of cur, copying the maps and slices on the
// way that are still the original's (orig), and returns the new root.
func cowMerge(orig, cur map[string]any, loc []any, patch map[string]any) map[string]any {
	root := cur
	if sameMap(root, orig) {
		root = copyMap(orig)
	}
	var parent any = root
	var origAt any = orig
	for _, e := range loc {
		switch k := e.(type) {
		case string:
			pm := parent.(map[string]any)
			om, _ := origAt.(map[string]any)
			child := pm[k]
			origAt = om[k]
			child = cowChild(child, origAt)
			pm[k] = child
			parent = child
		case int:
			pa := parent.([]any)
			oa, _ := origAt.([]any)
			var o any
			if k < len(oa) {
				o = oa[k]
			}
			origAt = o
			child := cowChild(pa[k], o)
			pa[k] = child
			parent = child
		}
	}
	mergeInto(parent.(map[string]any), origAt, patch)
	return root
}

// cowChild copies child when it is still the original's value.
func cowChild(child, orig any) any {
	switch c := child.(type) {
	case map[string]any:
		if om, ok := orig.(map[string]any); ok && sameMap(c, om) {
			return copyMap(c)
		}
	case []any:
		if oa, ok := orig.([]any); ok && len(c) > 0 && len(oa) == len(c) && &c[0] == &oa[0] {
			return slices.Clone(c)
		}
	}
	return child
}

// mergeInto applies an RFC 7386 merge patch to t, a map of its own; orig
// is t's original, whose sub-maps must be copied before they change.
func mergeInto(t map[string]any, orig any, patch map[string]any) {
	om, _ := orig.(map[string]any)
	for k, pv := range patch {
		switch x := pv.(type) {
		case nil:
			delete(t, k)
		case map[string]any:
			cur, isMap := t[k].(map[string]any)
			if !isMap {
				t[k] = dropNulls(x)
				continue
			}
			c := cowChild(cur, om[k]).(map[string]any)
			mergeInto(c, om[k], x)
			t[k] = c
		default:
			if !reflect.DeepEqual(t[k], pv) {
				t[k] = pv
			}
		}
	}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sameMap(a, b map[string]any) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// revisedOps are the RFC 6902 operations from a to b, as karta orders
// them: keys sorted, a missing key's value one add, a changed value a
// replace, a removed key a remove; values the same on both sides (the
// untouched subtrees b shares with a) are skipped without a walk.
func revisedOps(a, b map[string]any) []interpreter.PatchOp {
	var ops []interpreter.PatchOp
	var walk func(x, y any, at []any)
	walk = func(x, y any, at []any) {
		switch xv := x.(type) {
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok {
				break
			}
			if sameMap(xv, yv) {
				return
			}
			keys := slices.Collect(mapKeys(xv))
			for k := range yv {
				if _, ok := xv[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				xe, inX := xv[k]
				ye, inY := yv[k]
				p := append(slices.Clip(at), k)
				switch {
				case !inY:
					ops = append(ops, interpreter.PatchOp{Op: "remove", Path: jsonpatch.Pointer(p)})
				case !inX:
					ops = append(ops, interpreter.PatchOp{Op: "add", Path: jsonpatch.Pointer(p), Value: ye})
				default:
					walk(xe, ye, p)
				}
			}
			return
		case []any:
			yv, ok := y.([]any)
			if !ok || len(yv) != len(xv) {
				break
			}
			if len(xv) > 0 && &xv[0] == &yv[0] {
				return
			}
			for i := range xv {
				walk(xv[i], yv[i], append(slices.Clip(at), i))
			}
			return
		}
		if !reflect.DeepEqual(x, y) {
			ops = append(ops, interpreter.PatchOp{Op: "replace", Path: jsonpatch.Pointer(at), Value: y})
		}
	}
	walk(a, b, nil)
	return ops
}

// The hand-written template locations of the three kinds.

func pytorchTemplates(obj map[string]any, comp, inst string) ([][]any, error) {
	typ := map[string]string{"master": "Master", "worker": "Worker"}[comp]
	if typ == "" || (inst != "" && inst != "*") {
		return nil, fmt.Errorf("no instance %q of %q", inst, comp)
	}
	if get(obj, "spec", "pytorchReplicaSpecs", typ, "template") == nil {
		if inst == "*" {
			return nil, nil
		}
		return nil, fmt.Errorf("instance %q of %q is absent", inst, comp)
	}
	return [][]any{{"spec", "pytorchReplicaSpecs", typ, "template"}}, nil
}

func jobsetTemplates(obj map[string]any, comp, inst string) ([][]any, error) {
	if comp != "replicatedjob" {
		return nil, fmt.Errorf("no component %q", comp)
	}
	rjs, _ := get(obj, "spec", "replicatedJobs").([]any)
	var out [][]any
	for i, rj := range rjs {
		if inst != "*" && str(rj, "name") != inst {
			continue
		}
		if get(rj, "template", "spec", "template") != nil {
			out = append(out, []any{"spec", "replicatedJobs", i, "template", "spec", "template"})
		}
	}
	if len(out) == 0 && inst != "*" {
		return nil, fmt.Errorf("no instance %q", inst)
	}
	return out, nil
}

func lwsTemplates(obj map[string]any, comp, inst string) ([][]any, error) {
	if inst != "" && inst != "*" {
		return nil, fmt.Errorf("no instance %q of %q", inst, comp)
	}
	lwt, _ := get(obj, "spec", "leaderWorkerTemplate").(map[string]any)
	key := "workerTemplate"
	switch comp {
	case "leader":
		if lt, ok := lwt["leaderTemplate"]; ok && lt != nil && lt != false {
			key = "leaderTemplate"
		}
	case "worker":
	default:
		return nil, fmt.Errorf("no component %q", comp)
	}
	if lwt[key] == nil {
		if inst == "*" {
			return nil, nil
		}
		return nil, fmt.Errorf("instance %q of %q is absent", inst, comp)
	}
	return [][]any{{"spec", "leaderWorkerTemplate", key}}, nil
}
