package crd_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/karta/crd"
)

func decodeCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var c apiextensionsv1.CustomResourceDefinition
	require.NoError(t, sigsyaml.UnmarshalStrict(crd.Manifest, &c), "the embedded CRD must decode strictly")
	return &c
}

func structural(t *testing.T, c *apiextensionsv1.CustomResourceDefinition) *structuralschema.Structural {
	t.Helper()
	require.Len(t, c.Spec.Versions, 1)
	v1Schema := c.Spec.Versions[0].Schema.OpenAPIV3Schema
	require.NotNil(t, v1Schema)
	var internal apiextensions.JSONSchemaProps
	require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1Schema, &internal, nil))
	s, err := structuralschema.NewStructural(&internal)
	require.NoError(t, err)
	return s
}

func TestCRDIdentity(t *testing.T) {
	c := decodeCRD(t)
	assert.Equal(t, "apiextensions.k8s.io/v1", c.APIVersion)
	assert.Equal(t, "CustomResourceDefinition", c.Kind)
	assert.Equal(t, "kartas.run.ai", c.Name)
	assert.Equal(t, karta.Group, c.Spec.Group)
	assert.Equal(t, karta.KindKarta, c.Spec.Names.Kind)
	require.Len(t, c.Spec.Versions, 1)
	v := c.Spec.Versions[0]
	assert.Equal(t, karta.Version, v.Name)
	assert.True(t, v.Served)
	assert.True(t, v.Storage)
	require.NotNil(t, v.Subresources)
	assert.NotNil(t, v.Subresources.Status, "the controller writes status through the status subresource")
}

func TestCRDSchemaIsStructural(t *testing.T) {
	s := structural(t, decodeCRD(t))
	errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), s)
	assert.Empty(t, errs, "the schema must be structural")
}

// TestCRDDefaultsMatchLoader applies the CRD's defaults the way the API
// server does and checks they are the ones the Go loader applies.
func TestCRDDefaultsMatchLoader(t *testing.T) {
	s := structural(t, decodeCRD(t))
	obj := map[string]any{
		"apiVersion": "run.ai/v1alpha1",
		"kind":       "Karta",
		"metadata":   map[string]any{"name": "x"},
		"spec": map[string]any{
			"structureDefinition": map[string]any{
				"rootComponent": map[string]any{
					"name": "x",
					"statusDefinition": map[string]any{
						"conditionsDefinition": map[string]any{"path": ".status.conditions", "messageFieldName": ""},
						"statusMappings":       map[string]any{},
					},
				},
			},
		},
	}
	structuraldefaulting.Default(obj, s)
	cd := obj["spec"].(map[string]any)["structureDefinition"].(map[string]any)["rootComponent"].(map[string]any)["statusDefinition"].(map[string]any)["conditionsDefinition"].(map[string]any)
	assert.Equal(t, karta.DefaultTypeFieldName, cd["typeFieldName"])
	assert.Equal(t, karta.DefaultStatusFieldName, cd["statusFieldName"])
	assert.Equal(t, "", cd["messageFieldName"], "an explicit empty string disables the field and is kept")
	assert.Equal(t, karta.DefaultReasonFieldName, cd["reasonFieldName"])
}

// TestCRDSchemaMatchesGoTypes walks the Go types and the schema together:
// every JSON field of the Go types has a property of the matching type, and
// every property has a Go field.
func TestCRDSchemaMatchesGoTypes(t *testing.T) {
	s := structural(t, decodeCRD(t))
	var problems []string
	compareType(reflect.TypeOf(karta.Karta{}), s, "", &problems)
	sort.Strings(problems)
	assert.Empty(t, problems)
}

var (
	typeJSON      = reflect.TypeOf(apiextensionsv1.JSON{})
	typeCondition = reflect.TypeOf(metav1.Condition{})
	typeObjMeta   = reflect.TypeOf(metav1.ObjectMeta{})
)

func compareType(t reflect.Type, s *structuralschema.Structural, path string, problems *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	add := func(format string) { *problems = append(*problems, path+": "+format) }
	switch {
	case t == typeJSON:
		if !s.XPreserveUnknownFields || s.Type != "" {
			add("an arbitrary JSON value needs x-kubernetes-preserve-unknown-fields and no type")
		}
		return
	case t == typeObjMeta || t == typeCondition:
		if s.Type != "object" {
			add("want object, got " + s.Type)
		}
		return
	}
	switch t.Kind() {
	case reflect.String:
		if s.Type != "string" {
			add("want string, got " + s.Type)
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		if s.Type != "integer" {
			add("want integer, got " + s.Type)
		}
	case reflect.Bool:
		if s.Type != "boolean" {
			add("want boolean, got " + s.Type)
		}
	case reflect.Slice:
		if s.Type != "array" || s.Items == nil {
			add("want array, got " + s.Type)
			return
		}
		compareType(t.Elem(), s.Items, path+"[]", problems)
	case reflect.Map:
		if s.Type != "object" || s.AdditionalProperties == nil || s.AdditionalProperties.Structural == nil {
			add("want an object with additionalProperties, got " + s.Type)
			return
		}
		compareType(t.Elem(), s.AdditionalProperties.Structural, path+"{}", problems)
	case reflect.Struct:
		if s.Type != "object" {
			add("want object, got " + s.Type)
			return
		}
		fields := map[string]reflect.StructField{}
		collectJSONFields(t, fields)
		for name, f := range fields {
			prop, ok := s.Properties[name]
			if !ok {
				add("Go field " + name + " has no schema property")
				continue
			}
			compareType(f.Type, &prop, joinPath(path, name), problems)
		}
		for name := range s.Properties {
			if _, ok := fields[name]; !ok {
				add("schema property " + name + " has no Go field")
			}
		}
	default:
		add("unexpected Go kind " + t.Kind().String())
	}
}

func collectJSONFields(t reflect.Type, out map[string]reflect.StructField) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			collectJSONFields(f.Type, out)
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// TestCompareTypeFindsMismatches keeps the comparison honest: a schema that
// lacks a field, has an extra one or a wrong type must be reported.
func TestCompareTypeFindsMismatches(t *testing.T) {
	type inner struct {
		A string `json:"a"`
	}
	type outer struct {
		Name  string  `json:"name"`
		Items []inner `json:"items"`
	}
	s := &structuralschema.Structural{
		Generic: structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{
			"name":  {Generic: structuralschema.Generic{Type: "integer"}},
			"extra": {Generic: structuralschema.Generic{Type: "string"}},
		},
	}
	var problems []string
	compareType(reflect.TypeOf(outer{}), s, "", &problems)
	sort.Strings(problems)
	assert.Equal(t, []string{
		": Go field items has no schema property",
		": schema property extra has no Go field",
		"name: want string, got integer",
	}, problems)
}
