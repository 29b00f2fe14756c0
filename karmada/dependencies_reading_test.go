package karmada

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// dependencyReadingKarta has two fragmented components: "main", whose
// containerPath and initContainersPath can name dependencies and whose
// labels, resources and image paths cannot (resources fails on a memory
// that is no number), and "side", with only a resources path.
const dependencyReadingKarta = `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: deps}
spec:
  structureDefinition:
    rootComponent:
      name: app
      kind: {group: example.com, version: v1, kind: App}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: .status.ready, expectedResult: "true"}}]
    childComponents:
    - name: main
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: app
      specDefinition:
        fragmentedPodSpecDefinition:
          labelsPath: .spec.labels
          imagePath: .spec.image
          resourcesPath: '{requests: {memory: ((.spec.memory | tonumber | tostring) + "Mi")}}'
          containerPath: .spec.main
          initContainersPath: .spec.init
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: main}
    - name: side
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: app
      specDefinition:
        fragmentedPodSpecDefinition:
          resourcesPath: '{requests: {memory: ((.spec.memory | tonumber | tostring) + "Mi")}}'
      podSelector:
        componentTypeSelector: {keyPath: .metadata.labels.role, value: side}
`

// TestGetDependenciesReadsOnlyItsSources: GetDependencies of a fragmented
// component evaluates only the paths that can name a dependency, in
// process and in the export alike (compareExport), so a failing resources
// path fails GetComponents and not GetDependencies; a component with none
// of those paths is not read; the main container is containerPath's object
// as it is (its own image kept, the imagePath not laid over it).
func TestGetDependenciesReadsOnlyItsSources(t *testing.T) {
	p := progFrom(t, dependencyReadingKarta)
	_, in := exportedInterpreter(t, p, "deps.yaml")
	obj := func(memory, main string) *unstructured.Unstructured {
		return progObj(t, `apiVersion: example.com/v1
kind: App
metadata: {name: a, namespace: ns}
spec:
  labels: {app: a}
  image: img:2
  memory: `+memory+`
  main: `+main+`
  init: [{name: init, envFrom: [{secretRef: {name: init-secret}}]}]
`)
	}
	env := `{name: m, image: own:1, env: [{name: X, valueFrom: {configMapKeyRef: {name: settings, key: x}}}]}`
	tests := []struct {
		name          string
		obj           *unstructured.Unstructured
		wantDeps      []string // kind/name
		depsErr       bool
		componentsErr bool
	}{
		{"memory a number", obj(`"512"`, env), []string{"ConfigMap/settings", "Secret/init-secret"}, false, false},
		{"memory no number", obj(`"lots"`, env), []string{"ConfigMap/settings", "Secret/init-secret"}, false, true},
		{"no main container", obj(`"lots"`, `null`), []string{"Secret/init-secret"}, false, true},
		// The main container's own resources, which GetComponents' view
		// replaces by the resourcesPath's, are what GetDependencies'
		// view converts: a quantity that is none fails there alone.
		{"main's own resources malformed", obj(`"512"`, `{name: m, resources: {limits: {cpu: "not a quantity"}}}`), nil, true, false},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			compareExport(t, p, in, []*unstructured.Unstructured{tc.obj})
			deps, err := ForProgram(p).GetDependencies(ctx, tc.obj)
			if tc.depsErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			var got []string
			for _, d := range deps {
				assert.Equal(t, "ns", d.Namespace)
				got = append(got, d.Kind+"/"+d.Name)
			}
			assert.Equal(t, tc.wantDeps, got)
			_, err = ForProgram(p).GetComponents(ctx, tc.obj)
			assert.Equal(t, tc.componentsErr, err != nil, "GetComponents error: %v", err)
		})
	}
}
