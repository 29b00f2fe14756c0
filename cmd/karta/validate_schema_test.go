package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	apiextensionsclientv1 "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/karta/schemacheck"
)

// validate --live checks a Karta against the CRD the cluster serves for
// its kind, found by group and kind among the cluster's CRDs.
func TestValidateLive(t *testing.T) {
	data, err := os.ReadFile("../../examples/tutorial-trainjob/crd.yaml")
	require.NoError(t, err)
	crds, err := schemacheck.DecodeCRDs(data, "crd.yaml")
	require.NoError(t, err)
	served := crds[0]
	unserved := served.DeepCopy()
	unserved.Spec.Versions[0].Served = false

	cases := []struct {
		name   string
		crds   []*apiextensionsv1.CustomResourceDefinition
		args   []string
		code   int
		stdout string
		stderr []string
	}{
		{"served", []*apiextensionsv1.CustomResourceDefinition{served}, []string{"../../examples/kartas/trainjob.yaml"}, exitOK,
			"../../examples/kartas/trainjob.yaml: ok\n", nil},
		{"drifted", []*apiextensionsv1.CustomResourceDefinition{served}, []string{"../../examples/kartas/trainjob-drifted.yaml"}, exitInvalid, "", []string{
			`replicasPath: spec has no field "worker"; did you mean "workers"? (it has: launcher, suspend, workers) (schema: example.com/v1 TrainJob spec)`,
			`byPhase: "Completed" is not a phase the schema allows (status.phase: Failed, Pending, Running, Succeeded, Suspended)`,
		}},
		{"not served", []*apiextensionsv1.CustomResourceDefinition{unserved}, []string{"../../examples/kartas/trainjob.yaml"}, exitOK,
			"../../examples/kartas/trainjob.yaml: ok\n", []string{
				"spec.structureDefinition.rootComponent.kind: warning: not checked against a schema: no served CRD for example.com/v1 TrainJob in the cluster at https://k8s.test",
			}},
		{"no CRD", nil, []string{"../../examples/kartas/trainjob.yaml"}, exitOK,
			"../../examples/kartas/trainjob.yaml: ok\n", []string{"no served CRD for example.com/v1 TrainJob in the cluster at https://k8s.test"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := make([]runtime.Object, len(tc.crds))
			for i, c := range tc.crds {
				objs[i] = c
			}
			client := fake.NewClientset(objs...).ApiextensionsV1().CustomResourceDefinitions()
			var gotFlags *cluster.ConfigFlags
			restore := newCRDClient
			newCRDClient = func(f *cluster.ConfigFlags) (apiextensionsclientv1.CustomResourceDefinitionInterface, string, error) {
				gotFlags = f
				return client, "https://k8s.test", nil
			}
			t.Cleanup(func() { newCRDClient = restore })

			args := append([]string{"validate", "--live", "--context", "prod"}, tc.args...)
			stdout, stderr, code := runCLI(t, "", args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Equal(t, tc.stdout, stdout)
			for _, want := range tc.stderr {
				assert.Contains(t, stderr, want)
			}
			if len(tc.stderr) == 0 {
				assert.Empty(t, stderr)
			}
			require.NotNil(t, gotFlags)
			assert.Equal(t, "prod", gotFlags.Context, "the kubeconfig flags reach the client")
		})
	}
}

// A cluster that cannot be reached is reported once, exit 1.
func TestValidateLiveWithoutCluster(t *testing.T) {
	_, stderr, code := runCLI(t, "", "validate", "--live", "--kubeconfig", "testdata/in/no-such-kubeconfig", "../../examples/kartas/trainjob.yaml")
	assert.Equal(t, exitInvalid, code)
	assert.True(t, strings.HasPrefix(stderr, "kubeconfig: "), stderr)
}
