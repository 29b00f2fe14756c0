package paths

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzEveryPathGivesOneAnswer: fuzzed objects get one answer from every
// path too. The fuzzer picks a built-in, one of its example states and
// edits: each pair of bytes puts a value of some JSON type (null, {}, [],
// a list of one object, strings, numbers, a boolean) at a place of spec,
// status or metadata, at any depth, list elements included.
func FuzzEveryPathGivesOneAnswer(f *testing.F) {
	reg, h := builtinRegistry(f)
	progs := reg.List()
	sort.Slice(progs, func(i, j int) bool { return progs[i].Name() < progs[j].Name() })
	type target struct {
		paths *allPaths
		names []string
		objs  []*unstructured.Unstructured
	}
	targets := make([]target, len(progs))
	for i, p := range progs {
		ap := newAllPaths(f, p, h)
		f.Cleanup(ap.exported.Close)
		objs := states(f, p.Name())
		tg := target{paths: ap}
		for n := range objs {
			tg.names = append(tg.names, n)
		}
		sort.Strings(tg.names)
		for _, n := range tg.names {
			tg.objs = append(tg.objs, objs[n])
		}
		targets[i] = tg
		// A seed per built-in: its first state, with a null, an empty
		// object and a list of one object put in three places.
		f.Add(uint8(i), uint8(0), []byte{3, 0, 17, 1, 40, 9})
	}
	f.Fuzz(func(t *testing.T, which, state uint8, edits []byte) {
		tg := targets[int(which)%len(targets)]
		if len(tg.objs) == 0 {
			return
		}
		k := int(state) % len(tg.objs)
		obj := tg.objs[k].DeepCopy()
		done := editObject(obj.Object, edits)
		if obj.GroupVersionKind() != tg.paths.p.GVK() {
			return
		}
		tg.paths.ask(t, fmt.Sprintf("%s %s with %s", tg.paths.p.Name(), tg.names[k], strings.Join(done, ", ")), obj, len(done) <= 1)
	})
}

// fuzzValues are what an edit puts in place.
var fuzzValues = []any{
	nil, map[string]any{}, []any{}, "", "3", int64(7), int64(0), int64(-1), 1.5, true,
	[]any{map[string]any{}}, map[string]any{"name": "x"}, "1Gi", "True", []any{"a"},
}

// maxEdits bounds the edits of one input.
const maxEdits = 8

// editObject applies the edits the bytes name to o (under spec, status and
// metadata, kind and apiVersion untouched) and returns them, described.
func editObject(o map[string]any, edits []byte) []string {
	var done []string
	for i := 0; i+1 < len(edits) && len(done) < maxEdits; i += 2 {
		sites := valueSites(o)
		if len(sites) == 0 {
			break
		}
		at := sites[int(edits[i])%len(sites)]
		// A copy: a value put twice would be shared, and an edit inside
		// it could make a cycle.
		v := runtime.DeepCopyJSONValue(fuzzValues[int(edits[i+1])%len(fuzzValues)])
		setAt(o, at, v)
		done = append(done, fmt.Sprintf("%v=%v", at, v))
	}
	return done
}

// valueSites are the places of o's values under spec, status and
// metadata, up to a depth, in a stable order.
func valueSites(o map[string]any) [][]any {
	var out [][]any
	eachValue(o, []string{"metadata", "spec", "status"}, 9, func(path []any, _ any) { out = append(out, path) })
	return out
}

// eachValue calls visit with the path and value of every value under o's
// members tops whose path has at most maxLen steps (the member's own is
// one): parents before children, an object's keys in sorted order, a
// list's elements by index. A path is visit's to keep.
func eachValue(o map[string]any, tops []string, maxLen int, visit func(path []any, v any)) {
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		visit(path, v)
		if len(path) >= maxLen {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k], append(append([]any(nil), path...), k))
			}
		case []any:
			for i, e := range x {
				walk(e, append(append([]any(nil), path...), i))
			}
		}
	}
	for _, top := range tops {
		if v, ok := o[top]; ok {
			walk(v, []any{top})
		}
	}
}

// setAt puts v at path in o; the path is one valueSites gave for o.
func setAt(o map[string]any, path []any, v any) {
	var cur any = o
	for i, step := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			k := step.(string)
			if last {
				c[k] = v
				return
			}
			cur = c[k]
		case []any:
			j := step.(int)
			if last {
				c[j] = v
				return
			}
			cur = c[j]
		}
	}
}
