package karmada

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pipeKarta's pod template and replicas paths share their pipeline but
// the last stage, which the export translates once and pipes into each
// path's last stage.
const pipeKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: pipes}
spec:
  structureDefinition:
    rootComponent:
      name: pipe
      kind: {group: example.com, version: v1, kind: Pipe}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
    childComponents:
    - name: main
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: pipe
      podSelector: {componentTypeSelector: {keyPath: '.metadata.labels.role', value: main}}
      specDefinition: {podTemplateSpecPath: '.spec.items[] | .x | .template'}
    - name: side
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: pipe
      podSelector: {componentTypeSelector: {keyPath: '.metadata.labels.role', value: side}}
      specDefinition: {podTemplateSpecPath: '.spec.items[] | .x | .side'}
`

// TestExportKarmadaSharedPrefixKeepsJqErrorOrder: a path whose prefix
// other paths share is exported as the prefix piped into its last stage,
// and answers as the whole path does, errors included: when the last
// stage fails on an output the prefix yielded before failing itself, the
// error is the last stage's, as in jq.
func TestExportKarmadaSharedPrefixKeepsJqErrorOrder(t *testing.T) {
	p := progFrom(t, pipeKarta)
	data, in := exportedInterpreter(t, p, "pipes.yaml")
	assert.Contains(t, string(data), "pipe(Q[", "the shared prefix is piped")
	assert.Contains(t, string(data), "-- .spec.items[] | .x | .template\n", "the whole path's jq stays above its accessor")
	var objs []*unstructured.Unstructured
	for _, spec := range []string{
		"  items: [{x: {template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}, side: {spec: {containers: [{name: s}]}}}}]",
		"  items: [{x: 1}, s]", // .template fails on 1 before .x fails on "s"
		"  items: [{x: {template: null}}, {x: {}}]",
		"  items: []",
	} {
		objs = append(objs, progObj(t, "apiVersion: example.com/v1\nkind: Pipe\nmetadata: {name: p, namespace: ns}\nspec:\n"+spec))
	}
	compareExport(t, p, in, objs)

	ctx := context.Background()
	cs, err := in.GetComponents(ctx, objs[0])
	require.NoError(t, err)
	assert.Len(t, cs, 2)
	_, werr := ForProgram(p).GetComponents(ctx, objs[1])
	require.Error(t, werr)
	assert.Contains(t, werr.Error(), "got: number (1)", "in process, the last stage's error")
	// An export names the refused value by its kind alone.
	_, err = in.GetComponents(ctx, objs[1])
	require.Error(t, err)
	assert.True(t, strings.HasSuffix(err.Error(), "expected an object but got: number"), "exported, the last stage's error too: %v", err)
}
