package controller

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// hostileKarta amplifies a string past the memory guard (issue 12).
const hostileKarta = `apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: hostile}
spec:
  structureDefinition:
    rootComponent:
      name: hostile
      kind: {group: example.com, version: v1alpha1, kind: BatchRun}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: '("x" * 100000000) | length > 0', expectedResult: "true"}
`

var batchRunGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1alpha1", Kind: "BatchRun"}

const batchRunObject = "examples/custom-hook/batchrun-degraded.yaml"

// textKarta is a Karta object from YAML text, as the API server would
// return it.
func textKarta(t *testing.T, text, name string, created time.Time) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(text), &obj))
	u := &unstructured.Unstructured{Object: obj}
	u.SetName(name)
	u.SetUID(types.UID("uid-" + name))
	u.SetGeneration(1)
	u.SetCreationTimestamp(metav1.NewTime(created))
	return u
}

// evaluateHostile makes n calls of the Program registered for BatchRun,
// each of which must end on the memory guard.
func evaluateHostile(t *testing.T, reg *interpreter.Registry, n int) {
	t.Helper()
	p, ok := reg.Get(batchRunGVK)
	require.True(t, ok)
	obj := readYAML(t, batchRunObject)
	for range n {
		_, err := p.InterpretStatus(context.Background(), obj)
		var le *luaapi.LimitError
		require.ErrorAs(t, err, &le)
		require.Equal(t, luaapi.KindMemory, le.Kind)
	}
}

// waitMessage waits until a Karta's condition has the status, reason and
// message for its current generation.
func (f *fakeCluster) waitMessage(t *testing.T, name, typ string, status metav1.ConditionStatus, reason, message string) {
	t.Helper()
	require.Eventually(t, func() bool {
		obj := f.get(t, name)
		c := meta.FindStatusCondition(readStatus(obj).Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason && c.Message == message && c.ObservedGeneration == obj.GetGeneration()
	}, waitFor, tick, "%s: condition %s=%s (%s) %q", name, typ, status, reason, message)
}

// TestLimitErrorsOnTheKarta: the checks of the interval are made by the
// test (the ticker's interval is an hour), so that each interval's count is
// known.
func TestLimitErrorsOnTheKarta(t *testing.T) {
	b, ok, err := builtin.Get("pytorchjob")
	require.NoError(t, err)
	require.True(t, ok)
	base, err := b.Compile(interpreter.Options{PoolSize: 1})
	require.NoError(t, err)
	reg := interpreter.NewRegistry()
	reg.Put(base)
	f := newFakeCluster(
		textKarta(t, hostileKarta, "hostile", t0),
		kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0),
	)
	c := startController(t, f, reg, Options{LimitInterval: time.Hour})

	for _, name := range []string{"hostile", "trainjob"} {
		f.waitMessage(t, name, ConditionEvaluating, metav1.ConditionTrue, ReasonWithinLimits, "evaluations end within their limits")
	}
	writes := f.statusWrites.Load()
	assert.EqualValues(t, 2, writes, "one write per Karta for its three conditions")

	// Three calls end on the memory guard: the next check says so.
	evaluateHostile(t, reg, 3)
	c.checkLimits()
	f.waitMessage(t, "hostile", ConditionEvaluating, metav1.ConditionFalse, ReasonLimitExceeded,
		`3 evaluations ended on a limit in the last 1h0m0s; the last: karta "hostile": InterpretStatus: memory limit 64 MiB exceeded`)

	// The other conditions are unchanged; the other Karta and the
	// built-in keep answering.
	f.waitCondition(t, "hostile", ConditionAccepted, metav1.ConditionTrue, ReasonValid)
	f.waitCondition(t, "hostile", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	f.waitCondition(t, "trainjob", ConditionEvaluating, metav1.ConditionTrue, ReasonWithinLimits)
	assert.Equal(t, karta.StatusRunning, interpretStatus(t, reg, "examples/tutorial-trainjob/running.yaml"))
	assert.Equal(t, karta.StatusRunning, interpretStatus(t, reg, "examples/pytorchjob/running.yaml"))

	// The next interval counts its own.
	evaluateHostile(t, reg, 1)
	c.checkLimits()
	f.waitMessage(t, "hostile", ConditionEvaluating, metav1.ConditionFalse, ReasonLimitExceeded,
		`1 evaluation ended on a limit in the last 1h0m0s; the last: karta "hostile": InterpretStatus: memory limit 64 MiB exceeded`)

	// An interval without any: True again.
	c.checkLimits()
	f.waitMessage(t, "hostile", ConditionEvaluating, metav1.ConditionTrue, ReasonWithinLimits, "evaluations end within their limits")

	// A quiet check writes nothing.
	require.Eventually(t, func() bool { return c.loop.Len() == 0 }, waitFor, tick)
	writes = f.statusWrites.Load()
	c.checkLimits()
	require.Eventually(t, func() bool { return c.loop.Len() == 0 }, waitFor, tick)
	assert.Equal(t, writes, f.statusWrites.Load())
}

// The condition is on registered Kartas only: not on an invalid one, nor
// on the loser of a conflict; it goes when a Karta stops being registered,
// and a new Program counts afresh.
func TestEvaluatingOnlyWhileRegistered(t *testing.T) {
	reg := interpreter.NewRegistry()
	f := newFakeCluster(
		textKarta(t, hostileKarta, "hostile", t0),
		kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0),
		kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob-newer", t0.Add(time.Hour)),
		kartaObject(t, "examples/kartas/broken.yaml", "broken", t0),
	)
	c := startController(t, f, reg, Options{LimitInterval: time.Hour})
	f.waitCondition(t, "trainjob", ConditionEvaluating, metav1.ConditionTrue, ReasonWithinLimits)
	f.waitCondition(t, "trainjob-newer", ConditionAccepted, metav1.ConditionFalse, ReasonConflict)
	f.waitCondition(t, "broken", ConditionAccepted, metav1.ConditionFalse, ReasonInvalid)
	assert.Nil(t, f.condition(t, "trainjob-newer", ConditionEvaluating), "the loser is not evaluated")
	assert.Nil(t, f.condition(t, "broken", ConditionEvaluating), "an invalid Karta is not evaluated")

	evaluateHostile(t, reg, 2)
	c.checkLimits()
	f.waitCondition(t, "hostile", ConditionEvaluating, metav1.ConditionFalse, ReasonLimitExceeded)

	// Broken: no Program, no condition.
	f.updateSpec(t, "hostile", readYAML(t, "examples/kartas/broken.yaml"))
	f.waitCondition(t, "hostile", ConditionAccepted, metav1.ConditionFalse, ReasonInvalid)
	require.Eventually(t, func() bool { return f.condition(t, "hostile", ConditionEvaluating) == nil }, waitFor, tick)

	// Hostile again: a new Program, whose count starts now.
	f.updateSpec(t, "hostile", textKarta(t, hostileKarta, "hostile", t0))
	f.waitCondition(t, "hostile", ConditionEvaluating, metav1.ConditionTrue, ReasonWithinLimits)
	c.checkLimits()
	require.Eventually(t, func() bool { return c.loop.Len() == 0 }, waitFor, tick)
	f.waitCondition(t, "hostile", ConditionEvaluating, metav1.ConditionTrue, ReasonWithinLimits)
	evaluateHostile(t, reg, 1)
	c.checkLimits()
	cond := f.waitCondition(t, "hostile", ConditionEvaluating, metav1.ConditionFalse, ReasonLimitExceeded)
	assert.Contains(t, cond.Message, "1 evaluation ended on a limit")
	assert.EqualValues(t, 3, cond.ObservedGeneration)
}

// The controller's own ticker: the condition turns False while calls end on
// limits, True once they stop.
func TestLimitIntervalTicks(t *testing.T) {
	reg := interpreter.NewRegistry()
	f := newFakeCluster(textKarta(t, hostileKarta, "hostile", t0))
	startController(t, f, reg, Options{LimitInterval: 50 * time.Millisecond})
	f.waitCondition(t, "hostile", ConditionEvaluating, metav1.ConditionTrue, ReasonWithinLimits)

	var cond *metav1.Condition
	require.Eventually(t, func() bool {
		evaluateHostile(t, reg, 1) // one call per poll: bounded
		cond = f.condition(t, "hostile", ConditionEvaluating)
		return cond != nil && cond.Reason == ReasonLimitExceeded
	}, waitFor, tick)
	assert.Equal(t, metav1.ConditionFalse, cond.Status)
	assert.Regexp(t, `^[1-9][0-9]* evaluations? ended on a limit in the last 50ms; the last: karta "hostile": InterpretStatus: memory limit 64 MiB exceeded$`, cond.Message)

	f.waitCondition(t, "hostile", ConditionEvaluating, metav1.ConditionTrue, ReasonWithinLimits)
}

// A negative interval turns the check off: no Evaluating condition.
func TestLimitIntervalOff(t *testing.T) {
	f := newFakeCluster(textKarta(t, hostileKarta, "hostile", t0))
	reg := interpreter.NewRegistry()
	c := startController(t, f, reg, Options{LimitInterval: -1})
	f.waitCondition(t, "hostile", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	evaluateHostile(t, reg, 1)
	c.checkLimits() // nothing is watched
	require.Eventually(t, func() bool { return c.loop.Len() == 0 }, waitFor, tick)
	assert.Nil(t, f.condition(t, "hostile", ConditionEvaluating))
	assert.EqualValues(t, 1, f.statusWrites.Load())
}
