//go:build integration

package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// liveKartas creates Kartas in the test cluster under names, a label and
// a kind group unique to the test, so that tests of other packages sharing
// the cluster (Kartas are cluster-scoped) never see them, nor they these.
type liveKartas struct {
	t     *testing.T
	dyn   dynamic.Interface
	id    string // unique per test: the namespace testenv made
	group string
}

func newLiveKartas(t *testing.T) (*liveKartas, *dynamic.DynamicClient, *discovery.DiscoveryClient) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	id := testenv.Namespace(t, cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	return &liveKartas{t: t, dyn: dyn, id: id, group: id + ".example.com"}, dyn, disco
}

func (l *liveKartas) client() dynamic.ResourceInterface { return l.dyn.Resource(KartaResource) }

// selector selects this test's Kartas.
func (l *liveKartas) selector() string { return "karta.run.ai/test=" + l.id }

// gvk is the kind of the test's TrainJob Kartas.
func (l *liveKartas) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: l.group, Version: "v1", Kind: "TrainJob"}
}

// spec reads an example Karta's spec, moved to the test's group.
func (l *liveKartas) spec(path string) map[string]any {
	obj := readYAML(l.t, path)
	require.NoError(l.t, unstructured.SetNestedField(obj.Object, l.group, "spec", "structureDefinition", "rootComponent", "kind", "group"))
	spec, _, err := unstructured.NestedMap(obj.Object, "spec")
	require.NoError(l.t, err)
	return spec
}

// create creates a Karta from an example file, deleted when the test ends.
func (l *liveKartas) create(name, path string) string {
	name = l.id + "-" + name
	obj := readYAML(l.t, path)
	obj.SetName(name)
	obj.SetLabels(map[string]string{"karta.run.ai/test": l.id})
	obj.Object["spec"] = l.spec(path)
	_, err := l.client().Create(context.Background(), obj, metav1.CreateOptions{})
	require.NoError(l.t, err)
	l.t.Cleanup(func() {
		err := l.client().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			l.t.Errorf("deleting Karta %s: %v", name, err)
		}
	})
	return name
}

// setSpec replaces a Karta's spec with an example file's.
func (l *liveKartas) setSpec(name, path string) {
	obj, err := l.client().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(l.t, err)
	obj.Object["spec"] = l.spec(path)
	_, err = l.client().Update(context.Background(), obj, metav1.UpdateOptions{})
	require.NoError(l.t, err)
}

// waitCondition waits until the Karta's condition has the status and
// reason, for its current generation, with status.observedGeneration
// caught up too.
func (l *liveKartas) waitCondition(name, typ string, status metav1.ConditionStatus, reason string) (metav1.Condition, int64) {
	var (
		got metav1.Condition
		gen int64
	)
	require.Eventually(l.t, func() bool {
		obj, err := l.client().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		st := readStatus(obj)
		c := meta.FindStatusCondition(st.Conditions, typ)
		if c == nil || c.Status != status || c.Reason != reason ||
			c.ObservedGeneration != obj.GetGeneration() || st.ObservedGeneration != obj.GetGeneration() {
			return false
		}
		got, gen = *c, obj.GetGeneration()
		return true
	}, 2*waitFor, 100*time.Millisecond, "%s: condition %s=%s (%s)", name, typ, status, reason)
	return got, gen
}

// runLive runs a controller against the test cluster until the test ends.
func runLive(t *testing.T, dyn dynamic.Interface, reg *interpreter.Registry, opts Options) *Controller {
	c, err := New(dyn, reg, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, c.Run(ctx)) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	require.Eventually(t, c.HasSynced, 2*waitFor, 100*time.Millisecond)
	return c
}

// liveStatus asks the registry for the status of examples/tutorial-trainjob/running.yaml
// moved to the test's group.
func (l *liveKartas) liveStatus(reg *interpreter.Registry) (karta.Status, bool) {
	obj := readYAML(l.t, "examples/tutorial-trainjob/running.yaml")
	obj.SetAPIVersion(l.group + "/v1")
	p, ok := reg.Get(obj.GroupVersionKind())
	if !ok {
		return "", false
	}
	res, err := p.InterpretStatus(context.Background(), obj)
	require.NoError(l.t, err)
	return res.Status, true
}

// An invalid Karta is reported with its problems, becomes usable once
// fixed and is forgotten once deleted, all without a restart.
func TestIntegrationKartaLifecycle(t *testing.T) {
	l, dyn, disco := newLiveKartas(t)
	reg := interpreter.NewRegistry()
	runLive(t, dyn, reg, Options{Discovery: disco, LabelSelector: l.selector()})

	name := l.create("trainjob", "examples/kartas/broken.yaml")
	accepted, gen := l.waitCondition(name, ConditionAccepted, metav1.ConditionFalse, ReasonInvalid)
	assert.EqualValues(t, 1, gen)
	assert.Contains(t, accepted.Message, `spec.structureDefinition.childComponents[0].ownerRef: ownerRef "workr" does not name a component`)
	assert.Contains(t, accepted.Message, "spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath: invalid jq: function not defined: gpu/0")
	l.waitCondition(name, ConditionCompiled, metav1.ConditionFalse, ReasonNotAccepted)
	_, ok := reg.Get(l.gvk())
	assert.False(t, ok)

	l.setSpec(name, "examples/kartas/trainjob.yaml")
	_, gen = l.waitCondition(name, ConditionAccepted, metav1.ConditionTrue, ReasonValid)
	assert.EqualValues(t, 2, gen, "the fix is a new generation, and observed")
	compiled, _ := l.waitCondition(name, ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, "registered for "+l.group+"/v1 TrainJob", compiled.Message)
	status, ok := l.liveStatus(reg)
	require.True(t, ok, "the registry answers for the kind")
	assert.Equal(t, karta.StatusRunning, status)

	// The accepted condition keeps its transition time across a change
	// that does not flip it.
	obj, err := l.client().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	before := meta.FindStatusCondition(readStatus(obj).Conditions, ConditionAccepted).LastTransitionTime
	spec := l.spec("examples/kartas/trainjob.yaml")
	require.NoError(t, unstructured.SetNestedField(spec, "v1beta1", "structureDefinition", "rootComponent", "kind", "version"))
	obj.Object["spec"] = spec
	_, err = l.client().Update(context.Background(), obj, metav1.UpdateOptions{})
	require.NoError(t, err)
	compiled, gen = l.waitCondition(name, ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.EqualValues(t, 3, gen)
	assert.Equal(t, "registered for "+l.group+"/v1beta1 TrainJob", compiled.Message)
	_, ok = reg.Get(l.gvk())
	assert.False(t, ok, "the old kind is released")
	obj, err = l.client().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, before, meta.FindStatusCondition(readStatus(obj).Conditions, ConditionAccepted).LastTransitionTime)

	require.NoError(t, l.client().Delete(context.Background(), name, metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, ok := reg.Get(schema.GroupVersionKind{Group: l.group, Version: "v1beta1", Kind: "TrainJob"})
		return !ok
	}, 2*waitFor, 100*time.Millisecond, "a deleted Karta is forgotten")
}

// Of two Kartas for one kind the older wins; the loser takes over when the
// winner goes.
func TestIntegrationConflict(t *testing.T) {
	l, dyn, disco := newLiveKartas(t)
	reg := interpreter.NewRegistry()
	// Created in this order, and "first" sorts before "second" should the
	// two get the same creationTimestamp (it has a resolution of a second).
	first := l.create("first", "examples/kartas/trainjob.yaml")
	second := l.create("second", "examples/kartas/trainjob.yaml")
	runLive(t, dyn, reg, Options{Discovery: disco, LabelSelector: l.selector()})

	l.waitCondition(first, ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	accepted, _ := l.waitCondition(second, ConditionAccepted, metav1.ConditionFalse, ReasonConflict)
	assert.Contains(t, accepted.Message, `Karta "`+first+`" already claims `+l.group+"/v1 TrainJob")
	p, ok := reg.Get(l.gvk())
	require.True(t, ok)
	assert.Equal(t, first, p.Name())

	require.NoError(t, l.client().Delete(context.Background(), first, metav1.DeleteOptions{}))
	l.waitCondition(second, ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	p, ok = reg.Get(l.gvk())
	require.True(t, ok)
	assert.Equal(t, second, p.Name())
}

// Without a status change the controller writes nothing: the resource
// version of a settled Karta stays put across a resync.
func TestIntegrationSettledKartaIsNotRewritten(t *testing.T) {
	l, dyn, disco := newLiveKartas(t)
	name := l.create("trainjob", "examples/kartas/trainjob.yaml")
	c := runLive(t, dyn, interpreter.NewRegistry(), Options{Discovery: disco, LabelSelector: l.selector(), ResyncPeriod: time.Second})
	l.waitCondition(name, ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	obj, err := l.client().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)

	// Wait for a few resyncs to be reconciled, then compare.
	done := value(t, c.metrics.reconciles.WithLabelValues(resultAccepted))
	require.Eventually(t, func() bool {
		return value(t, c.metrics.reconciles.WithLabelValues(resultAccepted)) >= done+3
	}, 2*waitFor, 100*time.Millisecond)
	again, err := l.client().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, obj.GetResourceVersion(), again.GetResourceVersion())
}
