package interpreter

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodegenLimitFallback: Compile generates the chunk without checking
// each accessor alone; a translation that breaks a limit of the Lua
// compiler (here, registers: an array of 300 computed elements) makes the
// chunk fail to compile, and Compile generates it again with the check,
// so that accessor runs on gojq and the answer is the same.
func TestCodegenLimitFallback(t *testing.T) {
	big := "[" + strings.Repeat(".spec.n + 1, ", 299) + ".spec.n] | length"
	p := progFrom(t, `apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: wide}
spec:
  structureDefinition:
    rootComponent:
      name: wide
      kind: {group: example.com, version: v1, kind: Wide}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: '`+big+`', expectedResult: "300"}}]
          completed: [{byExpression: {expression: '.spec.n', expectedResult: "7"}}]
`)
	require.NoError(t, p.buildLua())
	require.Len(t, p.fallbacks, 1, "the too-big translation runs on gojq")
	assert.Contains(t, p.gen.source, "runs on gojq: its translation is too big")
	st, err := p.InterpretStatus(context.Background(), progObj(t, `{apiVersion: example.com/v1, kind: Wide, metadata: {name: w}, spec: {n: 1}}`))
	require.NoError(t, err)
	assert.Equal(t, "Running", string(st.Status))
}
