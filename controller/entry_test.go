package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
)

func splitLines(s string) []string { return strings.Split(s, "\n") }

func TestDocumentLeavesServerFieldsOut(t *testing.T) {
	obj := kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0)
	obj.SetResourceVersion("4711")
	obj.SetLabels(map[string]string{"team": "ml"})
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}})
	obj.Object["status"] = map[string]any{"observedGeneration": int64(1)}
	doc, err := document(obj)
	require.NoError(t, err)
	s := string(doc)
	assert.Contains(t, s, `"metadata":{"labels":{"team":"ml"},"name":"trainjob"}`)
	for _, absent := range []string{"4711", "uid-trainjob", "managedFields", "creationTimestamp", "generation", "observedGeneration"} {
		assert.NotContains(t, s, absent)
	}

	// Status and bookkeeping do not change the document: no recompile.
	again := obj.DeepCopy()
	again.SetResourceVersion("4712")
	again.SetGeneration(7)
	again.Object["status"] = map[string]any{"observedGeneration": int64(7)}
	doc2, err := document(again)
	require.NoError(t, err)
	assert.Equal(t, doc, doc2)
}

func TestBuildReusesAnUnchangedKarta(t *testing.T) {
	obj := kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0)
	k := key{name: "trainjob"}
	first := build(t.Context(), k, obj, nil, interpreter.Options{PoolSize: 1})
	require.NotNil(t, first.program)

	obj.SetResourceVersion("99")
	second := build(t.Context(), k, obj, first, interpreter.Options{PoolSize: 1})
	assert.Same(t, first.program, second.program)

	require.NoError(t, unstructured.SetNestedField(obj.Object, "v2", "spec", "structureDefinition", "rootComponent", "kind", "version"))
	third := build(t.Context(), k, obj, second, interpreter.Options{PoolSize: 1})
	assert.NotSame(t, second.program, third.program)
	assert.Equal(t, "v2", third.gvk.Version)
}

func TestTruncateCutsAtALine(t *testing.T) {
	short := "a: x\nb: y"
	assert.Equal(t, short, truncate(short))

	line := strings.Repeat("x", 99) + "\n"
	long := strings.Repeat(line, 1000) // 100 000 bytes
	got := truncate(long)
	assert.LessOrEqual(t, len(got), maxMessage)
	assert.True(t, strings.HasSuffix(got, "\n… (more problems: run karta validate on the Karta)"))
	for _, l := range splitLines(got)[:len(splitLines(got))-1] {
		assert.Len(t, l, 99, "no problem is cut in half")
	}
}

func TestDesiredStatusKeepsTransitionTimes(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetGeneration(3)
	st := kartaStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{
		{Type: ConditionAccepted, Status: metav1.ConditionTrue, Reason: ReasonValid, Message: "the Karta is valid", ObservedGeneration: 2, LastTransitionTime: then},
		{Type: ConditionCompiled, Status: metav1.ConditionTrue, Reason: ReasonCompiled, Message: "registered", ObservedGeneration: 2, LastTransitionTime: then},
	}}
	withSt, err := withStatus(obj, st)
	require.NoError(t, err)

	// Generation 3: Accepted is still True (time kept), Compiled turns
	// False (time moves).
	conds := []metav1.Condition{
		{Type: ConditionAccepted, Status: metav1.ConditionTrue, Reason: ReasonValid, Message: "the Karta is valid", ObservedGeneration: 3},
		{Type: ConditionCompiled, Status: metav1.ConditionFalse, Reason: ReasonCompileFailed, Message: "boom", ObservedGeneration: 3},
	}
	next, changed := desiredStatus(withSt, conds, nil)
	require.True(t, changed)
	assert.EqualValues(t, 3, next.ObservedGeneration)
	assert.True(t, next.Conditions[0].LastTransitionTime.Equal(&then))
	assert.False(t, next.Conditions[1].LastTransitionTime.Equal(&then))
	assert.EqualValues(t, 3, next.Conditions[0].ObservedGeneration)

	// Written and read back: nothing left to change.
	written, err := withStatus(withSt, next)
	require.NoError(t, err)
	_, changed = desiredStatus(written, conds, nil)
	assert.False(t, changed)

	// Dropping a condition that is there is a change; one that is not is
	// none.
	_, changed = desiredStatus(written, conds, []string{ConditionEvaluating})
	assert.False(t, changed)
	dropped, changed := desiredStatus(written, conds[:1], []string{ConditionCompiled})
	assert.True(t, changed)
	require.Len(t, dropped.Conditions, 1)
	assert.Equal(t, ConditionAccepted, dropped.Conditions[0].Type)
}

func TestKeyOrderAndNames(t *testing.T) {
	karta := key{src: 0, name: "b"}
	legacy := key{src: 1, namespace: "ml", name: "a"}
	assert.True(t, karta.less(legacy))
	assert.False(t, legacy.less(karta))
	assert.True(t, key{name: "a"}.less(key{name: "b"}))
	assert.Equal(t, "kartas/b", karta.String())
	assert.Equal(t, "resourceinterfaces/ml/a", legacy.String())
	assert.Equal(t, `Karta "b"`, karta.describe())
	assert.Equal(t, `ResourceInterface "ml/a"`, legacy.describe())
}
