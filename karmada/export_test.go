package karmada

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

// exportFailures are the built-ins whose export fails, with the part of
// the error that names why (an untranslatable expression fails the export
// and is named).
var exportFailures = map[string]string{}

// TestExportKarmadaMatchesInProcess exports every built-in, runs the
// customization in the karmada package's runtime on every example object
// of its kind, and requires the in-process hooks' results.
func TestExportKarmadaMatchesInProcess(t *testing.T) {
	files, err := filepath.Glob("../builtin/kartas/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var exported, failed []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			p := progCompile(t, progKartaFile(t, f), interpreter.Options{})
			data, err := Export(p)
			if want, ok := exportFailures[name]; ok {
				require.Error(t, err)
				var ee *interpreter.ExportError
				require.ErrorAs(t, err, &ee)
				assert.Contains(t, err.Error(), want)
				failed = append(failed, name)
				return
			}
			require.NoError(t, err)
			exported = append(exported, name)
			text := string(data)
			for _, banned := range []string{"karta.", "jq(", "gsub", "rep("} {
				assert.NotContains(t, text, banned, "the export is self-contained")
			}
			custs, err := Load(data, name+".yaml")
			require.NoError(t, err)
			require.Len(t, custs, 1)
			assert.Equal(t, "karta-"+p.Name(), custs[0].Name)
			in, err := NewInterpreter(custs, Options{})
			require.NoError(t, err)
			defer in.Close()
			objs := exampleObjects(t, name, p)
			require.NotEmpty(t, objs, "examples of %s", name)
			compareExport(t, p, in, objs)
		})
	}
	sort.Strings(exported)
	sort.Strings(failed)
	t.Logf("exported: %v; not exported: %v", exported, failed)
	assert.Len(t, failed, len(exportFailures))
}

// exportedInterpreter exports p and loads the customization, as the file
// name, into the karmada package's runtime, closed when the test ends.
func exportedInterpreter(t *testing.T, p *interpreter.Program, name string) ([]byte, *Interpreter) {
	t.Helper()
	data, err := Export(p)
	require.NoError(t, err)
	custs, err := Load(data, name)
	require.NoError(t, err)
	in, err := NewInterpreter(custs, Options{})
	require.NoError(t, err)
	t.Cleanup(in.Close)
	return data, in
}

// exampleObjects reads examples/<name>/*.yaml, keeping objects of p's kind.
func exampleObjects(t *testing.T, name string, p *interpreter.Program) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob("../examples/" + name + "/*.yaml")
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		objs, err := LoadObjects(data, f)
		if err != nil {
			continue
		}
		for _, o := range objs {
			if o.GroupVersionKind() == p.GVK() {
				out = append(out, o)
			}
		}
	}
	return out
}

// dropEmpty deletes nested empty objects and arrays and null members, as
// Lua tables cannot hold nil and Karmada's result pipeline does to what a
// script returns: status results are compared without them.
func dropEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			e = dropEmpty(e)
			if e == nil || isEmpty(e) { // a null member does not reach Lua
				continue
			}
			out[k] = e
		}
		return out
	case []any:
		out := []any{}
		for _, e := range x {
			out = append(out, dropEmpty(e))
		}
		return out
	}
	return v
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func compareExport(t *testing.T, p *interpreter.Program, in *Interpreter, objs []*unstructured.Unstructured) {
	ctx := context.Background()
	both := func(what string, gotErr, wantErr error, got, want any) {
		t.Helper()
		if wantErr != nil || gotErr != nil {
			assert.Equal(t, wantErr != nil, gotErr != nil, "%s: in-process error %v, exported error %v", what, wantErr, gotErr)
			return
		}
		assert.Equal(t, testobj.JSONRoundTrip(t, want), testobj.JSONRoundTrip(t, got), what)
	}
	gvk := p.GVK()
	var items []AggregatedStatusItem
	for i, obj := range objs {
		where := obj.GetName() + " " + string(rune('a'+i))
		if in.HookEnabled(gvk, OpInterpretReplica) {
			n, req, err := in.GetReplicas(ctx, obj)
			wn, wreq, werr := ForProgram(p).GetReplicas(ctx, obj)
			both(where+": GetReplicas", err, werr, []any{n, req}, []any{wn, wreq})
		} else {
			_, _, werr := ForProgram(p).GetReplicas(ctx, obj)
			var nd *interpreter.NotDefinedError
			assert.ErrorAs(t, werr, &nd, "GetReplicas is exported iff defined")
		}
		if in.HookEnabled(gvk, OpInterpretComponent) {
			c, err := in.GetComponents(ctx, obj)
			wc, werr := ForProgram(p).GetComponents(ctx, obj)
			both(where+": GetComponents", err, werr, c, wc)
		}
		if in.HookEnabled(gvk, OpReviseReplica) {
			r, err := in.ReviseReplica(ctx, obj.DeepCopy(), 5)
			wr, werr := ForProgram(p).ReviseReplica(ctx, obj, 5)
			var g, w any
			if r != nil {
				g = dropEmpty(testobj.JSONRoundTrip(t, r.Object))
			}
			if wr != nil {
				w = dropEmpty(testobj.JSONRoundTrip(t, wr.Object))
			}
			both(where+": ReviseReplica", err, werr, g, w)
		} else {
			_, werr := ForProgram(p).ReviseReplica(ctx, obj, 5)
			assert.Error(t, werr, "ReviseReplica is exported iff defined")
		}
		s, err := in.ReflectStatus(ctx, obj)
		ws, werr := ForProgram(p).ReflectStatus(ctx, obj)
		both(where+": ReflectStatus", err, werr, dropEmpty(testobj.JSONRoundTrip(t, s)), dropEmpty(testobj.JSONRoundTrip(t, ws)))
		h, err := in.InterpretHealth(ctx, obj)
		wh, werr := ForProgram(p).InterpretHealth(ctx, obj)
		both(where+": InterpretHealth", err, werr, h, wh)
		if in.HookEnabled(gvk, OpInterpretDependency) {
			d, err := in.GetDependencies(ctx, obj)
			wd, werr := ForProgram(p).GetDependencies(ctx, obj)
			both(where+": GetDependencies", err, werr, d, wd)
		}
		if st, ok := obj.Object["status"]; ok {
			raw, err := json.Marshal(st)
			require.NoError(t, err)
			items = append(items, AggregatedStatusItem{ClusterName: where, Status: &runtime.RawExtension{Raw: raw}, Applied: i%3 != 2})
		}
	}
	desired := objs[0].DeepCopy()
	delete(desired.Object, "status")
	for _, its := range [][]AggregatedStatusItem{nil, items, reversed(items)} {
		a, err := in.AggregateStatus(ctx, desired, its)
		wa, werr := ForProgram(p).AggregateStatus(ctx, desired, its)
		var g, w any
		if a != nil {
			g = dropEmpty(testobj.JSONRoundTrip(t, a.Object))
		}
		if wa != nil {
			w = dropEmpty(testobj.JSONRoundTrip(t, wa.Object))
		}
		both("AggregateStatus", err, werr, g, w)
	}
}

func reversed(items []AggregatedStatusItem) []AggregatedStatusItem {
	out := make([]AggregatedStatusItem, len(items))
	for i, it := range items {
		out[len(items)-1-i] = it
	}
	return out
}

// setKarta is a Karta whose root has an assignable replicasPath and whose
// one component uses the podSpec style with metadata.
const setKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: sets}
spec:
  structureDefinition:
    rootComponent:
      name: set
      kind: {group: example.com, version: v1, kind: Set}
      scaleDefinition: {replicasPath: .spec.scale.replicas}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
          failed: [{byExpression: {expression: '.status.errors // 0 | . > 2', expectedResult: "true"}}]
    childComponents:
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: set
      specDefinition: {podSpecPath: .spec.pod, metadataPath: .spec.meta}
      scaleDefinition: {replicasPath: .spec.size}
`

func TestExportKarmadaReviseReplicaAndPodSpec(t *testing.T) {
	p := progFrom(t, setKarta)
	_, in := exportedInterpreter(t, p, "sets.yaml")
	gvk := p.GVK()
	for _, op := range []Operation{OpInterpretReplica, OpInterpretComponent, OpReviseReplica,
		OpInterpretStatus, OpInterpretHealth, OpAggregateStatus, OpInterpretDependency} {
		assert.True(t, in.HookEnabled(gvk, op), "%s exported", op)
	}
	assert.False(t, in.HookEnabled(gvk, OpRetain), "Retain is never generated")
	var objs []*unstructured.Unstructured
	for _, spec := range []string{
		"  scale: {replicas: 3}\n  size: 2\n  meta: {labels: {a: b}}\n  pod: {containers: [{name: c, resources: {requests: {cpu: 250m}}, envFrom: [{configMapRef: {name: cm}}]}], volumes: [{name: v, secret: {secretName: s}}]}\nstatus: {phase: Running}",
		"  size: \"4\"\n  pod: {containers: [{name: c}]}\nstatus: {phase: Pending, errors: 3}",
		"  pod: null\n",
		"  scale: {replicas: 1.5}\n  pod: {containers: [{name: c}]}",
		"  scale: 7\n  pod: {containers: [{name: c}]}",
	} {
		objs = append(objs, progObj(t, "apiVersion: example.com/v1\nkind: Set\nmetadata: {name: s, namespace: ns}\nspec:\n"+spec))
	}
	compareExport(t, p, in, objs)

	// Spot checks of what was compared.
	ctx := context.Background()
	n, _, err := in.GetReplicas(ctx, objs[0])
	require.NoError(t, err)
	assert.Equal(t, int32(6), n)
	r, err := in.ReviseReplica(ctx, objs[0].DeepCopy(), 9)
	require.NoError(t, err)
	assert.Equal(t, int64(9), r.Object["spec"].(map[string]any)["scale"].(map[string]any)["replicas"])
	h, err := in.InterpretHealth(ctx, objs[1])
	require.NoError(t, err)
	assert.False(t, h, "errors 3 > 2: Failed")
	_, err = in.ReviseReplica(ctx, objs[4].DeepCopy(), 9)
	require.Error(t, err, "spec.scale is not an object")
}

func TestExportKarmadaFailsNamingTheExpression(t *testing.T) {
	for expr, reason := range map[string]string{
		`.spec.size as [$s] | $s`:       "destructuring patterns (as [...] or as {...}) is outside the jq subset that runs without gojq",
		`.spec.size | test("^[0-9]+$")`: "function test/1 is outside the jq subset that runs without gojq",
	} {
		k := progKarta(t, strings.Replace(setKarta, "replicasPath: .spec.size", "replicasPath: '"+expr+"'", 1))
		p := progCompile(t, k, interpreter.Options{})
		_, err := Export(p)
		var ee *interpreter.ExportError
		require.ErrorAs(t, err, &ee, expr)
		assert.Equal(t, expr, ee.Expr)
		assert.Equal(t, `component "worker": replicasPath`, ee.Field)
		assert.Contains(t, err.Error(), reason)
		assert.Contains(t, err.Error(), strconv.Quote(expr), "the error names the expression")
	}
	var ee *interpreter.ExportError

	k := progKarta(t, strings.Replace(setKarta, "replicasPath: .spec.scale.replicas", "replicasPath: '.spec.r[0]'", 1))
	_, err := Export(progCompile(t, k, interpreter.Options{}))
	require.ErrorAs(t, err, &ee, "an assignable path that is not a field chain")
	assert.Equal(t, `component "set": replicasPath`, ee.Field)
}

func TestExportKarmadaOverrides(t *testing.T) {
	k := progKarta(t, setKarta)
	k.Spec.LuaScript = "function Retain(desired, observed)\n  desired.status = observed.status\n  return desired\nend\n"
	data, err := Export(progCompile(t, k, interpreter.Options{}))
	require.NoError(t, err)
	custs, err := Load(data, "sets.yaml")
	require.NoError(t, err)
	require.NotNil(t, custs[0].Spec.Customizations.Retention, "an override's Retain is exported")
	in, err := NewInterpreter(custs, Options{})
	require.NoError(t, err)
	defer in.Close()
	desired := progObj(t, "apiVersion: example.com/v1\nkind: Set\nmetadata: {name: s}\nspec: {size: 1}")
	observed := progObj(t, "apiVersion: example.com/v1\nkind: Set\nmetadata: {name: s}\nspec: {size: 1}\nstatus: {phase: Running}")
	out, err := in.Retain(context.Background(), desired, observed)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"phase": "Running"}, out.Object["status"])

	// An override of hooks Karmada never reads is left out: the export is
	// the Karta's alone.
	plain, err := Export(progCompile(t, progKarta(t, setKarta), interpreter.Options{}))
	require.NoError(t, err)
	for _, script := range []string{
		"function GetPodSpecs(obj) return karta.generated.GetPodSpecs(obj) end",
		"function GetPodSpecs(obj) return {} end\nfunction GetGangGroups(obj, pods) return karta.generated.GetGangGroups(obj, pods) end",
	} {
		got, err := Export(progCompile(t, progKarta(t, setKarta), interpreter.Options{Scripts: []interpreter.Script{{Name: "x.lua", Source: script}}}))
		require.NoError(t, err, script)
		assert.Equal(t, string(plain), string(got), script)
	}

	for script, want := range map[string]string{
		"function InterpretStatus(obj) return karta.generated.InterpretStatus(obj) end": "uses karta",
		// With another hook or a helper beside it, the override is carried
		// and refused for its GetPodSpecs.
		"function GetPodSpecs(obj) return {} end\nfunction Suspend(obj) return obj end": "overrides GetPodSpecs",
		"function GetPodSpecs(obj) return {} end\nfunction helper() end":                "overrides GetPodSpecs",
	} {
		_, err := Export(progCompile(t, progKarta(t, setKarta), interpreter.Options{Scripts: []interpreter.Script{{Name: "x.lua", Source: script}}}))
		var ee *interpreter.ExportError
		require.ErrorAs(t, err, &ee)
		assert.Contains(t, err.Error(), want)
	}
}

// fragKarta has a fragmented component whose view mixes containerPath,
// imagePath, resourcesPath and containersPath.
const fragKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: frags}
spec:
  structureDefinition:
    rootComponent:
      name: frag
      kind: {group: example.com, version: v1, kind: Frag}
      scaleDefinition: {replicasPath: .spec.replicas}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
      specDefinition:
        fragmentedPodSpecDefinition:
          labelsPath: .spec.labels
          schedulerNamePath: .spec.scheduler
          nodeAffinityPath: .spec.nodeAffinity
          containerPath: .spec.main
          imagePath: .spec.image
          resourcesPath: .spec.resources
          containersPath: .spec.sidecars
`

func TestExportKarmadaFragmented(t *testing.T) {
	p := progFrom(t, fragKarta)
	_, in := exportedInterpreter(t, p, "frags.yaml")
	var objs []*unstructured.Unstructured
	for _, spec := range []string{
		// main from containerPath, its image and resources overridden.
		"  replicas: 2\n  labels: {a: b}\n  scheduler: s\n  main: {name: m, image: old, resources: {requests: {cpu: 9}}, envFrom: [{secretRef: {name: sec}}]}\n  image: new\n  resources: {requests: {cpu: 250m, memory: 1Gi}}\n  sidecars: [{name: side, env: [{name: e, valueFrom: {configMapKeyRef: {name: cm, key: k}}}]}]",
		// imagePath null removes the container's image; resourcesPath null its resources.
		"  main: {name: m, image: old, resources: {requests: {cpu: 9}}}\n  nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: k, operator: In, values: [v]}]}]}}",
		// No container: main from the image alone.
		"  image: only\n  resources: {limits: {cpu: 1}}",
		// Only sidecars.
		"  sidecars: [{name: a, resources: {requests: {cpu: 100m}}}, {name: b}]",
		// Nothing at all: every instance is present, with an empty view.
		"  replicas: 3",
		// A container that is not an object, and sidecars that are not an array.
		"  main: [1, 2]",
		"  sidecars: {a: 1}",
	} {
		objs = append(objs, progObj(t, "apiVersion: example.com/v1\nkind: Frag\nmetadata: {name: f, namespace: ns}\nspec:\n"+spec))
	}
	compareExport(t, p, in, objs)

	ctx := context.Background()
	n, req, err := in.GetReplicas(ctx, objs[0])
	require.NoError(t, err)
	assert.Equal(t, int32(2), n)
	require.NotNil(t, req)
	deps, err := in.GetDependencies(ctx, objs[0])
	require.NoError(t, err)
	assert.Len(t, deps, 2, "the main container's secret and the sidecar's config map")
	_, _, err = in.GetReplicas(ctx, objs[5])
	assert.Error(t, err, "containerPath yields an array")
}

// TestExportKarmadaRulesCarryWhatTheyReach: each rule's script carries
// what its function reaches, not the whole export: the status rules none
// of the pod-spec paths, the component rules no status, and
// statusReflection no jq runtime; every script defines its function.
func TestExportKarmadaRulesCarryWhatTheyReach(t *testing.T) {
	p := progCompile(t, progKartaFile(t, "../builtin/kartas/pytorchjob.yaml"), interpreter.Options{})
	data, err := Export(p)
	require.NoError(t, err)
	custs, err := Load(data, "pytorchjob")
	require.NoError(t, err)
	require.Len(t, custs, 1)
	rules := &custs[0].Spec.Customizations
	scripts := map[Operation]string{}
	for _, op := range Operations {
		if s := op.Script(rules); s != "" {
			scripts[op] = s
			assert.Contains(t, s, "function "+op.Hook()+"(", "the %s script defines %s", op.Field(), op.Hook())
		}
	}
	require.Len(t, scripts, 5, "componentResource, statusReflection, statusAggregation, healthInterpretation, dependencyInterpretation")
	for _, op := range []Operation{OpInterpretHealth, OpAggregateStatus} {
		assert.Contains(t, scripts[op], "function statusOf(")
		assert.NotContains(t, scripts[op], "pytorchReplicaSpecs", "%s reads no pod spec", op)
		assert.NotContains(t, scripts[op], "kube", "%s needs no kube", op)
	}
	for _, op := range []Operation{OpInterpretComponent, OpInterpretDependency} {
		assert.Contains(t, scripts[op], "-- .spec.pytorchReplicaSpecs.Master.template\n", "the jq stays above its accessor")
		assert.NotContains(t, scripts[op], "statusOf", "%s computes no status", op)
		assert.NotContains(t, scripts[op], "conditions", "%s reads no condition", op)
	}
	assert.NotContains(t, scripts[OpInterpretStatus], "local J, JX", "ReflectStatus needs no jq runtime")
	assert.NotContains(t, scripts[OpInterpretComponent], "function GetDependencies(")
	for op, s := range scripts {
		assert.Less(t, len(s), 20_000, "the %s script", op)
	}
}
