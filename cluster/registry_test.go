package cluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
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
