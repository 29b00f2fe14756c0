package schemacheck_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/karta/schemacheck"
)

// ReferenceSchemas asks for each referenced kind once, in the references'
// order, and leaves out a kind without a schema.
func TestReferenceSchemas(t *testing.T) {
	ks, err := karta.Load([]byte(`apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: refs}
spec:
  references:
  - {name: a, kind: {group: example.com, version: v1, kind: Widget}, lookup: {name: .spec.a}}
  - {name: pods, kind: {version: v1, kind: Pod}, list: {owner: true}}
  - {name: b, kind: {group: example.com, version: v1, kind: Widget}, lookup: {name: .spec.b}}
  structureDefinition:
    rootComponent: {name: w, kind: {group: example.com, version: v1, kind: Widget}}
`), "refs.yaml")
	require.NoError(t, err)
	s := loadSchema(t, "testdata/widget-crd.yaml", widget)
	var asked []schema.GroupVersionKind
	got := schemacheck.ReferenceSchemas(context.Background(), ks[0], func(_ context.Context, gvk schema.GroupVersionKind) (*schemacheck.Schema, error) {
		asked = append(asked, gvk)
		if gvk == widget {
			return s, nil
		}
		return nil, errors.Join(schemacheck.ErrNoCRD, errors.New("pods are built in"))
	})
	assert.Equal(t, []*schemacheck.Schema{s}, got)
	assert.Equal(t, []schema.GroupVersionKind{widget, {Version: "v1", Kind: "Pod"}}, asked)
}
