package karmada

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
)

// Loading Kartas and objects for the tests of Karmada's operations on a
// Karta's Program, through the public surface a caller uses: karta.Load
// (which applies the CRD defaults), validation with the interpreter's Lua
// checks, interpreter.Compile, and objects decoded as the CLI decodes them
// (numbers as json.Number, key order kept).

// progKarta loads the one Karta of a YAML text and requires that it
// validates without errors.
func progKarta(t testing.TB, text string) *karta.Karta {
	t.Helper()
	ks, err := karta.Load([]byte(text), "test.karta.yaml")
	require.NoError(t, err)
	require.Len(t, ks, 1)
	errs := karta.ValidateWithOptions(ks[0], interpreter.ValidateOptions()).Errors()
	require.Empty(t, errs, "the Karta %q must be valid", ks[0].Name)
	return ks[0]
}

// progKartaFile is progKarta on a file.
func progKartaFile(t testing.TB, path string) *karta.Karta {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return progKarta(t, string(data))
}

// progCompile compiles k.
func progCompile(t testing.TB, k *karta.Karta, opts interpreter.Options) *interpreter.Program {
	t.Helper()
	p, err := interpreter.Compile(k, opts)
	require.NoError(t, err)
	return p
}

// progFrom loads, validates and compiles the one Karta of a YAML text.
func progFrom(t testing.TB, text string) *interpreter.Program {
	t.Helper()
	return progCompile(t, progKarta(t, text), interpreter.Options{})
}

// progObjects decodes every object of a YAML text (Lists expanded).
func progObjects(t testing.TB, text string) []*unstructured.Unstructured {
	t.Helper()
	docs, err := object.Decode([]byte(text), "test.yaml")
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, o := range object.Items(docs) {
		out = append(out, &unstructured.Unstructured{Object: o})
	}
	return out
}

// progObj decodes the one object of a YAML text.
func progObj(t testing.TB, text string) *unstructured.Unstructured {
	t.Helper()
	objs := progObjects(t, text)
	require.Len(t, objs, 1)
	return objs[0]
}

// progObjFile decodes the objects of a file.
func progObjFile(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return progObjects(t, string(data))
}

// trainerObj is an example.com/v1 Trainer with the given spec (YAML,
// indented by 2 spaces).
func trainerObj(t testing.TB, spec string) *unstructured.Unstructured {
	t.Helper()
	return progObj(t, `
apiVersion: example.com/v1
kind: Trainer
metadata: {name: t, namespace: ns}
spec:
`+spec)
}

// podsKarta is a Karta of kind example.com/v1 Trainer with the given child
// components (YAML list items, indented by 4 spaces).
func podsKarta(children string) string {
	return `
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: pods-lab}
spec:
  structureDefinition:
    rootComponent:
      name: trainer
      kind: {group: example.com, version: v1, kind: Trainer}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
    childComponents:
` + children
}
