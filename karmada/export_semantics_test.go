package karmada

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// semanticsKarta's matchers are jq that the export once got wrong or
// refused: a comparison across types, // over an error, and builtins
// (any, map, ascii_downcase, join, min, startswith, values).
const semanticsKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: semantics}
spec:
  structureDefinition:
    rootComponent:
      name: sem
      kind: {group: example.com, version: v1, kind: Sem}
      statusDefinition:
        statusMappings:
          running:
          - {byExpression: {expression: '.status.readyReplicas >= 1', expectedResult: "true"}}
          failed:
          - {byExpression: {expression: '[.status.conditions[]? | .type | ascii_downcase] | any(. == "failed")', expectedResult: "true"}}
          - {byExpression: {expression: '.status.phase.name // 1', expectedResult: "2"}}
          completed:
          - {byExpression: {expression: '[.status.tags[]? | values] | join(",")', expectedResult: "a,b"}}
          - {byExpression: {expression: '.status.sizes // [] | map(. * 2) | min', expectedResult: "4"}}
          initializing:
          - {byExpression: {expression: '.status.message // "" | startswith("wait")', expectedResult: "true"}}
`

func TestExportKarmadaHasGojqSemantics(t *testing.T) {
	p := progFrom(t, semanticsKarta)
	_, in := exportedInterpreter(t, p, "semantics.yaml")
	var objs []*unstructured.Unstructured
	for _, status := range []string{
		`{}`,                             // null >= 1 is false in jq, not an error
		`{readyReplicas: 2}`,             // Running
		`{phase: "x"}`,                   // .phase.name on a string: the error of // propagates
		`{conditions: [{type: FAILED}]}`, // Failed
		`{tags: [a, b], sizes: [3, 2, 5]}`,
		`{message: waiting}`,
		`{message: 7}`, // startswith on a number: an error
	} {
		objs = append(objs, progObj(t, "apiVersion: example.com/v1\nkind: Sem\nmetadata: {name: s}\nstatus: "+status))
	}
	compareExport(t, p, in, objs)

	ctx := context.Background()
	for i, want := range map[int]bool{0: false, 1: true, 3: false, 4: true} {
		h, err := in.InterpretHealth(ctx, objs[i])
		require.NoError(t, err, "object %d", i)
		assert.Equal(t, want, h, "object %d", i)
	}
	for _, i := range []int{2, 6} {
		_, err := in.InterpretHealth(ctx, objs[i])
		assert.Error(t, err, "object %d fails as in process", i)
	}
}
