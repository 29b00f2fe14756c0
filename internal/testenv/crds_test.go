package testenv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/podgroups"
)

// TestCRDsCoverBuiltinKinds fails when a built-in Karta names a custom kind
// (root, child or additional child) that InstallCRDs would not install.
func TestCRDsCoverBuiltinKinds(t *testing.T) {
	crds, err := loadCRDs()
	require.NoError(t, err)
	served := map[schema.GroupVersionKind]string{}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				served[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = crd.Name
			}
		}
	}

	all, err := builtin.All()
	require.NoError(t, err)
	require.NotEmpty(t, all)
	for _, b := range all {
		sd := b.Karta.Spec.StructureDefinition
		var gvks []schema.GroupVersionKind
		for _, c := range sd.Components() {
			if c.Kind != nil {
				gvks = append(gvks, c.Kind.GVK())
			}
		}
		for _, k := range sd.AdditionalChildKinds {
			gvks = append(gvks, k.GVK())
		}
		for _, gvk := range gvks {
			// Groups without a dot ("", apps, batch) are Kubernetes' own.
			if !strings.Contains(gvk.Group, ".") {
				continue
			}
			assert.Contains(t, served, gvk, "built-in %s uses %s, which no CRD in crds/ serves", b.Name, gvk)
		}
	}
}

// TestCRDsCoverGangTargets fails when a gang output target's third-party
// kind has no stand-in (the Workload API's are the API server's own).
func TestCRDsCoverGangTargets(t *testing.T) {
	crds, err := loadCRDs()
	require.NoError(t, err)
	served := map[schema.GroupVersionKind]bool{}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			served[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = v.Served
		}
	}
	for _, target := range podgroups.Targets() {
		for _, gvk := range podgroups.Kinds(target) {
			if target == podgroups.WorkloadAPI {
				assert.Equal(t, "scheduling.k8s.io", gvk.Group)
				continue
			}
			assert.True(t, served[gvk], "target %s writes %s, which no CRD in crds/ serves", target, gvk)
		}
	}
}

func TestCRDsAreWellFormed(t *testing.T) {
	crds, err := loadCRDs()
	require.NoError(t, err)
	require.Equal(t, "kartas.run.ai", crds[0].Name, "the Karta CRD comes first")

	names := map[string]bool{}
	for _, crd := range crds {
		t.Run(crd.Name, func(t *testing.T) {
			assert.False(t, names[crd.Name], "duplicate CRD")
			names[crd.Name] = true
			n := crd.Spec.Names
			assert.Equal(t, n.Plural+"."+crd.Spec.Group, crd.Name, "CRD name must be <plural>.<group>")
			assert.Equal(t, strings.ToLower(n.Kind), n.Singular)
			assert.Equal(t, n.Kind+"List", n.ListKind)
			storage := 0
			for _, v := range crd.Spec.Versions {
				if v.Storage {
					storage++
				}
				assert.True(t, v.Served, "version %s not served", v.Name)
			}
			assert.Equal(t, 1, storage, "exactly one storage version")
			if crd.Name == "kartas.run.ai" {
				return
			}
			assert.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
			for _, v := range crd.Spec.Versions {
				require.NotNil(t, v.Subresources, "version %s", v.Name)
				assert.NotNil(t, v.Subresources.Status, "version %s needs the status subresource", v.Name)
				require.NotNil(t, v.Schema, "version %s", v.Name)
				props := v.Schema.OpenAPIV3Schema.Properties
				for _, field := range []string{"spec", "status"} {
					p, ok := props[field]
					if assert.True(t, ok, "version %s has no %s", v.Name, field) {
						assert.Equal(t, "object", p.Type)
						assert.True(t, p.XPreserveUnknownFields != nil && *p.XPreserveUnknownFields,
							"version %s: %s must keep unknown fields", v.Name, field)
					}
				}
			}
		})
	}
}
