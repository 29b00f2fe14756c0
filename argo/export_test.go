package argo

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

func TestHealthWords(t *testing.T) {
	batch, serving := HealthWords(true), HealthWords(false)
	assert.Equal(t, "Progressing", batch[karta.StatusRunning])
	assert.Equal(t, "Healthy", serving[karta.StatusRunning])
	for _, st := range karta.StatusPrecedence {
		assert.NotEmpty(t, batch[st], st)
		assert.NotEmpty(t, serving[st], st)
	}
	_, ok := batch[karta.StatusUndefined]
	assert.False(t, ok, "Undefined has no word: no assessment")
}

func TestHealthMessage(t *testing.T) {
	s := func(v string) *string { return &v }
	assert.Equal(t, "", HealthMessage(nil))
	assert.Equal(t, "b", HealthMessage([]interpreter.Condition{{Type: "A", Status: s("True"), Message: s("a")}, {Type: "B", Status: s("True"), Message: s("b")}, {Type: "C", Status: s("False"), Message: s("c")}}))
	assert.Equal(t, "c", HealthMessage([]interpreter.Condition{{Type: "A", Status: s("False"), Message: s("a")}, {Type: "C", Status: s("False"), Message: s("c")}, {Type: "D", Status: s("True"), Message: s("")}}))
}

func TestExportArgoRefusesAStatusOverride(t *testing.T) {
	ks, err := karta.LoadFile(filepath.Join("..", "builtin", "kartas", "jobset.yaml"))
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{Scripts: []interpreter.Script{{Name: "status.lua", Source: "function InterpretStatus(obj)\n  return {status = 'Running'}\nend\n"}}})
	require.NoError(t, err)
	_, err = ExportProgram(p)
	var ee *interpreter.ExportError
	require.True(t, errors.As(err, &ee), "got %v", err)
	assert.Equal(t, "Argo CD", ee.Target)
	assert.True(t, strings.Contains(err.Error(), "cannot export to Argo CD: ") && strings.Contains(err.Error(), "overrides InterpretStatus, which the Argo CD export cannot carry"), err.Error())
}

// errorsKarta's expressions raise jq errors on some objects: expressions
// with one output (called for their value, under one protected call) and
// one with a stream (called for its list of outputs).
const errorsKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: errors}
spec:
  structureDefinition:
    rootComponent:
      name: e
      kind: {group: example.com, version: v1, kind: Err}
      statusDefinition:
        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          running:
          - {byExpression: {expression: '.status.phase.name // 1', expectedResult: "2"}}
          failed:
          - {byExpression: {expression: '[(.status.tags // [])[] | values] | join(",")', expectedResult: "a"}}
          - {byExpression: {expression: '.status.count + 1', expectedResult: "3"}}
`

// TestExportedHealthErrorsNameTheField: a jq error in an exported health
// script names the field of the expression that raised it, whichever way
// the expression is called, and the other errors are the export's own; a
// refused value is named by its kind alone, without gojq's JSON preview
// (docs/jq.md, "The back ends").
func TestExportedHealthErrorsNameTheField(t *testing.T) {
	ks, err := karta.Load([]byte(errorsKarta), "errors.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	ex, err := ExportProgram(p)
	require.NoError(t, err)
	s, err := Compile("health.lua", ex.Scripts["health.lua"])
	require.NoError(t, err)
	for _, tc := range []struct{ status, want string }{
		{`{"phase": "x"}`, `statusMappings.running[0].byExpression.expression: expected an object but got: string`},
		{`{"tags": 5}`, `statusMappings.failed[0].byExpression.expression: cannot iterate over: number`},
		{`{"count": "a"}`, `statusMappings.failed[1].byExpression.expression: cannot add: string and number`},
		{`{"conditions": 5}`, `conditionsDefinition.path: not an array of objects or null`},
		{`{"conditions": [{"type": "A", "status": 1}]}`, `condition A: field status must be a string or null`},
	} {
		var status map[string]any
		require.NoError(t, json.Unmarshal([]byte(tc.status), &status))
		obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Err", "metadata": map[string]any{"name": "e"}, "status": status}
		_, err := s.Run(context.Background(), obj)
		require.Error(t, err, tc.status)
		assert.True(t, strings.HasSuffix(err.Error(), tc.want), "%s: %q does not end with %q", tc.status, err.Error(), tc.want)
	}
	h, err := s.Run(context.Background(), map[string]any{"apiVersion": "example.com/v1", "kind": "Err", "metadata": map[string]any{"name": "e"},
		"status": map[string]any{"phase": map[string]any{"name": 2}, "count": 1}})
	require.NoError(t, err)
	assert.Equal(t, "Healthy", h.Status)
}
