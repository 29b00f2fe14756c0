package exporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kartalua/karta/cluster/refs"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// A TrainJob whose Karta reads its ClusterTrainingRuntime
// (examples/kartas/trainjob-runtime.yaml) is summarized again when its
// runtime changes (ReferenceChanged, on the references cache's OnChange),
// not only at the next resync, which this exporter never does: its gang
// is the TrainJob alone while the runtime is absent, the runtime's three
// jobs once it is created, and four once the runtime gains one.
func TestSeriesFollowAReferencedObject(t *testing.T) {
	ks, err := karta.LoadFile("../examples/kartas/trainjob-runtime.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	e := newEnv(t, p)
	cache, err := refs.New(e.dyn, e.mapper, refs.Options{})
	require.NoError(t, err)
	cache.WatchRegistry(e.reg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cache.Start(ctx)
	require.True(t, cache.WaitForSync(ctx))
	x := e.startWith(Options{References: cache})
	cache.OnChange(x.ReferenceChanged)

	e.create(example(t, "trainjob", "running.yaml")[0])
	gang := func(minMember float64) map[string]float64 {
		return map[string]float64{"gang=pg-2b8e6d14-7c3f-4a95-9e01-5d7b3c8a6f29-trainjob,group=trainer.kubeflow.org,kind=TrainJob,namespace=llm-team,workload=llama32-3b-alpaca": minMember}
	}
	e.waitSeriesWhere("karta_workload_gang_min_member", "kind=TrainJob", gang(1))

	rt := example(t, "trainjob", "refs/torchtune-llama3.2-3b.yaml")[0]
	_, err = e.dyn.Resource(resourceOf(clusterRuntimeGVK)).Create(context.Background(), rt, metav1.CreateOptions{})
	require.NoError(t, err)
	e.waitSeriesWhere("karta_workload_gang_min_member", "kind=TrainJob", gang(3))

	_, err = e.dyn.Resource(resourceOf(clusterRuntimeGVK)).Update(context.Background(), testobj.WithReplicatedJob(t, rt, "evaluator"), metav1.UpdateOptions{})
	require.NoError(t, err)
	e.waitSeriesWhere("karta_workload_gang_min_member", "kind=TrainJob", gang(4))
}
