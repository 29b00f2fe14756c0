package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// value reads a counter or gauge.
func value(t *testing.T, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetGauge().GetValue() + m.GetCounter().GetValue()
}

// interpretStatus asks the registry for the status of an example object.
func interpretStatus(t *testing.T, reg *interpreter.Registry, path string) karta.Status {
	t.Helper()
	obj := readYAML(t, path)
	p, ok := reg.Get(obj.GroupVersionKind())
	require.True(t, ok, "no Program for %s", obj.GroupVersionKind())
	res, err := p.InterpretStatus(context.Background(), obj)
	require.NoError(t, err)
	return res.Status
}

func TestValidKartaIsRegistered(t *testing.T) {
	f := newFakeCluster(kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0))
	reg := interpreter.NewRegistry()
	startController(t, f, reg, Options{})

	accepted := f.waitCondition(t, "trainjob", ConditionAccepted, metav1.ConditionTrue, ReasonValid)
	assert.Equal(t, "the Karta is valid", accepted.Message)
	compiled := f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, "registered for example.com/v1 TrainJob", compiled.Message)
	assert.EqualValues(t, 1, readStatus(f.get(t, "trainjob")).ObservedGeneration)

	assert.Equal(t, "trainjob", programName(reg, trainJobGVK))
	assert.Equal(t, karta.StatusRunning, interpretStatus(t, reg, "examples/tutorial-trainjob/running.yaml"))
}

func TestInvalidKartaLifecycle(t *testing.T) {
	f := newFakeCluster(kartaObject(t, "examples/kartas/broken.yaml", "broken", t0))
	reg := interpreter.NewRegistry()
	startController(t, f, reg, Options{})

	// Invalid: every problem, one per line, with its field path.
	accepted := f.waitCondition(t, "broken", ConditionAccepted, metav1.ConditionFalse, ReasonInvalid)
	for _, want := range []string{
		"spec.structureDefinition.rootComponent.statusDefinition.statusMappings.failed[0]: a matcher needs at least one of",
		`spec.structureDefinition.childComponents[0].ownerRef: ownerRef "workr" does not name a component`,
		"spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath: invalid jq: function not defined: gpu/0",
		`spec.structureDefinition.childComponents[1].name: duplicate component name "worker"`,
	} {
		assert.Contains(t, accepted.Message, want)
	}
	assert.Len(t, splitLines(accepted.Message), 9, "one line per problem, as karta validate prints them")
	compiled := f.waitCondition(t, "broken", ConditionCompiled, metav1.ConditionFalse, ReasonNotAccepted)
	assert.Equal(t, "not compiled: the Karta is not accepted", compiled.Message)
	assert.Empty(t, reg.List())

	// Fixed: usable without a restart, and the generation is observed.
	f.updateSpec(t, "broken", readYAML(t, "examples/kartas/trainjob.yaml"))
	f.waitCondition(t, "broken", ConditionAccepted, metav1.ConditionTrue, ReasonValid)
	f.waitCondition(t, "broken", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.EqualValues(t, 2, readStatus(f.get(t, "broken")).ObservedGeneration)
	assert.Equal(t, "broken", programName(reg, trainJobGVK))
	assert.Equal(t, karta.StatusRunning, interpretStatus(t, reg, "examples/tutorial-trainjob/running.yaml"))

	// Broken again: the Program goes.
	f.updateSpec(t, "broken", readYAML(t, "examples/kartas/broken.yaml"))
	f.waitCondition(t, "broken", ConditionAccepted, metav1.ConditionFalse, ReasonInvalid)
	assert.Empty(t, reg.List())

	// Fixed, then deleted: forgotten.
	f.updateSpec(t, "broken", readYAML(t, "examples/kartas/trainjob.yaml"))
	f.waitCondition(t, "broken", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	f.delete(t, "broken")
	require.Eventually(t, func() bool { return len(reg.List()) == 0 }, waitFor, tick)
}

func TestLoadProblemsHaveFieldPaths(t *testing.T) {
	obj := kartaObject(t, "examples/kartas/trainjob.yaml", "typo", t0)
	root, _, err := unstructured.NestedMap(obj.Object, "spec", "structureDefinition", "rootComponent")
	require.NoError(t, err)
	root["statusDefintion"] = root["statusDefinition"] // a misspelt field, as a schema without pruning lets through
	delete(root, "statusDefinition")
	require.NoError(t, unstructured.SetNestedMap(obj.Object, root, "spec", "structureDefinition", "rootComponent"))
	f := newFakeCluster(obj)
	startController(t, f, interpreter.NewRegistry(), Options{})

	accepted := f.waitCondition(t, "typo", ConditionAccepted, metav1.ConditionFalse, ReasonInvalid)
	assert.Equal(t, `spec.structureDefinition.rootComponent.statusDefintion: unknown field "statusDefintion"; did you mean "statusDefinition"?`, accepted.Message)
}

func TestCompileFailure(t *testing.T) {
	f := newFakeCluster(kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0))
	reg := interpreter.NewRegistry()
	bad := interpreter.Options{Scripts: []interpreter.Script{{Name: "fix.lua", Source: "function InterpretStatus(obj"}}}
	startController(t, f, reg, Options{Compile: bad})

	f.waitCondition(t, "trainjob", ConditionAccepted, metav1.ConditionTrue, ReasonValid)
	compiled := f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionFalse, ReasonCompileFailed)
	assert.Contains(t, compiled.Message, "script:fix.lua")
	assert.Empty(t, reg.List())
}

func TestKartaShadowsTheBaseProgram(t *testing.T) {
	b, ok, err := builtin.Get("pytorchjob")
	require.NoError(t, err)
	require.True(t, ok)
	base, err := b.Compile(interpreter.Options{PoolSize: 1})
	require.NoError(t, err)
	reg := interpreter.NewRegistry()
	reg.Put(base)

	var (
		mu      sync.Mutex
		changes []string
	)
	onChange := func(gvk schema.GroupVersionKind, p *interpreter.Program) {
		mu.Lock()
		defer mu.Unlock()
		name := "<none>"
		if p != nil {
			name = p.Name()
		}
		changes = append(changes, gvk.Kind+"="+name)
	}
	f := newFakeCluster(kartaObject(t, "examples/kartas/pytorchjob.yaml", "my-pytorchjob", t0))
	startController(t, f, reg, Options{OnChange: onChange})

	compiled := f.waitCondition(t, "my-pytorchjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, `registered for kubeflow.org/v1 PyTorchJob in place of "pytorchjob", which comes back when this Karta goes`, compiled.Message)
	assert.Equal(t, "my-pytorchjob", programName(reg, pyTorchJobGVK))

	// Invalid: the base Program is back at once.
	f.updateSpec(t, "my-pytorchjob", readYAML(t, "examples/kartas/broken.yaml"))
	f.waitCondition(t, "my-pytorchjob", ConditionAccepted, metav1.ConditionFalse, ReasonInvalid)
	p, ok := reg.Get(pyTorchJobGVK)
	require.True(t, ok)
	assert.Same(t, base, p)

	// Fixed, then deleted: the base Program is back again.
	f.updateSpec(t, "my-pytorchjob", readYAML(t, "examples/kartas/pytorchjob.yaml"))
	f.waitCondition(t, "my-pytorchjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, "my-pytorchjob", programName(reg, pyTorchJobGVK))
	f.delete(t, "my-pytorchjob")
	require.Eventually(t, func() bool { p, _ := reg.Get(pyTorchJobGVK); return p == base }, waitFor, tick)

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{
		"PyTorchJob=my-pytorchjob", "PyTorchJob=pytorchjob",
		"PyTorchJob=my-pytorchjob", "PyTorchJob=pytorchjob",
	}, changes)
}

func TestConflictOldestWins(t *testing.T) {
	f := newFakeCluster(
		kartaObject(t, "examples/kartas/trainjob.yaml", "b-newer", t0.Add(time.Hour)),
		kartaObject(t, "examples/kartas/trainjob.yaml", "a-older", t0),
	)
	reg := interpreter.NewRegistry()
	c := startController(t, f, reg, Options{})

	f.waitCondition(t, "a-older", ConditionAccepted, metav1.ConditionTrue, ReasonValid)
	accepted := f.waitCondition(t, "b-newer", ConditionAccepted, metav1.ConditionFalse, ReasonConflict)
	assert.Equal(t, `Karta "a-older" already claims example.com/v1 TrainJob; of the Kartas claiming a kind, the oldest (by creationTimestamp, then by name) wins`, accepted.Message)
	compiled := f.waitCondition(t, "b-newer", ConditionCompiled, metav1.ConditionFalse, ReasonConflict)
	assert.Equal(t, `compiled but not registered: Karta "a-older" already claims example.com/v1 TrainJob`, compiled.Message)
	assert.Equal(t, "a-older", programName(reg, trainJobGVK))
	require.Eventually(t, func() bool {
		return value(t, c.metrics.kartas.WithLabelValues(resultConflict)) == 1 &&
			value(t, c.metrics.kartas.WithLabelValues(resultAccepted)) == 1
	}, waitFor, tick)

	// The winner goes: the other one takes the kind over.
	f.delete(t, "a-older")
	f.waitCondition(t, "b-newer", ConditionAccepted, metav1.ConditionTrue, ReasonValid)
	f.waitCondition(t, "b-newer", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, "b-newer", programName(reg, trainJobGVK))
}

func TestConflictSameCreationTimeGoesByName(t *testing.T) {
	f := newFakeCluster(
		kartaObject(t, "examples/kartas/trainjob.yaml", "zeta", t0),
		kartaObject(t, "examples/kartas/trainjob.yaml", "alpha", t0),
	)
	reg := interpreter.NewRegistry()
	startController(t, f, reg, Options{})

	f.waitCondition(t, "alpha", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	f.waitCondition(t, "zeta", ConditionAccepted, metav1.ConditionFalse, ReasonConflict)
	assert.Equal(t, "alpha", programName(reg, trainJobGVK))

	// The winner breaks: the loser serves meanwhile, and gives the kind
	// back once the winner is fixed.
	f.updateSpec(t, "alpha", readYAML(t, "examples/kartas/broken.yaml"))
	f.waitCondition(t, "zeta", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, "zeta", programName(reg, trainJobGVK))
	f.updateSpec(t, "alpha", readYAML(t, "examples/kartas/trainjob.yaml"))
	f.waitCondition(t, "zeta", ConditionAccepted, metav1.ConditionFalse, ReasonConflict)
	f.waitCondition(t, "alpha", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, "alpha", programName(reg, trainJobGVK))
}

func TestChangingTheKindReleasesTheOldOne(t *testing.T) {
	f := newFakeCluster(kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0))
	reg := interpreter.NewRegistry()
	startController(t, f, reg, Options{})
	f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	require.Equal(t, "trainjob", programName(reg, trainJobGVK))

	moved := readYAML(t, "examples/kartas/trainjob.yaml")
	require.NoError(t, unstructured.SetNestedField(moved.Object, "v2", "spec", "structureDefinition", "rootComponent", "kind", "version"))
	f.updateSpec(t, "trainjob", moved)
	compiled := f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, "registered for example.com/v2 TrainJob", compiled.Message)
	_, ok := reg.Get(trainJobGVK)
	assert.False(t, ok, "the old kind is released")
	assert.Equal(t, "trainjob", programName(reg, schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "TrainJob"}))
}

func TestNoStatusWriteWhenNothingChanged(t *testing.T) {
	f := newFakeCluster(kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0))
	c := startController(t, f, interpreter.NewRegistry(), Options{})
	before := f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)

	// The write's own update event has been reconciled once the queue is
	// empty and nothing is in progress; count the reconciles from there.
	reconciles := func() float64 { return value(t, c.metrics.reconciles.WithLabelValues(resultAccepted)) }
	require.Eventually(t, func() bool { return reconciles() >= 2 && c.loop.Len() == 0 }, waitFor, tick)
	writes, done := f.statusWrites.Load(), reconciles()
	assert.EqualValues(t, 1, writes, "one write for both conditions")

	// A change that is not the Karta's (a label) is reconciled without a
	// write, and so is a resync.
	obj := f.get(t, "trainjob")
	obj.SetLabels(map[string]string{"team": "ml"})
	_, err := f.Resource(KartaResource).Update(context.Background(), obj, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return reconciles() > done }, waitFor, tick)
	assert.Equal(t, writes, f.statusWrites.Load())
	after := f.condition(t, "trainjob", ConditionCompiled)
	require.NotNil(t, after)
	assert.Equal(t, before.LastTransitionTime, after.LastTransitionTime)
}

func TestConditionsOfOthersAreKept(t *testing.T) {
	obj := kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0)
	other := map[string]any{"type": "Reviewed", "status": "True", "reason": "ByPolicy", "message": "ok",
		"lastTransitionTime": "2026-01-01T00:00:00Z"}
	obj.Object["status"] = map[string]any{"conditions": []any{other}, "reviewer": "policy-bot"}
	f := newFakeCluster(obj)
	startController(t, f, interpreter.NewRegistry(), Options{})
	f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)

	got := f.get(t, "trainjob")
	assert.NotNil(t, f.condition(t, "trainjob", "Reviewed"))
	reviewer, _, _ := unstructured.NestedString(got.Object, "status", "reviewer")
	assert.Equal(t, "policy-bot", reviewer)
}

func TestStandbyWritesNoStatusUntilLeading(t *testing.T) {
	f := newFakeCluster(kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0))
	reg := interpreter.NewRegistry()
	c := startController(t, f, reg, Options{Standby: true})

	// Synced: the registry is current, but nothing was written.
	assert.Equal(t, "trainjob", programName(reg, trainJobGVK))
	assert.False(t, c.Leading())
	assert.Zero(t, f.statusWrites.Load())
	assert.Nil(t, f.condition(t, "trainjob", ConditionAccepted))

	c.SetLeading(true)
	f.waitCondition(t, "trainjob", ConditionAccepted, metav1.ConditionTrue, ReasonValid)
	f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
}

func TestMetrics(t *testing.T) {
	f := newFakeCluster(
		kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0),
		kartaObject(t, "examples/kartas/broken.yaml", "broken", t0),
	)
	promReg := prometheus.NewRegistry()
	startController(t, f, interpreter.NewRegistry(), Options{Registerer: promReg})
	f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	f.waitCondition(t, "broken", ConditionAccepted, metav1.ConditionFalse, ReasonInvalid)

	gauge := func(name string) float64 {
		mfs, err := promReg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == name {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("no metric %s", name)
		return 0
	}
	assert.Equal(t, 1.0, gauge("karta_controller_registry_programs"))
	assert.Equal(t, 1.0, gauge("karta_controller_leading"))
	assert.Equal(t, 1.0, gauge("karta_controller_synced"))
	assert.Equal(t, 0.0, gauge("karta_controller_queue_depth"))
	mfs, err := promReg.Gather()
	require.NoError(t, err)
	series := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				name += "/" + l.GetValue()
			}
			series[name] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	assert.Equal(t, 1.0, series["karta_controller_kartas/accepted"])
	assert.Equal(t, 1.0, series["karta_controller_kartas/invalid"])
	assert.Equal(t, 0.0, series["karta_controller_kartas/conflict"])
	assert.GreaterOrEqual(t, series["karta_controller_reconciles_total/accepted"], 1.0)
	assert.GreaterOrEqual(t, series["karta_controller_reconciles_total/invalid"], 1.0)
	assert.Equal(t, 2.0, series["karta_controller_status_writes_total"])
}

func TestLegacyResourceInterfaces(t *testing.T) {
	ri := kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0)
	ri.SetAPIVersion(karta.LegacySchemeGroupVersion.String())
	ri.SetKind(karta.KindResourceInterface)
	ri.SetNamespace("ml")
	f := newFakeCluster(ri)
	disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "run.ai/v1alpha1", APIResources: []metav1.APIResource{{Name: "kartas"}, {Name: "kartas/status"}}},
		{GroupVersion: "optimization.nvidia.com/v1alpha1", APIResources: []metav1.APIResource{{Name: "resourceinterfaces", Namespaced: true}}},
	}}}
	reg := interpreter.NewRegistry()
	startController(t, f, reg, Options{Discovery: disco})

	// Registered from the legacy resource; its CRD has no status
	// subresource, so nothing is written to it.
	assert.Equal(t, "trainjob", programName(reg, trainJobGVK))
	assert.Zero(t, f.statusWrites.Load())

	// A Karta of the same kind, created later, loses to it.
	f.create(t, kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob-karta", t0.Add(time.Minute)))
	accepted := f.waitCondition(t, "trainjob-karta", ConditionAccepted, metav1.ConditionFalse, ReasonConflict)
	assert.Contains(t, accepted.Message, `ResourceInterface "ml/trainjob" already claims example.com/v1 TrainJob`)
}

func TestRunFailsWithoutTheCRD(t *testing.T) {
	disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	c, err := New(newFakeCluster(), interpreter.NewRegistry(), Options{Discovery: disco})
	require.NoError(t, err)
	err = c.Run(context.Background())
	var notInstalled *CRDNotInstalledError
	require.True(t, errors.As(err, &notInstalled), "got %v", err)
	assert.Equal(t, "the cluster does not serve kartas.run.ai (is the Karta CRD installed? karta crd | kubectl apply -f -)", err.Error())
	assert.EqualError(t, c.Run(context.Background()), "controller: Run called twice")
}

func TestNewNeedsClientAndRegistry(t *testing.T) {
	_, err := New(nil, interpreter.NewRegistry(), Options{})
	assert.EqualError(t, err, "controller: no dynamic client")
	_, err = New(newFakeCluster(), nil, Options{})
	assert.EqualError(t, err, "controller: no registry")
}

func TestLabelSelectorRestrictsTheKartas(t *testing.T) {
	mine := kartaObject(t, "examples/kartas/trainjob.yaml", "mine", t0.Add(time.Hour))
	mine.SetLabels(map[string]string{"karta.run.ai/shard": "a"})
	other := kartaObject(t, "examples/kartas/trainjob.yaml", "other", t0) // older, but not selected
	f := newFakeCluster(mine, other)
	reg := interpreter.NewRegistry()
	startController(t, f, reg, Options{LabelSelector: "karta.run.ai/shard=a"})

	f.waitCondition(t, "mine", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, "mine", programName(reg, trainJobGVK))
	assert.Nil(t, f.condition(t, "other", ConditionAccepted), "not selected: not written to")

	_, err := New(f, reg, Options{LabelSelector: "shard in (a"})
	assert.ErrorContains(t, err, "controller: label selector: ")
}

// A server whose schema prunes status.conditions: written once per
// generation, not again and again.
func TestPrunedConditionsAreNotRewritten(t *testing.T) {
	f := newFakeCluster(kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0))
	f.PrependReactor("update", "kartas", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			u := a.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured)
			unstructured.RemoveNestedField(u.Object, "status", "conditions")
		}
		return false, nil, nil
	})
	reg := interpreter.NewRegistry()
	c := startController(t, f, reg, Options{})
	assert.Equal(t, "trainjob", programName(reg, trainJobGVK))

	reconciles := func() float64 { return value(t, c.metrics.reconciles.WithLabelValues(resultAccepted)) }
	// The write's own event is reconciled, and a label change after it.
	require.Eventually(t, func() bool { return reconciles() >= 2 && c.loop.Len() == 0 }, waitFor, tick)
	obj := f.get(t, "trainjob")
	obj.SetLabels(map[string]string{"team": "ml"})
	done := reconciles()
	_, err := f.Resource(KartaResource).Update(context.Background(), obj, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return reconciles() > done }, waitFor, tick)
	assert.EqualValues(t, 1, f.statusWrites.Load())

	// A new generation is written once more.
	f.updateSpec(t, "trainjob", readYAML(t, "examples/kartas/trainjob.yaml"))
	require.Eventually(t, func() bool { return f.statusWrites.Load() == 2 }, waitFor, tick)
}
