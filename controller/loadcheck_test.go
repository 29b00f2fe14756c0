package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
)

// TestScriptThatCannotRunIsReportedAtCompile: a Karta whose luaScript
// loops at top level is Compiled=False, ScriptFailed, before any hook
// runs, and its kind keeps the base Program; fixed, it is registered.
func TestScriptThatCannotRunIsReportedAtCompile(t *testing.T) {
	obj := kartaObject(t, "examples/kartas/trainjob.yaml", "trainjob", t0)
	require.NoError(t, unstructured.SetNestedField(obj.Object, "while true do end\n", "spec", "luaScript"))
	f := newFakeCluster(obj)
	reg := interpreter.NewRegistry()
	startController(t, f, reg, Options{Compile: interpreter.Options{Limits: interpreter.Limits{MaxInstructions: 100_000}}})

	f.waitCondition(t, "trainjob", ConditionAccepted, metav1.ConditionTrue, ReasonValid)
	compiled := f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionFalse, ReasonScriptFailed)
	assert.Equal(t, `its scripts' top-level code cannot run: karta "trainjob": load: instruction limit 100000 exceeded`, compiled.Message)
	assert.Nil(t, f.condition(t, "trainjob", ConditionEvaluating), "not registered, so not evaluating")
	assert.Empty(t, reg.List())

	fixed := readYAML(t, "examples/kartas/trainjob.yaml")
	require.NoError(t, unstructured.SetNestedField(fixed.Object, "local ok = true\n", "spec", "luaScript"))
	f.updateSpec(t, "trainjob", fixed)
	f.waitCondition(t, "trainjob", ConditionCompiled, metav1.ConditionTrue, ReasonCompiled)
	assert.Equal(t, "trainjob", programName(reg, trainJobGVK))
}
