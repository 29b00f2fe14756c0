package gangoutput

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kartalua/karta/cluster/refs"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/podgroups"
)

// A TrainJob whose Karta reads its ClusterTrainingRuntime
// (examples/kartas/trainjob-runtime.yaml) gets its gang from the runtime
// in the shared references cache: the TrainJob alone while the runtime is
// absent, the runtime's jobs once it is created, and the gang follows a change of the
// runtime (ReferenceChanged), not only of the TrainJob.
func TestGangFromReferencedRuntime(t *testing.T) {
	e := newEnv(t)
	ks, err := karta.LoadFile("../examples/kartas/trainjob-runtime.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	e.reg.Put(p)

	cache, err := refs.New(e.dyn, e.mapper, refs.Options{})
	require.NoError(t, err)
	cache.WatchRegistry(e.reg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cache.Start(ctx)
	c := e.start(podgroups.KAI, Options{References: cache})
	cache.OnChange(c.ReferenceChanged)

	const group = "pg-2b8e6d14-7c3f-4a95-9e01-5d7b3c8a6f29-trainjob"
	tj := example(t, "trainjob", "running.yaml")[0]
	e.create(tj)
	minMember := func() int64 { return nestedInt64(e.objects(kaiPGGVK, "llm-team")[group], "spec", "minMember") }
	require.Eventually(t, func() bool { return minMember() == 1 }, waitFor, tick, "without its runtime, the TrainJob alone")

	rt := example(t, "trainjob", "refs/torchtune-llama3.2-3b.yaml")[0]
	_, err = e.dyn.Resource(resourceOf(clusterRuntimeGVK)).Create(context.Background(), rt, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return minMember() == 3 }, waitFor, tick, "the runtime's three jobs")

	// The runtime gains a job: the gang follows.
	_, err = e.dyn.Resource(resourceOf(clusterRuntimeGVK)).Update(context.Background(), testobj.WithReplicatedJob(t, rt, "evaluator"), metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return minMember() == 4 }, waitFor, tick, "the gang follows the runtime")
	assert.Len(t, e.objects(kaiPGGVK, "llm-team")[group].Object["spec"].(map[string]any)["subGroups"], 4)
}
