package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
	"github.com/kartalua/karta/interpreter"
)

var trainJobKind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "TrainJob"}

// kartaObject is a Karta file as the API server returns it: with the
// metadata the server adds and a status the controller wrote.
func kartaObject(t *testing.T, file, name string) *unstructured.Unstructured {
	t.Helper()
	objs := clustertest.Read(t, file)
	require.Len(t, objs, 1)
	k := objs[0]
	k.SetName(name)
	k.SetUID(types.UID("uid-" + name))
	k.SetResourceVersion("4711")
	k.SetGeneration(2)
	require.NoError(t, unstructured.SetNestedField(k.Object, "2025-06-01T10:00:00Z", "metadata", "creationTimestamp"))
	require.NoError(t, unstructured.SetNestedSlice(k.Object, []any{map[string]any{
		"apiVersion": "run.ai/v1alpha1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{}},
		"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2025-06-01T10:00:00Z",
	}}, "metadata", "managedFields"))
	require.NoError(t, unstructured.SetNestedField(k.Object, map[string]any{"observedGeneration": int64(2), "conditions": []any{map[string]any{
		"type": "Accepted", "status": "True", "reason": "Valid", "message": "", "lastTransitionTime": "2025-06-01T10:00:01Z", "observedGeneration": int64(2),
	}}}, "status"))
	return k
}

// The registry is the built-ins plus the cluster's Kartas: one for a new
// kind adds it, one for a built-in's kind replaces the built-in, an
// invalid one is skipped with one warning line, and a second one for a
// kind already taken is skipped too.
func TestRegistryAddsClusterKartas(t *testing.T) {
	trainjob := kartaObject(t, "../examples/kartas/trainjob.yaml", "trainjob")
	pytorch := kartaObject(t, "../examples/kartas/pytorchjob.yaml", "my-pytorchjob")
	broken := kartaObject(t, "../examples/kartas/broken.yaml", "broken")
	// Younger, though its name sorts first: the oldest wins, as in the
	// Karta controller.
	again := kartaObject(t, "../examples/kartas/trainjob.yaml", "aa-trainjob-later")
	require.NoError(t, unstructured.SetNestedField(again.Object, "2025-06-01T11:00:00Z", "metadata", "creationTimestamp"))
	c, _ := fakeCluster(t, trainjob, pytorch, broken, again)
	base := builtins(t)

	var warnings []string
	reg, err := c.Registry(context.Background(), cluster.RegistryOptions{Base: base, Warn: func(l string) { warnings = append(warnings, l) }})
	require.NoError(t, err)

	p, ok := reg.Get(trainJobKind)
	require.True(t, ok, "a Karta for a new kind is added")
	assert.Equal(t, "trainjob", p.Name())
	p, ok = reg.Get(schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"})
	require.True(t, ok)
	assert.Equal(t, "my-pytorchjob", p.Name(), "a cluster Karta replaces the built-in of its kind")
	assert.Len(t, reg.List(), len(base.List())+1)
	builtinPyTorch, _ := base.ByName("pytorchjob")
	assert.Equal(t, "pytorchjob", builtinPyTorch.Name(), "the base registry is left alone")

	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], "kartas/broken: skipped: ")
	assert.Contains(t, warnings[0], `spec.structureDefinition.childComponents[0].ownerRef: ownerRef "workr" does not name a component`)
	assert.NotContains(t, warnings[0], "\n")
	assert.Equal(t, "kartas/aa-trainjob-later: skipped: kartas/trainjob already describes example.com/v1, Kind=TrainJob (the oldest Karta of a kind wins)", warnings[1])
}

// Legacy ResourceInterfaces count when their CRD is served; created in the
// same second as a Karta for the same kind, the Karta wins. Without either
// CRD the registry is the built-ins.
func TestRegistryResourceInterfaces(t *testing.T) {
	ri := kartaObject(t, "../examples/kartas/trainjob.yaml", "legacy-trainjob")
	ri.SetAPIVersion(cluster.ResourceInterfaceKind.GroupVersion().String())
	ri.SetKind(cluster.ResourceInterfaceKind.Kind)
	resources := append(clustertest.Core(), clustertest.Resource{GVK: cluster.ResourceInterfaceKind})
	c, _ := clustertest.New(t, resources, ri)
	reg, err := c.Registry(context.Background(), cluster.RegistryOptions{Base: builtins(t)})
	require.NoError(t, err)
	p, ok := reg.Get(trainJobKind)
	require.True(t, ok)
	assert.Equal(t, "legacy-trainjob", p.Name())

	k := kartaObject(t, "../examples/kartas/trainjob.yaml", "zz-trainjob")
	c, _ = clustertest.New(t, resources, ri, k)
	var warnings []string
	reg, err = c.Registry(context.Background(), cluster.RegistryOptions{Base: builtins(t), Warn: func(l string) { warnings = append(warnings, l) }})
	require.NoError(t, err)
	p, ok = reg.Get(trainJobKind)
	require.True(t, ok)
	assert.Equal(t, "zz-trainjob", p.Name(), "a Karta before a ResourceInterface of the same age")
	assert.Equal(t, []string{"resourceinterfaces/legacy-trainjob: skipped: kartas/zz-trainjob already describes example.com/v1, Kind=TrainJob (the oldest Karta of a kind wins)"}, warnings)

	bare, _ := clustertest.New(t, clustertest.Builtins(t))
	reg, err = bare.Registry(context.Background(), cluster.RegistryOptions{Base: builtins(t)})
	require.NoError(t, err)
	assert.Len(t, reg.List(), len(builtins(t).List()))
}

// userDeploymentKarta is a team's own Karta for apps/v1 Deployment: one
// pod-bearing component, Running once every replica is available.
const userDeploymentKarta = `apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: web-deployments
spec:
  structureDefinition:
    rootComponent:
      name: web
      kind: {group: apps, version: v1, kind: Deployment}
      specDefinition: {podTemplateSpecPath: .spec.template}
      scaleDefinition: {replicasPath: .spec.replicas}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["pod-template-hash"]'}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: '.status.availableReplicas == .spec.replicas', expectedResult: "true"}
  instructions:
    gangScheduling:
      podGroups:
      - name: all
        members: [{componentName: web}]
`

// userJobKarta is a Karta named "job", like the built-in for batch/v1 Job,
// for another kind of Job.
const userJobKarta = `apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: job
spec:
  structureDefinition:
    rootComponent:
      name: job
      kind: {group: example.com, version: v1, kind: Job}
      specDefinition: {podTemplateSpecPath: .spec.template}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: .status.running, expectedResult: "true"}}]
`

// A Karta of the cluster for a built-in's kind replaces the built-in for
// that kind, in every command: a team's own Deployment Karta is what get
// uses for Deployments, by any of their names, and the built-in's name
// then means nothing. A cluster Karta that takes a built-in's name for
// another kind takes the name too (the latest registered wins it, as it
// wins a kind), while the built-in keeps its kind.
func TestRegistryUserKartaForABuiltinKind(t *testing.T) {
	read := func(text, name string) *unstructured.Unstructured {
		file := filepath.Join(t.TempDir(), name+".yaml")
		require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
		return kartaObject(t, file, name)
	}
	exampleJob := clustertest.Resource{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Job"}, Namespaced: true}
	objs := append(examples(t, "deployment"), read(userDeploymentKarta, "web-deployments"), read(userJobKarta, "job"))
	c, _ := clustertest.New(t, append(append(clustertest.Core(), clustertest.Builtins(t)...), exampleJob), objs...)
	base := builtins(t)
	var warnings []string
	reg, err := c.Registry(context.Background(), cluster.RegistryOptions{Base: base, Warn: func(l string) { warnings = append(warnings, l) }})
	require.NoError(t, err)
	assert.Empty(t, warnings)

	deployments := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	p, ok := reg.Get(deployments)
	require.True(t, ok)
	assert.Equal(t, "web-deployments", p.Name())
	builtinDeployment, ok := base.Get(deployments)
	require.True(t, ok)
	assert.Equal(t, "deployment", builtinDeployment.Name(), "the built-ins are left alone")
	for _, arg := range []string{"deployments", "deploy", "Deployment", "deployment", "web-deployments"} {
		kinds, err := c.Kinds(reg, arg)
		require.NoError(t, err, arg)
		require.Len(t, kinds, 1, arg)
		assert.Equal(t, "web-deployments", kinds[0].Program.Name(), "%s: the cluster's Karta, even by the built-in's name (now the kind's name only)", arg)
	}
	ws, err := c.List(context.Background(), mustKinds(t, c, reg, "deployments"), cluster.ListOptions{Namespace: "inference"})
	require.NoError(t, err)
	require.Len(t, ws, 1)
	assert.Equal(t, "web-deployments", ws[0].Karta)
	assert.Equal(t, "Deployment inference/vllm-llama3-8b Running [web 4/3] [4/3]", row(ws[0]),
		"the team's Karta counts the evicted pod the built-in leaves out, and makes one gang")

	kinds := mustKinds(t, c, reg, "job")
	require.Len(t, kinds, 1)
	assert.Equal(t, exampleJob.GVK, kinds[0].GVK(), "the name job means the cluster's Karta")
	kinds = mustKinds(t, c, reg, "jobs.batch")
	require.Len(t, kinds, 1)
	assert.Equal(t, "job", kinds[0].Program.Name())
	assert.Equal(t, schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, kinds[0].GVK(), "the built-in keeps its kind")
	kinds = mustKinds(t, c, reg, "jobs")
	require.Len(t, kinds, 1, "the plural means the group kubectl ranks first")
	assert.Equal(t, "batch", kinds[0].GVK().Group)
	kinds = mustKinds(t, c, reg, "jobs.example.com")
	require.Len(t, kinds, 1)
	assert.Equal(t, exampleJob.GVK, kinds[0].GVK(), "the other group by its qualified name")
}

func mustKinds(t *testing.T, c *cluster.Client, reg *interpreter.Registry, arg string) []*cluster.Kind {
	t.Helper()
	kinds, err := c.Kinds(reg, arg)
	require.NoError(t, err, arg)
	return kinds
}
