package interpreter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/luaapi"
)

// Objects that are large or deep, handed to the Go API directly (the CLI's
// decoder refuses more than 200 levels and 64 MiB; a Go caller has no such
// guard). A Go stack overflow is fatal and cannot be recovered, so every
// recursive walk on the way must be bounded or shallow enough.

// deepValue nests 10 000 levels of objects and arrays, alternating.
func deepValue(depth int) any {
	var v any = "bottom"
	for i := range depth {
		if i%2 == 0 {
			v = map[string]any{"a": v}
		} else {
			v = []any{v}
		}
	}
	return v
}

// TestDeepObjects puts a 10 000-deep value at places each built-in reads
// (the whole spec, a pod template, labels, the status conditions, a pod's
// labels) and at a place none reads, and runs every hook: a result or a
// typed error, never a crash.
func TestDeepObjects(t *testing.T) {
	deep := deepValue(10_000)
	for _, c := range hostileCases(t) {
		t.Run(c.name, func(t *testing.T) {
			var paths []valuePath
			allPaths(c.obj, nil, &paths)
			// The first place of each kind: every hook reads them alike.
			var targets []valuePath
			seen := map[string]bool{}
			for _, p := range paths {
				last, _ := p[len(p)-1].(string)
				if len(p) == 1 && last != "spec" || len(p) > 1 && last != "labels" && last != "conditions" && last != "template" {
					continue
				}
				kind := fmt.Sprint(len(p) == 1, last)
				if !seen[kind] {
					seen[kind] = true
					targets = append(targets, p)
				}
			}
			targets = append(targets, valuePath{"metadata", "unread"})
			require.NotEmpty(t, targets)
			for _, p := range targets {
				c.runHooks(t, fmt.Sprintf("%s%s=deep", c.name, p), withDeep(c.obj, p, deep), c.pods)
			}
			pods := make([]*unstructured.Unstructured, len(c.pods))
			for i, pod := range c.pods {
				o := deepCopy(pod.Object).(map[string]any)
				podMeta(o)["labels"] = map[string]any{"deep": deep}
				pods[i] = &unstructured.Unstructured{Object: o}
			}
			c.runHooks(t, c.name+" pods with deep labels", c.obj, pods)

			// A revision whose patch is about as deep: encoding/json, which
			// checks the JSON a PatchOp marshals to, stops at 10 000 levels,
			// so the operation's value stays below.
			rev := c.revs[0]
			rev.Patch = map[string]any{"metadata": map[string]any{"annotations": map[string]any{"deep": deepValue(9_900)}}}
			callHook(t, c.name, c.name+" deep patch", interpreter.HookReviseSpec, func() (any, error) {
				res, err := c.p.ReviseSpec(context.Background(), &unstructured.Unstructured{Object: c.obj}, []interpreter.Revision{rev})
				if err != nil {
					return nil, err
				}
				return res.Patch, nil
			})
		})
	}
}

// withDeep is withValue that may add a key.
func withDeep(obj map[string]any, p valuePath, v any) map[string]any {
	if len(p) == 2 && p[1] == "unread" {
		out := deepCopy(obj).(map[string]any)
		out["metadata"].(map[string]any)["unread"] = v
		return out
	}
	return withValue(obj, p, v)
}

// TestDeepObjectsThroughScripts gives a script override the object as
// real tables, which converts all of it: nesting deeper than
// luaapi.MaxDepth is a clear error naming where, not a stack overflow.
func TestDeepObjectsThroughScripts(t *testing.T) {
	b, ok, err := builtin.Get("pytorchjob")
	require.NoError(t, err)
	require.True(t, ok)
	const script = `function InterpretStatus(obj)
  return {status = "Running", matched = {"Running"}, conditions = {}}
end`
	p, err := b.Compile(interpreter.Options{
		Scripts: []interpreter.Script{{Name: "status.lua", Source: script}},
		Limits:  interpreter.Limits{Timeout: hostileTimeout},
	})
	require.NoError(t, err)
	obj := decodeFile(t, "../examples/pytorchjob/running.yaml")[0].Object
	ctx := context.Background()

	for _, tc := range []struct {
		depth int
		ok    bool
	}{
		{luaapi.MaxDepth - 10, true}, // the object itself adds 2 levels
		{10_000, false},
	} {
		o := withDeep(obj, valuePath{"metadata", "unread"}, deepValue(tc.depth))
		res, err := p.InterpretStatus(ctx, &unstructured.Unstructured{Object: o})
		if tc.ok {
			require.NoError(t, err, "depth %d", tc.depth)
			assert.Equal(t, "Running", string(res.Status))
			continue
		}
		require.Error(t, err, "depth %d", tc.depth)
		var he *interpreter.HookError
		require.True(t, errors.As(err, &he), "a HookError: %v", err)
		var ce *luaapi.ConvertError
		require.True(t, errors.As(err, &ce), "a ConvertError: %v", err)
		assert.Equal(t, `value.metadata.unread[0].a[0].a[0].a…`, ce.Path)
		assert.Equal(t, `karta "pytorchjob": InterpretStatus: object: value.metadata.unread[0].a[0].a[0].a…: nesting deeper than 1000 levels`, err.Error())
	}

	// A 12 MB object becomes tables too: a result, or a limit error (the
	// memory guard, or the deadline on a loaded machine).
	big := bigObject(obj, 12<<20)
	callHook(t, "pytorchjob", "12 MB through a script", interpreter.HookInterpretStatus, func() (any, error) {
		return p.InterpretStatus(ctx, &unstructured.Unstructured{Object: big})
	})
}

// TestDeepScriptResults: a script can build a table nested a million
// deep in a few instructions (here 20 000); converting its result stops at
// luaapi.MaxDepth with an error naming the hook, promptly (the walk was
// quadratic in the depth and overflowed the Go stack).
func TestDeepScriptResults(t *testing.T) {
	b, ok, err := builtin.Get("pytorchjob")
	require.NoError(t, err)
	require.True(t, ok)
	const script = `function GetPodSpecs(obj)
  local t = {}
  for i = 1, 20000 do t = {t} end
  return {items = t}
end
function ReviseSpec(obj, revisions)
  local t = {}
  for i = 1, 20000 do t = {x = t} end
  obj.spec.deep = t
  return obj
end`
	p, err := b.Compile(interpreter.Options{
		Scripts: []interpreter.Script{{Name: "deep.lua", Source: script}},
		Limits:  interpreter.Limits{Timeout: hostileTimeout},
	})
	require.NoError(t, err)
	obj := &unstructured.Unstructured{Object: decodeFile(t, "../examples/pytorchjob/running.yaml")[0].Object}
	ctx := context.Background()

	_, err = p.GetPodSpecs(ctx, obj)
	require.Error(t, err)
	checkHookError(t, "pytorchjob", "deep result", interpreter.HookGetPodSpecs, err)
	assert.Contains(t, err.Error(), "result.items[1][1][1]")
	assert.True(t, strings.HasSuffix(err.Error(), "nesting deeper than 1000 levels"), err.Error())

	_, err = p.ReviseSpec(ctx, obj, nil)
	require.Error(t, err)
	checkHookError(t, "pytorchjob", "deep result", interpreter.HookReviseSpec, err)
	assert.Contains(t, err.Error(), "result.spec.deep.x.x")
	assert.True(t, strings.HasSuffix(err.Error(), "nesting deeper than 1000 levels"), err.Error())
}

// bigObject returns a copy of obj holding about size bytes: long strings
// in an annotation and in a label of every pod template, and many
// containers in one of them.
func bigObject(obj map[string]any, size int) map[string]any {
	out := deepCopy(obj).(map[string]any)
	long := strings.Repeat("x", size/4)
	out["metadata"].(map[string]any)["annotations"] = map[string]any{"big": long}
	var paths []valuePath
	allPaths(out, nil, &paths)
	grew := false
	for _, p := range paths {
		last, _ := p[len(p)-1].(string)
		if last != "template" {
			continue
		}
		tmpl, ok := getPath(out, p).(map[string]any)
		if !ok {
			continue
		}
		meta, _ := tmpl["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			tmpl["metadata"] = meta
		}
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		labels["big"] = long
		spec, _ := tmpl["spec"].(map[string]any)
		if spec == nil || grew {
			continue
		}
		containers := make([]any, 0, 10_000)
		for i := range 10_000 {
			containers = append(containers, map[string]any{
				"name":  fmt.Sprintf("c-%d", i),
				"image": "registry.example.com/team/image:v1.2.3-" + strings.Repeat("y", 100),
				"env":   []any{map[string]any{"name": "K", "value": strings.Repeat("v", 80)}},
			})
		}
		spec["containers"] = containers
		grew = true
	}
	return out
}

// TestLargeObjects runs every hook of built-ins of each spec style on
// their example grown to over 10 MB, with the default limits: a result,
// or a limit error naming the hook (a loaded machine may cross the 1 s
// deadline).
func TestLargeObjects(t *testing.T) {
	all, err := builtin.All()
	require.NoError(t, err)
	styles := map[string]bool{"jobset": true, "inferenceservice": true, "leaderworkerset": true, "milvus": true}
	for _, c := range hostileCases(t) {
		if !styles[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var b *builtin.Builtin
			for _, x := range all {
				if x.Name == c.name {
					b = x
				}
			}
			p, err := b.Compile(interpreter.Options{})
			require.NoError(t, err)
			big := &hostileCase{name: c.name, p: p, obj: bigObject(c.obj, 12<<20), pods: c.pods, revs: c.revs}
			got := big.runHooks(t, c.name+" 12 MB", big.obj, big.pods)
			if got.specs != nil {
				assert.NotEmpty(t, got.specs.Items)
			}
		})
	}
}
