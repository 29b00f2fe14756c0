package cluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
	"github.com/kartalua/karta/cluster/refs"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// Watch with references resolved from a cache: the row of a TrainJob whose
// Karta reads its ClusterTrainingRuntime follows a change of the runtime
// (ListOptions.Referenced), not only of the TrainJob.
func TestWatchFollowsReferences(t *testing.T) {
	runtimeGVK := schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"}
	objs := clustertest.Read(t, "../examples/trainjob/running.yaml", "../examples/trainjob/refs/torchtune-llama3.2-3b.yaml")
	resources := append(append(clustertest.Core(), clustertest.Builtins(t)...), clustertest.Resource{GVK: runtimeGVK},
		clustertest.Resource{GVK: schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainingRuntime"}, Namespaced: true})
	c, dyn := clustertest.New(t, resources, objs...)
	ks, err := karta.LoadFile("../examples/kartas/trainjob-runtime.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	reg := builtins(t)
	reg.Put(p)
	kinds, err := c.Kinds(reg, "trainjobs.trainer.kubeflow.org")
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cache, err := refs.New(c.Dynamic, c.Mapper, refs.Options{})
	require.NoError(t, err)
	cache.Watch([]schema.GroupVersionKind{runtimeGVK})
	cache.Start(ctx)
	require.True(t, cache.WaitForSync(ctx))
	ctx = interpreter.WithResolver(ctx, cache, nil)

	initial := make(chan []cluster.Workload, 1)
	changed := make(chan cluster.Workload, 16)
	opts := cluster.WatchOptions{Namespace: "llm-team", Referenced: func(f func(string)) {
		cache.OnChange(func(_ schema.GroupVersionKind, u *unstructured.Unstructured) { f(u.GetNamespace()) })
	}}
	go func() {
		_ = c.Watch(ctx, kinds, opts, func(ws []cluster.Workload) error { initial <- ws; return nil },
			func(w cluster.Workload) error { changed <- w; return nil })
	}()
	first := receive(t, initial)
	require.Len(t, first, 1)
	assert.Len(t, first[0].Components, 3, "the runtime's jobs: %s", row(first[0]))

	// The runtime gains a job: the TrainJob's row follows.
	runtimes := dyn.Resource(schema.GroupVersionResource{Group: runtimeGVK.Group, Version: runtimeGVK.Version, Resource: "clustertrainingruntimes"})
	rt, err := runtimes.Get(ctx, "torchtune-llama3.2-3b", metav1.GetOptions{})
	require.NoError(t, err)
	jobs, _, err := unstructured.NestedSlice(rt.Object, "spec", "template", "spec", "replicatedJobs")
	require.NoError(t, err)
	extra := map[string]any{"name": "evaluator", "template": map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{"name": "eval", "image": "eval:1"}}}}}}}
	require.NoError(t, unstructured.SetNestedSlice(rt.Object, append(jobs, extra), "spec", "template", "spec", "replicatedJobs"))
	_, err = runtimes.Update(ctx, rt, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Len(t, receive(t, changed).Components, 4)
}
