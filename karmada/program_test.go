package karmada

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

// The in-process Karmada hooks on the built-in examples, with
// hand-checked expectations.

func builtinProg(t *testing.T, name string) *interpreter.Program {
	t.Helper()
	return progCompile(t, progKartaFile(t, "../builtin/kartas/"+name+".yaml"), interpreter.Options{})
}

func exampleObj(t *testing.T, dir, file string) *unstructured.Unstructured {
	t.Helper()
	objs := progObjFile(t, "../examples/"+dir+"/"+file)
	require.Len(t, objs, 1)
	return objs[0]
}

func qty(t *testing.T, rl map[string]string, got any) {
	t.Helper()
	b, err := json.Marshal(got)
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, json.Unmarshal(b, &m))
	require.Len(t, m, len(rl), "resources %v", m)
	for k, want := range rl {
		g, err := resource.ParseQuantity(m[k])
		require.NoError(t, err, k)
		assert.Zero(t, g.Cmp(resource.MustParse(want)), "%s: got %s, want %s", k, m[k], want)
	}
}

func TestKarmadaComponentsPyTorchJob(t *testing.T) {
	p := builtinProg(t, "pytorchjob")
	obj := exampleObj(t, "pytorchjob", "running.yaml")
	comps, err := ForProgram(p).GetComponents(context.Background(), obj)
	require.NoError(t, err)
	require.Len(t, comps, 2)
	assert.Equal(t, "master", comps[0].Name)
	assert.Equal(t, int32(1), comps[0].Replicas)
	assert.Equal(t, "worker", comps[1].Name)
	assert.Equal(t, int32(3), comps[1].Replicas)
	for _, c := range comps {
		require.NotNil(t, c.ReplicaRequirements)
		qty(t, map[string]string{"cpu": "90", "memory": "900Gi", "nvidia.com/gpu": "8"}, c.ReplicaRequirements.ResourceRequest)
		require.NotNil(t, c.ReplicaRequirements.NodeClaim)
		assert.Equal(t, map[string]string{"node.kubernetes.io/instance-type": "p4d.24xlarge"}, c.ReplicaRequirements.NodeClaim.NodeSelector)
	}
	// Two pod-bearing components: GetReplicas is not defined.
	_, _, err = ForProgram(p).GetReplicas(context.Background(), obj)
	var nd *interpreter.NotDefinedError
	require.ErrorAs(t, err, &nd)
	assert.Contains(t, nd.Reason, "2 pod-bearing components [master worker]")
}

func TestKarmadaComponentsJobSetInstances(t *testing.T) {
	p := builtinProg(t, "jobset")
	obj := exampleObj(t, "jobset", "running.yaml")
	comps, err := ForProgram(p).GetComponents(context.Background(), obj)
	require.NoError(t, err)
	require.Len(t, comps, 2)
	// Named after the instance ids; replicas are (replicas // 1) * (parallelism // 1).
	assert.Equal(t, "driver", comps[0].Name)
	assert.Equal(t, int32(1), comps[0].Replicas)
	qty(t, map[string]string{"cpu": "4", "memory": "16Gi"}, comps[0].ReplicaRequirements.ResourceRequest)
	assert.Equal(t, "workers", comps[1].Name)
	assert.Equal(t, int32(8), comps[1].Replicas)
	qty(t, map[string]string{"cpu": "200", "memory": "1600Gi", "nvidia.com/gpu": "8"}, comps[1].ReplicaRequirements.ResourceRequest)

	// One pod-bearing component with instances: GetReplicas is not
	// defined for the kind (Program.Defines), whatever one object has.
	_, _, err = ForProgram(p).GetReplicas(context.Background(), obj)
	var nd *interpreter.NotDefinedError
	require.ErrorAs(t, err, &nd)
	assert.Contains(t, nd.Reason, `component "replicatedjob" has instances`)

	// The config map both templates mount is one dependency.
	deps, err := ForProgram(p).GetDependencies(context.Background(), obj)
	require.NoError(t, err)
	assert.Equal(t, []DependentObjectReference{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: obj.GetNamespace(), Name: "llama3-pretrain-config"},
	}, deps)
}

func TestKarmadaComponentNames(t *testing.T) {
	p := progFrom(t, podsKarta(`
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      instanceIdPath: .spec.groups[]?.name
      specDefinition: {podTemplateSpecPath: '.spec.groups[]?.template'}
      podSelector:
        componentInstanceSelector: {idPath: .metadata.labels.group}
        componentTypeSelector: {keyPath: .metadata.labels.role, value: worker}
    - name: ps
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainer
      specDefinition: {podTemplateSpecPath: .spec.ps}
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: ps}
`))
	ctx := context.Background()
	_, err := ForProgram(p).GetComponents(ctx, trainerObj(t, `
  groups:
  - {name: a-very-long-instance-name-beyond-32-chars, template: {spec: {containers: [{name: a}]}}}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "longer than 32 characters")
	_, err = ForProgram(p).GetComponents(ctx, trainerObj(t, `
  groups:
  - {name: ps, template: {spec: {containers: [{name: a}]}}}
  ps: {spec: {containers: [{name: p}]}}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `component "ps" instance "": the Karmada component name "ps" is already used by component "worker" instance "ps"`)
	comps, err := ForProgram(p).GetComponents(ctx, trainerObj(t, `
  groups:
  - {name: g1, template: {spec: {containers: [{name: a}]}}}`))
	require.NoError(t, err)
	require.Len(t, comps, 1, "ps is absent")
	assert.Equal(t, "g1", comps[0].Name)
	assert.Equal(t, int32(1), comps[0].Replicas, "no replicasPath: 1")
}

func TestKarmadaGetReplicasSingleComponent(t *testing.T) {
	p := builtinProg(t, "nimservice")
	obj := exampleObj(t, "nimservice", "running.yaml")
	n, req, err := ForProgram(p).GetReplicas(context.Background(), obj)
	require.NoError(t, err)
	spec := obj.Object["spec"].(map[string]any)
	want := int64(1)
	if r, ok := spec["replicas"]; ok {
		want = jsonInt(t, r)
	}
	if mn, ok := spec["multiNode"].(map[string]any); ok {
		want *= jsonInt(t, mn["size"])
	}
	assert.Equal(t, int32(want), n)
	require.NotNil(t, req)
}

func jsonInt(t *testing.T, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		require.NoError(t, err)
		return n
	case int64:
		return x
	case float64:
		return int64(x)
	}
	t.Fatalf("not a number: %T", v)
	return 0
}

func TestKarmadaGetReplicasScaledAncestors(t *testing.T) {
	p := progFrom(t, `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: groups}
spec:
  structureDefinition:
    rootComponent:
      name: set
      kind: {group: example.com, version: v1, kind: Set}
      scaleDefinition: {replicasPath: .spec.replicas}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
    childComponents:
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: set
      specDefinition: {podTemplateSpecPath: .spec.template}
      scaleDefinition: {replicasPath: .spec.size}
`)
	obj := progObj(t, `
apiVersion: example.com/v1
kind: Set
metadata: {name: s, namespace: ns}
spec:
  replicas: 3
  size: 4
  template:
    spec:
      containers:
      - name: c
        resources: {requests: {cpu: 500m}}
        envFrom: [{secretRef: {name: creds}}]
        env: [{name: X, valueFrom: {secretKeyRef: {name: token, key: t}}}]
      volumes: [{name: v, configMap: {name: settings}}]
`)
	ctx := context.Background()
	n, req, err := ForProgram(p).GetReplicas(ctx, obj)
	require.NoError(t, err)
	assert.Equal(t, int32(12), n, "4 × the root's 3")
	qty(t, map[string]string{"cpu": "500m"}, req.ResourceRequest)

	deps, err := ForProgram(p).GetDependencies(ctx, obj)
	require.NoError(t, err)
	assert.Equal(t, []DependentObjectReference{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "settings"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "creds"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "token"},
	}, deps)

	revised, err := ForProgram(p).ReviseReplica(ctx, obj, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(5), jsonInt(t, revised.Object["spec"].(map[string]any)["replicas"]), "the root's replicasPath")
	assert.Equal(t, int64(3), jsonInt(t, obj.Object["spec"].(map[string]any)["replicas"]), "the input is not modified")
}

func TestKarmadaHealthReflectAggregate(t *testing.T) {
	p := builtinProg(t, "pytorchjob")
	ctx := context.Background()
	running := exampleObj(t, "pytorchjob", "running.yaml")
	failed := exampleObj(t, "pytorchjob", "failed.yaml")
	completed := exampleObj(t, "pytorchjob", "completed.yaml")
	created := exampleObj(t, "pytorchjob", "created.yaml")
	for _, c := range []struct {
		obj  *unstructured.Unstructured
		want bool
	}{{running, true}, {completed, true}, {failed, false}, {created, false}} {
		st, err := p.InterpretStatus(ctx, c.obj)
		require.NoError(t, err)
		h, err := ForProgram(p).InterpretHealth(ctx, c.obj)
		require.NoError(t, err)
		assert.Equal(t, c.want, h, "status %s", st.Status)
	}

	status, err := ForProgram(p).ReflectStatus(ctx, running)
	require.NoError(t, err)
	assert.Equal(t, testobj.JSONRoundTrip(t, running.Object["status"]), testobj.JSONRoundTrip(t, status))
	// As the export returns it inside Karmada: Karmada's conversion of a
	// Lua result drops empty tables and the nulls of arrays.
	odd := running.DeepCopy()
	odd.Object["status"] = map[string]any{"a": map[string]any{}, "b": []any{}, "c": []any{nil, int64(2)}, "d": "x"}
	status, err = ForProgram(p).ReflectStatus(ctx, odd)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"c": []any{int64(2)}, "d": "x"}, status)
	noStatus := running.DeepCopy()
	delete(noStatus.Object, "status")
	status, err = ForProgram(p).ReflectStatus(ctx, noStatus)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{}, status)

	raw := func(o *unstructured.Unstructured) *runtime.RawExtension {
		b, err := json.Marshal(o.Object["status"])
		require.NoError(t, err)
		return &runtime.RawExtension{Raw: b}
	}
	items := []AggregatedStatusItem{
		{ClusterName: "a", Status: raw(running), Applied: true},
		{ClusterName: "b", Status: raw(failed), Applied: false}, // not applied: ignored
		{ClusterName: "c", Status: raw(completed), Applied: true},
		{ClusterName: "d", Status: raw(created), Applied: true},
	}
	out, err := ForProgram(p).AggregateStatus(ctx, noStatus, items)
	require.NoError(t, err)
	want, _ := json.Marshal(completed.Object["status"])
	got, _ := json.Marshal(out.Object["status"])
	assert.JSONEq(t, string(want), string(got), "Completed is the most decisive applied status")
	_, has := noStatus.Object["status"]
	assert.False(t, has, "desired is not modified")

	out, err = ForProgram(p).AggregateStatus(ctx, noStatus, nil)
	require.NoError(t, err)
	assert.Equal(t, noStatus.Object, out.Object)
}

func TestKarmadaHookOverride(t *testing.T) {
	k := progKartaFile(t, "../builtin/kartas/pytorchjob.yaml")
	k.Spec.LuaScript = `
function GetReplicas(obj)
  return 7, {resourceRequest = {cpu = "1"}}
end
function InterpretHealth(obj) return obj.metadata.name == "x" end
`
	p := progCompile(t, k, interpreter.Options{})
	obj := exampleObj(t, "pytorchjob", "running.yaml")
	n, req, err := ForProgram(p).GetReplicas(context.Background(), obj)
	require.NoError(t, err)
	assert.Equal(t, int32(7), n)
	qty(t, map[string]string{"cpu": "1"}, req.ResourceRequest)
	h, err := ForProgram(p).InterpretHealth(context.Background(), obj)
	require.NoError(t, err)
	assert.False(t, h, "the override decides")
}

func TestKarmadaLimitsApply(t *testing.T) {
	p := progCompile(t, progKartaFile(t, "../builtin/kartas/pytorchjob.yaml"), interpreter.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ForProgram(p).GetComponents(ctx, exampleObj(t, "pytorchjob", "running.yaml"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

func TestKarmadaAggregateStatusOverride(t *testing.T) {
	k := progKartaFile(t, "../builtin/kartas/pytorchjob.yaml")
	k.Spec.LuaScript = `
function AggregateStatus(desired, statusItems)
  if statusItems == nil then desired.status = {items = "none"} return desired end
  desired.status = {items = #statusItems, first = statusItems[1].clusterName}
  return desired
end
`
	p := progCompile(t, k, interpreter.Options{})
	obj := exampleObj(t, "pytorchjob", "running.yaml")
	out, err := ForProgram(p).AggregateStatus(context.Background(), obj, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"items": "none"}, out.Object["status"])
	out, err = ForProgram(p).AggregateStatus(context.Background(), obj, []AggregatedStatusItem{{ClusterName: "m1"}, {ClusterName: "m2"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"items": int64(2), "first": "m1"}, out.Object["status"])
}

// TestRetainOnlyWithAnOverride: a Karta generates no Retain; a script's
// Retain runs in process with Karmada's arguments.
func TestRetainOnlyWithAnOverride(t *testing.T) {
	k := progKartaFile(t, filepath.Join("..", "examples", "kartas", "pytorchjob.yaml"))
	obj := progObjFile(t, filepath.Join("..", "examples", "pytorchjob", "running.yaml"))[0]
	plain := progCompile(t, k, interpreter.Options{})
	_, err := ForProgram(plain).Retain(context.Background(), obj, obj)
	assert.ErrorIs(t, err, interpreter.ErrHookNotEnabled)
	assert.False(t, plain.HookEnabled(interpreter.HookRetain))

	scripted := progCompile(t, k, interpreter.Options{Scripts: []interpreter.Script{{Name: "retain.lua", Source: `
function Retain(desired, observed)
  desired.metadata.labels = {kept = observed.metadata.name}
  return desired
end`}}})
	observed := obj.DeepCopy()
	observed.SetName("member-copy")
	out, err := ForProgram(scripted).Retain(context.Background(), obj, observed)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"kept": "member-copy"}, out.GetLabels())
	assert.Equal(t, obj.GetName(), out.GetName())
}

// TestKarmadaComponentRequirementsAsExported checks the cases where
// kube.accuratePodRequirements gives little: the in-process components
// carry replicaRequirements exactly when the export's do, as Karmada's
// conversion leaves them (none where the helper returns nil; an empty
// object where its node claim has only an emptied selector).
func TestKarmadaComponentRequirementsAsExported(t *testing.T) {
	p := builtinProg(t, "pytorchjob")
	tests := []struct {
		name         string
		nodeSelector any // the worker's, nil to remove it
		want         *ComponentReplicaRequirements
	}{
		{name: "no containers, no selector", want: nil},
		{name: "no containers, empty selector", nodeSelector: map[string]any{}, want: nil},
		{name: "no containers, selector member {}", nodeSelector: map[string]any{"node.kubernetes.io/instance-type": map[string]any{}},
			want: &ComponentReplicaRequirements{}},
		{name: "no containers, a selector", nodeSelector: map[string]any{"pool": "a"},
			want: &ComponentReplicaRequirements{NodeClaim: &NodeClaim{NodeSelector: map[string]string{"pool": "a"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := exampleObj(t, "pytorchjob", "created.yaml")
			spec := []string{"spec", "pytorchReplicaSpecs", "Worker", "template", "spec"}
			require.NoError(t, unstructured.SetNestedField(obj.Object, nil, append(spec, "containers")...))
			unstructured.RemoveNestedField(obj.Object, append(spec, "nodeSelector")...)
			if tc.nodeSelector != nil {
				require.NoError(t, unstructured.SetNestedField(obj.Object, tc.nodeSelector, append(spec, "nodeSelector")...))
			}
			comps, err := ForProgram(p).GetComponents(context.Background(), obj)
			require.NoError(t, err)
			require.Len(t, comps, 2)
			assert.Equal(t, "worker", comps[1].Name)
			assert.Equal(t, tc.want, comps[1].ReplicaRequirements)
		})
	}
}
