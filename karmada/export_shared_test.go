package karmada

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sharedKarta's views place one table of the object twice: as two labels
// (Notebook's {statefulset: .metadata.name, "notebook-name": .metadata.name}
// when the name is an object), as the annotations and inside the pod spec,
// as two fragments, and as two containers.
const sharedKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: shared}
spec:
  structureDefinition:
    rootComponent:
      name: shared
      kind: {group: example.com, version: v1, kind: Shared}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
    childComponents:
    - name: twice
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: shared
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: twice}}
      specDefinition:
        podSpecPath: .spec.pod
        metadataPath: '{labels: {a: .spec.tag, b: .spec.tag}, annotations: .spec.pod.nodeSelector}'
    - name: containers
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: shared
      podSelector: {componentTypeSelector: {keyPath: .metadata.labels.role, value: containers}}
      specDefinition:
        fragmentedPodSpecDefinition:
          labelsPath: .spec.pod.nodeSelector
          annotationsPath: .spec.pod.nodeSelector
          containersPath: '[.spec.pod.containers[0], .spec.pod.containers[0]]'
`

// TestExportKarmadaCopiesSharedTables: a table of the object that a view
// places twice reaches Karmada's JSON encoder twice, which refuses it
// ("cannot encode recursively nested tables"); the export hands Karmada a
// copy for each place, and answers as the Program does.
func TestExportKarmadaCopiesSharedTables(t *testing.T) {
	p := progFrom(t, sharedKarta)
	_, in := exportedInterpreter(t, p, "shared.yaml")
	var objs []*unstructured.Unstructured
	for _, spec := range []string{
		"  tag: {}\n  pod: {nodeSelector: {zone: a}, containers: [{name: c, image: i, envFrom: [{secretRef: {name: s}}]}]}",
		"  tag: t\n  pod: {nodeSelector: {}, containers: [{name: c, resources: {requests: {cpu: 1}}}]}",
		"  tag: {x: {y: 1}}\n  pod: {containers: [{name: c}]}",
	} {
		objs = append(objs, progObj(t, "apiVersion: example.com/v1\nkind: Shared\nmetadata: {name: s, namespace: ns}\nspec:\n"+spec))
	}
	compareExport(t, p, in, objs)

	ctx := context.Background()
	cs, err := in.GetComponents(ctx, objs[0])
	require.NoError(t, err, "a table placed twice is not refused")
	assert.Len(t, cs, 2)
	deps, err := in.GetDependencies(ctx, objs[0])
	require.NoError(t, err)
	assert.Len(t, deps, 1, "the container's secret, once")
}
