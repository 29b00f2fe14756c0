package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// Overrides: spec.luaScript and --scripts replacing
// hooks, karta.generated, jq, isolation, error naming and the Argo CD form.

// deploymentKarta loads testdata/program/deployment.karta.yaml, whose
// luaScript is the override example of docs/karta.md.
func deploymentKarta(t testing.TB) *karta.Karta {
	t.Helper()
	return progKartaFile(t, filepath.Join(progProgramDir, "deployment.karta.yaml"))
}

func deploymentObjs(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	objs := progObjFile(t, filepath.Join(progProgramDir, "deployment.yaml"))
	require.Len(t, objs, 3)
	return objs
}

// withLuaScript returns a copy of k whose spec.luaScript is src.
func withLuaScript(t testing.TB, k *karta.Karta, src string) *karta.Karta {
	t.Helper()
	c := k.DeepCopy()
	c.Spec.LuaScript = src
	require.Empty(t, karta.ValidateWithOptions(c, ValidateOptions()).Errors())
	return c
}

// phaseOf runs InterpretStatus and returns the phase a test script wrote
// its observations into.
func phaseOf(t *testing.T, p *Program, obj *unstructured.Unstructured) string {
	t.Helper()
	res, err := p.InterpretStatus(context.Background(), obj)
	require.NoError(t, err)
	require.NotNil(t, res.Phase)
	return *res.Phase
}

func TestOverrideLuaScriptCallsGenerated(t *testing.T) {
	p := progCompile(t, deploymentKarta(t), Options{})
	assert.True(t, p.Overridden(HookInterpretStatus))
	assert.False(t, p.Overridden(HookGetPodSpecs))
	objs := deploymentObjs(t)
	ctx := context.Background()

	res, err := p.InterpretStatus(ctx, objs[0])
	require.NoError(t, err)
	assert.Equal(t, karta.StatusRunning, res.Status, "the generated result passes through")
	assert.Equal(t, []karta.Status{karta.StatusRunning}, res.Matched)
	require.Len(t, res.Conditions, 2)
	assert.Equal(t, "NewReplicaSetAvailable", *res.Conditions[1].Reason)

	res, err = p.InterpretStatus(ctx, objs[1])
	require.NoError(t, err)
	assert.Equal(t, karta.StatusSuspended, res.Status, "paused and no matcher: the override decides")
	assert.Equal(t, []karta.Status{karta.StatusSuspended}, res.Matched)
	require.Len(t, res.Conditions, 2, "the generated conditions are kept")
	assert.Equal(t, "DeploymentPaused", *res.Conditions[1].Reason)

	res, err = p.InterpretStatus(ctx, objs[2])
	require.NoError(t, err)
	assert.Equal(t, karta.StatusDegraded, res.Status)
	assert.Equal(t, []karta.Status{karta.StatusDegraded, karta.StatusRunning}, res.Matched)

	// The Go-side hooks still run, on the generated accessors.
	specs, err := p.GetPodSpecs(ctx, objs[0])
	require.NoError(t, err)
	require.Len(t, specs.Items, 1)
	assert.Equal(t, "deployment", specs.Items[0].Component)
	assert.Equal(t, int64(3), *specs.Items[0].Scale.Replicas)
}

func TestOverrideScriptsOrder(t *testing.T) {
	k := withLuaScript(t, deploymentKarta(t), `
prefix = "luaScript"
function InterpretStatus(obj)
  local r = karta.generated.InterpretStatus(obj)
  r.phase = "luaScript"
  return r
end
function GetPodSpecs(obj)
  return {}
end
`)
	p := progCompile(t, k, Options{Scripts: []Script{{Name: "a.lua", Source: `
function InterpretStatus(obj)
  local r = karta.generated.InterpretStatus(obj)
  r.phase = "a.lua"
  return r
end
`}, {Name: "b.lua", Source: `
function InterpretStatus(obj)
  local r = karta.generated.InterpretStatus(obj)
  r.phase = "b.lua after " .. prefix .. ", generated " .. tostring(r.phase)
  return r
end
`}}})
	obj := deploymentObjs(t)[0]
	assert.Equal(t, "b.lua after luaScript, generated nil", phaseOf(t, p, obj),
		"the last script wins; chunks share one environment; karta.generated is always the generated hook")
	specs, err := p.GetPodSpecs(context.Background(), obj)
	require.NoError(t, err)
	assert.Equal(t, []PodSpecItem{}, specs.Items, "luaScript's GetPodSpecs stays: no script replaced it")
	for _, h := range []Hook{HookInterpretStatus, HookGetPodSpecs} {
		assert.True(t, p.Overridden(h), h)
	}
	assert.False(t, p.Overridden(HookGetGangGroups))

	// Source lists the generated hooks, then the overrides in order.
	src := p.Source()
	iLua := strings.Index(src, "-- override: karta:deployment/luaScript\n")
	iA := strings.Index(src, "-- override: script:a.lua\n")
	iB := strings.Index(src, "-- override: script:b.lua\n")
	assert.True(t, 0 < iLua && iLua < iA && iA < iB, "override order in Source: %d %d %d", iLua, iA, iB)
}

// TestOverrideEmptyResultTables: an empty Lua table is an object unless a
// marker or the result's schema says otherwise. Where a hook's
// result has a list, {} is an empty list.
func TestOverrideEmptyResultTables(t *testing.T) {
	p := progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "empty.lua", Source: `
function InterpretStatus(obj)
  return {status = "Undefined", matched = {}, conditions = {}}
end
function GetPodSpecs(obj)
  if obj.spec.paused then return {} end
  return {{component = "deployment", instance = "", podTemplateSpec = {},
           scale = {replicas = 1}}}
end
function GetGangGroups(obj, pods)
  return {groups = {}, placements = {}, unmatched = {}}
end
`}}})
	objs := deploymentObjs(t)
	ctx := context.Background()
	res, err := p.InterpretStatus(ctx, objs[0])
	require.NoError(t, err)
	assert.Equal(t, &StatusResult{Status: karta.StatusUndefined, Matched: []karta.Status{}, Conditions: []Condition{}}, res)

	specs, err := p.GetPodSpecs(ctx, objs[1])
	require.NoError(t, err)
	assert.Equal(t, []PodSpecItem{}, specs.Items)
	specs, err = p.GetPodSpecs(ctx, objs[0])
	require.NoError(t, err)
	require.Len(t, specs.Items, 1)
	assert.Equal(t, map[string]any{}, specs.Items[0].PodTemplateSpec, "{} where an object is wanted stays an object")

	gang, err := p.GetGangGroups(ctx, objs[0], nil)
	require.NoError(t, err)
	assert.Equal(t, &GangResult{Groups: []Group{}, Placements: []Placement{}, Unmatched: []Unmatched{}}, gang)

	// A marker wins over the schema.
	p = progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "marked.lua", Source: `
function InterpretStatus(obj)
  return {status = "Undefined", matched = karta.object(), conditions = karta.array()}
end
`}}})
	_, err = p.InterpretStatus(ctx, objs[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), "result does not have the hook's shape")
}

func TestOverrideGetPodSpecs(t *testing.T) {
	p := progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "pods.lua", Source: `
-- One item per container, as a sidecar-aware scheduler might want them.
function GetPodSpecs(obj)
  local items = {}
  for i, c in ipairs(obj.spec.template.spec.containers) do
    items[#items + 1] = {
      component = "deployment",
      instance = c.name,
      podSpec = {containers = {c}, nodeSelector = {pool = "gpu"}},
      metadata = obj.spec.template.metadata,
      scale = {replicas = obj.spec.replicas, minReplicas = karta.null, maxReplicas = 10},
    }
  end
  return items
end
`}}})
	obj := deploymentObjs(t)[0]
	specs, err := p.GetPodSpecs(context.Background(), obj)
	require.NoError(t, err)
	require.Len(t, specs.Items, 1)
	it := specs.Items[0]
	assert.Equal(t, "deployment", it.Component)
	assert.Equal(t, "web", it.Instance)
	assert.Nil(t, it.PodTemplateSpec)
	assert.Equal(t, map[string]any{"labels": map[string]any{"app": "web"}}, it.Metadata)
	assert.Equal(t, &Scale{Replicas: ptr[int64](3), MaxReplicas: ptr[int64](10)}, it.Scale)
	containers := it.PodSpec["containers"].([]any)
	require.Len(t, containers, 1)
	assert.Equal(t, "nginx:1.27", containers[0].(map[string]any)["image"])

	t.Run("a result of the wrong shape names the hook", func(t *testing.T) {
		for _, tc := range []struct{ name, src, err string }{
			{"unknown key", `function GetPodSpecs(obj) return {{component = "x", instance = "", replicas = 3}} end`, `unknown field "replicas"`},
			{"a string", `function GetPodSpecs(obj) return "items" end`, "result does not have the hook's shape"},
			{"a function", `function GetPodSpecs(obj) return {{component = function() end}} end`, "result[1].component"},
			{"a sparse array", `function GetPodSpecs(obj) local t = {} t[2] = {} return t end`, "sparse array"},
			{"nothing", `function GetPodSpecs(obj) end`, `karta "deployment": GetPodSpecs: result: Lua nil is not a JSON value`},
			{"a nested function", `function GetPodSpecs(obj) return {{component = "x", podSpec = {f = type}}} end`, `karta "deployment": GetPodSpecs: result[1].podSpec.f: Lua function is not a JSON value`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "bad.lua", Source: tc.src}}})
				_, err := p.GetPodSpecs(context.Background(), obj)
				var he *HookError
				require.ErrorAs(t, err, &he)
				assert.Equal(t, HookGetPodSpecs, he.Hook)
				assert.Equal(t, "deployment", he.Karta)
				assert.Contains(t, err.Error(), tc.err)
				assert.NotContains(t, err.Error(), "result: result", "the place is named once")
			})
		}
	})
}

// TestOverrideCallsGeneratedAlgorithms: scripts reach the Go-side hooks
// through karta.generated, with the same results as the Go API.
func TestOverrideCallsGeneratedAlgorithms(t *testing.T) {
	k := progKartaFile(t, filepath.Join(progProgramDir, "jobset.karta.yaml"))
	plain := progCompile(t, k, Options{})
	p := progCompile(t, k, Options{Scripts: []Script{{Name: "gen.lua", Source: `
function GetPodSpecs(obj)
  return karta.generated.GetPodSpecs(obj)
end
function GetGangGroups(obj, pods)
  return karta.generated.GetGangGroups(obj, pods)
end
function InterpretStatus(obj)
  local r = karta.generated.InterpretStatus(obj)
  local items = karta.generated.GetPodSpecs(obj)
  local total = 0
  for _, it in ipairs(items) do total = total + it.scale.replicas end
  r.phase = #items .. " items, " .. total .. " pods"
  return r
end
`}}})
	obj := progObjFile(t, filepath.Join(progProgramDir, "jobset.yaml"))[0]
	pods := progObjFile(t, filepath.Join(progProgramDir, "jobset.pods.yaml"))
	ctx := context.Background()

	assert.Equal(t, "2 items, 9 pods", phaseOf(t, p, obj))

	want, err := plain.GetPodSpecs(ctx, obj)
	require.NoError(t, err)
	got, err := p.GetPodSpecs(ctx, obj)
	require.NoError(t, err)
	assert.Equal(t, normalJSON(t, []any{want}), normalJSON(t, []any{got}), "through Lua tables, the same items")

	wantGang, err := plain.GetGangGroups(ctx, obj, pods)
	require.NoError(t, err)
	gotGang, err := p.GetGangGroups(ctx, obj, pods)
	require.NoError(t, err)
	assert.Equal(t, wantGang, gotGang)
	assert.Len(t, gotGang.Groups, 2)
	assert.Len(t, gotGang.Unmatched, 2)
}

func TestOverrideReviseAndSuspend(t *testing.T) {
	k := progKartaFile(t, filepath.Join(progProgramDir, "knative-service.karta.yaml"))
	p := progCompile(t, k, Options{})
	assert.False(t, p.HookEnabled(HookSuspend))
	obj := progObjFile(t, filepath.Join(progProgramDir, "knative-service.yaml"))[0]
	ctx := context.Background()
	for _, f := range []func(context.Context, *unstructured.Unstructured) (*Revised, error){p.Suspend, p.Resume} {
		_, err := f(ctx, obj)
		require.ErrorIs(t, err, ErrHookNotEnabled)
		var he *HookError
		require.ErrorAs(t, err, &he)
		assert.Equal(t, "knative-service", he.Karta)
	}
	_, err := p.Suspend(ctx, obj)
	assert.EqualError(t, err, `karta "knative-service": Suspend: hook not enabled`)

	// A script can supply Suspend (scale to zero) and wrap ReviseSpec.
	p = progCompile(t, k, Options{Scripts: []Script{{Name: "scale-to-zero.lua", Source: `
function Suspend(obj)
  obj.spec.template.metadata.annotations["autoscaling.knative.dev/max-scale"] = "0"
  return obj
end
function ReviseSpec(obj, revisions)
  for _, r in ipairs(revisions) do
    r.patch.metadata = r.patch.metadata or {}
    r.patch.metadata.labels = r.patch.metadata.labels or {}
    r.patch.metadata.labels["revised-by"] = "script"
  end
  return karta.generated.ReviseSpec(obj, revisions)
end
`}}})
	assert.True(t, p.HookEnabled(HookSuspend))
	assert.False(t, p.HookEnabled(HookResume))
	rev, err := p.Suspend(ctx, obj)
	require.NoError(t, err)
	assert.Equal(t, []PatchOp{{Op: "add", Path: "/spec/template/metadata/annotations/autoscaling.knative.dev~1max-scale", Value: "0"}}, rev.Patch,
		"only the change: numbers the script handed back are equal by value, and the null creationTimestamp it could not see is kept")
	// The result is the input with the diff applied: what the script did
	// not change is the input's own values, literals included.
	tmpl := rev.Object.Object["spec"].(map[string]any)["template"].(map[string]any)
	assert.Equal(t, json.Number("0"), tmpl["spec"].(map[string]any)["containerConcurrency"])
	assert.True(t, sameGoValue(obj.Object["spec"].(map[string]any)["traffic"], rev.Object.Object["spec"].(map[string]any)["traffic"]))
	assert.True(t, sameGoValue(obj.Object["status"], rev.Object.Object["status"]))
	md := tmpl["metadata"].(map[string]any)
	assert.Contains(t, md, "creationTimestamp")
	assert.Nil(t, md["creationTimestamp"])
	assert.Equal(t, "1", md["annotations"].(map[string]any)["autoscaling.knative.dev/min-scale"])
	_, hadMax := obj.Object["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)["autoscaling.knative.dev/max-scale"]
	assert.False(t, hadMax, "the input object is not modified")
	_, err = p.Resume(ctx, obj)
	require.ErrorIs(t, err, ErrHookNotEnabled)

	rev, err = p.ReviseSpec(ctx, obj, []Revision{{Component: "revision", Patch: map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"autoscaling.knative.dev/min-scale": nil}},
	}}})
	require.NoError(t, err)
	assert.Equal(t, []PatchOp{
		{Op: "remove", Path: "/spec/template/metadata/annotations/autoscaling.knative.dev~1min-scale"},
		{Op: "add", Path: "/spec/template/metadata/labels", Value: map[string]any{"revised-by": "script"}},
	}, rev.Patch, "a null in the patch reaches Lua as karta.null and still removes")
}

func TestOverrideJQ(t *testing.T) {
	p := progCompile(t, withLuaScript(t, deploymentKarta(t), `
function InterpretStatus(obj)
  local r = karta.generated.InterpretStatus(obj)
  local keys = jq('.spec.template.spec.containers[0] | keys[]', obj)
  local n = karta.jq('[.status.conditions[]? | select(.status == "True")] | length', obj)
  local none = jq('empty', obj)
  local nulls = jq('.[]', {1, karta.null, 3})
  local null_in = karta.jq('map(. == null)', {karta.null, "x"})
  local o = jq('{a: 1, b: [2, null]}', nil)[1]
  local d = jq('. // "default"', obj.spec.optional)[1]
  r.phase = table.concat(keys, ",") .. ";" .. n[1] .. ";" .. #none .. ";" .. #nulls ..
    ";" .. tostring(nulls[2] == karta.null) .. ";" .. tostring(null_in[1][1]) .. tostring(null_in[1][2]) ..
    ";" .. o.a .. "," .. #o.b .. "," .. tostring(o.b[2] == karta.null) .. ";" .. d
  return r
end
`), Options{})
	assert.Equal(t, "image,name,ports,resources;2;0;3;true;truefalse;1,2,true;default", phaseOf(t, p, deploymentObjs(t)[0]))

	for _, tc := range []struct{ name, call, err string }{
		{"a jq error is a Lua error with gojq's message", `jq('.a.b', {a = {1}})`, `script:jq.lua:2: jq: expected an object but got: array ([1])`},
		{"karta.jq too", `karta.jq('.a | tonumber', {a = "x"})`, `script:jq.lua:2: jq: tonumber cannot be applied to "x": invalid number`},
		{"a banned expression is rejected", `jq('env', obj)`, `script:jq.lua:2: jq: "env" is not allowed`},
		{"input is banned too", `jq('[inputs]', obj)`, `is not allowed`},
		{"a parse error", `jq('.[', obj)`, `script:jq.lua:2: jq: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "jq.lua", Source: "function InterpretStatus(obj)\n  local x = " + tc.call + "\n  return karta.generated.InterpretStatus(obj)\nend\n"}}})
			_, err := p.InterpretStatus(context.Background(), deploymentObjs(t)[0])
			var he *HookError
			require.ErrorAs(t, err, &he)
			assert.Contains(t, err.Error(), tc.err)
			assert.True(t, strings.HasPrefix(err.Error(), `karta "deployment": InterpretStatus: `), err.Error())
		})
	}
}

func TestOverrideNullInArrays(t *testing.T) {
	p := progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "null.lua", Source: `
function GetPodSpecs(obj)
  local args = obj.spec.template.spec.containers[1].args
  local seen = {}
  for i = 1, #args do
    if args[i] == karta.null then seen[#seen + 1] = "null" else seen[#seen + 1] = args[i] end
  end
  return {{component = "deployment", instance = table.concat(seen, ","),
           podTemplateSpec = {spec = {containers = {{name = "c", args = {"--a", karta.null, "--b"}}}}}}}
end
`}}})
	obj := progObj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: n, namespace: ns}
spec:
  template:
    spec:
      containers:
      - name: c
        args: [--a, null, --b]
        env: [{name: X, value: null}]`)
	specs, err := p.GetPodSpecs(context.Background(), obj)
	require.NoError(t, err)
	require.Len(t, specs.Items, 1)
	assert.Equal(t, "--a,null,--b", specs.Items[0].Instance, "a null inside an array is karta.null in Lua")
	c := specs.Items[0].PodTemplateSpec["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{"--a", nil, "--b"}, c["args"], "and karta.null is null on the way out")
}

func TestOverrideIsolation(t *testing.T) {
	counter := `
calls = (calls or 0) + 1
function InterpretStatus(obj)
  counter = (counter or 0) + 1
  local r = karta.generated.InterpretStatus(obj)
  r.phase = "counter=" .. counter .. " calls=" .. calls .. " other=" .. tostring(other)
  return r
end
`
	other := `
other = "set by the other Karta"
function InterpretStatus(obj)
  local r = karta.generated.InterpretStatus(obj)
  r.phase = tostring(counter) .. " " .. tostring(calls) .. " " .. other
  return r
end
`
	// One state each, so every call reuses the same Lua state.
	a := progCompile(t, withLuaScript(t, deploymentKarta(t), counter), Options{PoolSize: 1})
	b := progCompile(t, withLuaScript(t, deploymentKarta(t), other), Options{PoolSize: 1})
	obj := deploymentObjs(t)[0]
	for range 5 {
		assert.Equal(t, "counter=1 calls=1 other=nil", phaseOf(t, a, obj), "no global outlives a call")
		assert.Equal(t, "nil nil set by the other Karta", phaseOf(t, b, obj), "no Karta sees another's globals")
	}
	assert.EqualValues(t, 1, a.PoolStats().Created, "the same state served every call")

	t.Run("library tables are read-only", func(t *testing.T) {
		for _, lib := range []string{"string", "table", "math", "os", "karta", "karta.generated"} {
			p := progCompile(t, deploymentKarta(t), Options{PoolSize: 1, Scripts: []Script{{Name: "poke.lua", Source: "function InterpretStatus(obj)\n  " + lib + ".x = 1\nend\n"}}})
			_, err := p.InterpretStatus(context.Background(), obj)
			require.Error(t, err, lib)
			assert.Contains(t, err.Error(), `script:poke.lua:2: attempt to modify read-only table "`+lib+`"`)
		}
	})
	t.Run("a write to the object table does not reach the Go object", func(t *testing.T) {
		p := progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "mutate.lua", Source: `
function InterpretStatus(obj)
  obj.spec.replicas = 99
  obj.metadata.labels.app = nil
  table.remove(obj.status.conditions, 1)
  return karta.generated.InterpretStatus(obj)
end
`}}})
		before := obj.DeepCopy()
		res, err := p.InterpretStatus(context.Background(), obj)
		require.NoError(t, err)
		assert.Equal(t, karta.StatusUndefined, res.Status, "the generated hook saw the script's table")
		assert.Len(t, res.Conditions, 1)
		assert.Equal(t, before.Object, obj.Object)
	})
}

func TestOverrideErrorsNameChunkAndLine(t *testing.T) {
	obj := deploymentObjs(t)[0]
	ctx := context.Background()
	for _, tc := range []struct {
		name            string
		luaScript       string
		script          string
		chunk           string
		line            int
		msg             string
		hook            Hook
		call            func(p *Program) error
		generatedIntact bool
	}{{
		name:      "a runtime error in luaScript",
		luaScript: "function InterpretStatus(obj)\n  local conditions = obj.status.conditions\n  return conditions.first.type\nend\n",
		chunk:     "karta:deployment/luaScript", line: 3, msg: "attempt to index a non-table object(nil) with key 'type'",
		hook: HookInterpretStatus,
	}, {
		name:   "error() in a script",
		script: "function GetPodSpecs(obj)\n  error(\"no pods for \" .. obj.metadata.name)\nend\n",
		chunk:  "script:fix.lua", line: 2, msg: "no pods for web",
		hook: HookGetPodSpecs,
	}, {
		name:      "a top-level error in luaScript fails the overridden hooks",
		luaScript: "local limits = {cpu = 1}\nfunction InterpretStatus(obj) return karta.generated.InterpretStatus(obj) end\nlocal x = limits.gpu.count\n",
		chunk:     "karta:deployment/luaScript", line: 3, msg: "attempt to index a non-table object(nil) with key 'count'",
		hook: HookInterpretStatus, generatedIntact: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			k := deploymentKarta(t)
			if tc.luaScript != "" {
				k = withLuaScript(t, k, tc.luaScript)
			}
			var opts Options
			if tc.script != "" {
				opts.Scripts = []Script{{Name: "fix.lua", Source: tc.script}}
			}
			p := progCompile(t, k, opts)
			var err error
			switch tc.hook {
			case HookInterpretStatus:
				_, err = p.InterpretStatus(ctx, obj)
			case HookGetPodSpecs:
				_, err = p.GetPodSpecs(ctx, obj)
			case HookGetGangGroups:
				_, err = p.GetGangGroups(ctx, obj, nil)
			}
			require.Error(t, err)
			var he *HookError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, "deployment", he.Karta)
			assert.Equal(t, tc.hook, he.Hook)
			var le *luaapi.LuaError
			if assert.ErrorAs(t, err, &le) {
				assert.Equal(t, tc.chunk, le.Chunk)
				assert.Equal(t, tc.line, le.Line)
			}
			assert.Contains(t, err.Error(), tc.msg)
			assert.True(t, strings.HasPrefix(err.Error(), `karta "deployment": `+string(tc.hook)+`: `+tc.chunk+":"), err.Error())
			if tc.generatedIntact {
				_, err := p.GetPodSpecs(ctx, obj)
				assert.NoError(t, err, "a hook no chunk overrides does not run the chunks")
			}
			assert.EqualValues(t, 1, p.PoolStats().Discarded, "the failed state is discarded")
		})
	}

	t.Run("compile errors name the chunk", func(t *testing.T) {
		_, err := Compile(deploymentKarta(t), Options{Scripts: []Script{{Name: "fix.lua", Source: "function GetPodSpecs(obj)\n  return {\nend\n"}}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `karta "deployment": `)
		assert.Contains(t, err.Error(), "script:fix.lua")

		k := deploymentKarta(t).DeepCopy()
		k.Spec.LuaScript = "function InterpretStatus(obj)\n  return (\nend\n"
		_, err = Compile(k, Options{})
		var ve *karta.ValidationError
		require.ErrorAs(t, err, &ve, "a luaScript that does not compile is a validation error")
		assert.Contains(t, err.Error(), "does not compile")
	})
}

func TestOverrideArgoHealth(t *testing.T) {
	argo := func(body string) Options {
		return Options{Scripts: []Script{{Name: "health.lua", Source: body}}}
	}
	objs := deploymentObjs(t)
	ctx := context.Background()

	// Argo CD's own Deployment check, abridged: it reads the global obj.
	p := progCompile(t, deploymentKarta(t), argo(`
hs = {}
if obj.spec.paused then
  hs.status = "Suspended"
  hs.message = "Deployment is paused"
  return hs
end
if obj.status ~= nil and obj.status.availableReplicas == obj.spec.replicas then
  return {status = "Healthy", message = "ok"}
end
hs.status = "Progressing"
hs.message = "Waiting for rollout to finish: " .. tostring(obj.status.updatedReplicas) .. " of " .. obj.spec.replicas .. " updated"
return hs
`))
	assert.True(t, p.HookEnabled(HookInterpretHealth))
	assert.True(t, p.Overridden(HookInterpretStatus))

	res, err := p.InterpretStatus(ctx, objs[0])
	require.NoError(t, err)
	assert.Equal(t, karta.StatusRunning, res.Status)
	assert.Equal(t, []karta.Status{karta.StatusRunning}, res.Matched)
	assert.Equal(t, "ok", res.Message)
	assert.Len(t, res.Conditions, 2, "conditions still come from the Karta")

	res, err = p.InterpretStatus(ctx, objs[1])
	require.NoError(t, err)
	assert.Equal(t, karta.StatusSuspended, res.Status)
	assert.Equal(t, "Deployment is paused", res.Message)

	res, err = p.InterpretStatus(ctx, objs[2])
	require.NoError(t, err)
	assert.Equal(t, karta.StatusInitializing, res.Status, "Progressing → Initializing")
	assert.Equal(t, []karta.Status{karta.StatusInitializing}, res.Matched)
	assert.Equal(t, "Waiting for rollout to finish: nil of 2 updated", res.Message)

	for _, tc := range []struct {
		word    string
		status  karta.Status
		matched []karta.Status
	}{
		{"Degraded", karta.StatusDegraded, []karta.Status{karta.StatusDegraded}},
		{"Missing", karta.StatusUndefined, []karta.Status{}},
		{"Unknown", karta.StatusUndefined, []karta.Status{}},
	} {
		t.Run(tc.word, func(t *testing.T) {
			p := progCompile(t, deploymentKarta(t), argo(`return {status = "`+tc.word+`", message = "m"}`))
			res, err := p.InterpretStatus(ctx, objs[0])
			require.NoError(t, err)
			assert.Equal(t, tc.status, res.Status)
			assert.Equal(t, tc.matched, res.Matched)
		})
	}
	t.Run("nil is Undefined", func(t *testing.T) {
		p := progCompile(t, deploymentKarta(t), argo(`return nil`))
		res, err := p.InterpretStatus(ctx, objs[0])
		require.NoError(t, err)
		assert.Equal(t, karta.StatusUndefined, res.Status)
		assert.Equal(t, []karta.Status{}, res.Matched)
	})
	for _, tc := range []struct{ name, body, err string }{
		{"an unknown word", `return {status = "Healthy!", message = "m"}`, `Argo CD health status "Healthy!" is not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown`},
		{"a status that is not a string", `return {status = 1}`, "status must be a string"},
		{"not a table", `return "Healthy"`, "must return {status=..., message=...}"},
		{"a Lua error", "local x = obj.nope.deeper\nreturn {status = \"Healthy\"}", "script:health.lua:1: attempt to index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := progCompile(t, deploymentKarta(t), argo(tc.body))
			_, err := p.InterpretStatus(ctx, objs[0])
			var he *HookError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, HookInterpretStatus, he.Hook)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
	t.Run("an Argo chunk that also defines hooks is invalid", func(t *testing.T) {
		k := deploymentKarta(t).DeepCopy()
		k.Spec.LuaScript = "function GetPodSpecs(obj) return {} end\nreturn {status = \"Healthy\"}\n"
		_, err := Compile(k, Options{})
		var ve *karta.ValidationError
		require.True(t, errors.As(err, &ve), "got %v", err)
	})
}

// TestOverrideSuspendCallsGenerated: a script wrapping the generated
// Suspend gets the revised object as tables and hands it back; the result
// is applied as a diff, so the patch holds exactly the two changes.
func TestOverrideSuspendCallsGenerated(t *testing.T) {
	p := progCompile(t, deploymentKarta(t), Options{Scripts: []Script{{Name: "suspend.lua", Source: `
function Suspend(obj)
  local r = karta.generated.Suspend(obj)
  r.metadata.annotations = r.metadata.annotations or {}
  r.metadata.annotations["example.com/suspended-by"] = "script"
  return r
end
`}}})
	ctx := context.Background()
	obj := deploymentObjs(t)[0]
	before := obj.DeepCopy()
	rev, err := p.Suspend(ctx, obj)
	require.NoError(t, err)
	assert.Equal(t, []PatchOp{
		{Op: "add", Path: "/metadata/annotations/example.com~1suspended-by", Value: "script"},
		{Op: "add", Path: "/spec/paused", Value: true},
	}, rev.Patch)
	assert.Equal(t, before.Object, obj.Object, "the input is not modified")
	paused, _, _ := unstructured.NestedBool(rev.Object.Object, "spec", "paused")
	assert.True(t, paused)
	mem := rev.Object.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["memory"]
	assert.Equal(t, json.Number("1.28e8"), mem, "untouched values keep their spelling")

	// Resume is still the generated one: it runs in Go on the input.
	res, err := p.Resume(ctx, rev.Object)
	require.NoError(t, err)
	assert.Equal(t, []PatchOp{{Op: "replace", Path: "/spec/paused", Value: false}}, res.Patch)
}
