package karmada

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const widgetCustomization = `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: widgets
spec:
  target:
    apiVersion: example.io/v1
    kind: Widget
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj) return obj.status ~= nil and obj.status.ready == true end
    componentResource:
      luaScript: |
        function GetComponents(obj) return {} end
`

func TestLoad(t *testing.T) {
	custs, err := Load([]byte(widgetCustomization+"---\n# nothing here\n---\n"+`{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomizationList",
	  "items": [{"metadata": {"name": "b"}, "spec": {"target": {"apiVersion": "v1", "kind": "Pod"},
	    "customizations": {"retention": {"luaScript": "function Retain(d, o) return d end"}}}}]}`), "custs.yaml")
	require.NoError(t, err)
	require.Len(t, custs, 2)
	assert.Equal(t, "widgets", custs[0].Name)
	assert.Equal(t, CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"}, custs[0].Spec.Target)
	assert.Contains(t, OpInterpretHealth.Script(&custs[0].Spec.Customizations), "function InterpretHealth")
	assert.Contains(t, OpInterpretComponent.Script(&custs[0].Spec.Customizations), "function GetComponents")
	assert.Equal(t, "", OpRetain.Script(&custs[0].Spec.Customizations))
	assert.Equal(t, "custs.yaml:2: document 1", custs[0].Source, "where the document starts")
	assert.Equal(t, "b", custs[1].Name)
	assert.Equal(t, CustomizationKind, custs[1].Kind, "a list item may leave its kind out")
	assert.Contains(t, custs[1].Source, "items[0]")

	for _, tc := range []struct{ doc, want string }{
		{"apiVersion: v1\nkind: ConfigMap\n", `apiVersion "v1", kind "ConfigMap": want config.karmada.io/v1alpha1 ResourceInterpreterCustomization`},
		{"apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nspec: {target: {}}\n",
			"missing metadata.name, spec.target.apiVersion, spec.target.kind"},
		{"apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nspec: [1]\n", "invalid ResourceInterpreterCustomization"},
		{"a: [unclosed\n", "bad.yaml:2: invalid YAML: did not find expected ',' or ']'"},
	} {
		_, err := Load([]byte(tc.doc), "bad.yaml")
		require.Error(t, err, tc.doc)
		var le *LoadError
		require.ErrorAs(t, err, &le)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err = Load([]byte(widgetCustomization+"---\napiVersion: v1\nkind: Pod\n"), "two.yaml")
	assert.EqualError(t, err, `two.yaml:18: document 2: apiVersion "v1", kind "Pod": want config.karmada.io/v1alpha1 ResourceInterpreterCustomization`)
}

func TestParseOperation(t *testing.T) {
	for in, want := range map[string]Operation{
		"InterpretReplica": OpInterpretReplica, "interpretreplica": OpInterpretReplica, "GetReplicas": OpInterpretReplica,
		"retain": OpRetain, "ReflectStatus": OpInterpretStatus, "interpretcomponent": OpInterpretComponent,
		"GetDependencies": OpInterpretDependency,
	} {
		got, err := ParseOperation(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := ParseOperation("Prune")
	assert.ErrorContains(t, err, `unknown operation "Prune"`)
	assert.Equal(t, "GetComponents", OpInterpretComponent.Hook())
	assert.Equal(t, "statusReflection", OpInterpretStatus.Field())
}
