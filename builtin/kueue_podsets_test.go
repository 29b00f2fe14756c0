package builtin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

// kueuePodSet is one of Kueue's PodSets for an object and the karta
// component instance whose pods it counts.
type kueuePodSet struct {
	name                string
	count               int64
	component, instance string
}

// karta counts as many pods per role as Kueue's PodSets for the kinds both
// support (kubernetes-sigs/kueue pkg/controller/jobs/KIND, each PodSets
// method, and its TestPodSets where the example re-states it); where they
// differ, the catalog (docs/catalog.md) says whose policy it is, and the
// case is not here.
func TestKueuePodSets(t *testing.T) {
	cases := []struct {
		name, karta, file string
		// refs are the files of the objects the Karta's references read.
		refs []string
		want []kueuePodSet
	}{
		// pytorchjob_controller_test.go TestPodSets "no annotations".
		{"pytorchjob", "pytorchjob", "../examples/pytorchjob/kueue-podsets.yaml", nil, []kueuePodSet{
			{"master", 1, "master", ""}, {"worker", 1, "worker", ""}}},
		// A PodSet per replica type, with its replicas (kubeflowjob PodSets).
		{"pytorchjob running", "pytorchjob", "../examples/pytorchjob/running.yaml", nil, []kueuePodSet{
			{"master", 1, "master", ""}, {"worker", 3, "worker", ""}}},
		// appwrapper_controller_test.go TestPodSets "no annotations": the
		// podSets appwrapper infers, one PodSet each.
		{"appwrapper inferred", "appwrapper", "../examples/appwrapper/kueue-podsets.yaml", nil, []kueuePodSet{
			{"aw-0", 1, "podset", "bert-distill/master"}, {"aw-1", 4, "podset", "bert-distill/worker"},
			{"aw-2", 2, "podset", "bert-distill-eval"}}},
		{"appwrapper declared and inferred", "appwrapper", "../examples/appwrapper/running.yaml", nil, []kueuePodSet{
			{"aw-0", 1, "podset", "granite-ft-data"}, {"aw-1", 1, "podset", "granite-ft/master"},
			{"aw-2", 3, "podset", "granite-ft/worker"}}},
		// trainjob_controller.go PodSets: the child JobSet's PodSets, one
		// per replicated job the runtime has (torchtune: both initializers
		// and the node; DeepSpeed: the launcher and numNodes - 1 nodes).
		{"trainjob torchtune", "trainjob", "../examples/trainjob/running.yaml", nil, []kueuePodSet{
			{"dataset-initializer", 1, "dataset-initializer", "dataset-initializer"},
			{"model-initializer", 1, "model-initializer", "model-initializer"}, {"node", 1, "node", "node"}}},
		{"trainjob deepspeed", "trainjob", "../examples/trainjob/mpi-running.yaml", nil, []kueuePodSet{
			{"launcher", 1, "launcher", "launcher"}, {"node", 3, "node", "node"}}},
		// With the runtime: one item per replicated job of the runtime, as
		// Kueue's PodSets of the JobSet the trainer builds from it.
		{"trainjob torchtune with its runtime", "trainjob", "../examples/trainjob/running.yaml", []string{"../examples/trainjob/refs/torchtune-llama3.2-3b.yaml"}, []kueuePodSet{
			{"dataset-initializer", 1, "job", "dataset-initializer"}, {"model-initializer", 1, "job", "model-initializer"}, {"node", 1, "job", "node"}}},
		{"trainjob deepspeed with its runtime", "trainjob", "../examples/trainjob/mpi-running.yaml", []string{"../examples/trainjob/refs/deepspeed-distributed.yaml"}, []kueuePodSet{
			{"launcher", 1, "job", "launcher"}, {"node", 3, "job", "node"}}},
		// trainjob_controller_test.go TestReconciler "workload is created
		// with the corresponding podsets" and "podset count for the trainer
		// job is set to .Spec.Trainer.NumNodes".
		{"trainjob kueue runtime", "trainjob", "testdata/kueue-trainjob/trainjob.yaml", []string{"testdata/kueue-trainjob/runtime.yaml"}, []kueuePodSet{
			{"node", 1, "job", "node"}, {"foo", 1, "job", "foo"}}},
		{"trainjob kueue runtime numNodes", "trainjob", "testdata/kueue-trainjob/trainjob-numnodes.yaml", []string{"testdata/kueue-trainjob/runtime.yaml"}, []kueuePodSet{
			{"node", 2, "job", "node"}, {"foo", 1, "job", "foo"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, ok, err := builtin.Get(tc.karta)
			require.NoError(t, err)
			require.True(t, ok)
			p, err := b.Compile(interpreter.Options{PoolSize: 1})
			require.NoError(t, err)
			var refs []*unstructured.Unstructured
			for _, f := range tc.refs {
				refs = append(refs, testobj.Read(t, f))
			}
			ctx := interpreter.WithResolver(context.Background(), interpreter.NewStaticResolver(refs...), nil)
			specs, err := p.GetPodSpecs(ctx, testobj.Read(t, tc.file))
			require.NoError(t, err)
			var got, want []kueuePodSet
			for i, it := range specs.Items {
				require.NotNil(t, it.Scale, it.Component)
				require.NotNil(t, it.Scale.Replicas, it.Component)
				name := ""
				if i < len(tc.want) {
					name = tc.want[i].name
				}
				got = append(got, kueuePodSet{name, *it.Scale.Replicas, it.Component, it.Instance})
			}
			want = append(want, tc.want...)
			assert.Equal(t, want, got, "karta's items, in order, are Kueue's PodSets")
		})
	}
}
