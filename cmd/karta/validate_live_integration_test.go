//go:build integration

package main

import (
	"context"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/karta/schemacheck"
)

// validate --live against a real API server: the TrainJob CRD installed
// from examples/tutorial-trainjob/crd.yaml refutes the drifted Karta's paths; the
// test cluster's stand-in PyTorchJob CRD keeps any field, so its Karta's
// paths can only be warned about.
func TestLiveValidate(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	cs, err := apiextensionsclient.NewForConfig(cfg)
	require.NoError(t, err)
	data, err := os.ReadFile("../../examples/tutorial-trainjob/crd.yaml")
	require.NoError(t, err)
	crds, err := schemacheck.DecodeCRDs(data, "crd.yaml")
	require.NoError(t, err)
	client := cs.ApiextensionsV1().CustomResourceDefinitions()
	ctx := context.Background()
	_, err = client.Create(ctx, crds[0], metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	t.Cleanup(func() { _ = client.Delete(context.Background(), crds[0].Name, metav1.DeleteOptions{}) })
	kubeconfig := testenv.Kubeconfig(t)

	stdout, stderr, code := runCLI(t, "", "validate", "--live", "--kubeconfig", kubeconfig,
		"../../examples/kartas/trainjob.yaml", "../../examples/kartas/trainjob-drifted.yaml")
	assert.Equal(t, exitInvalid, code, stderr)
	assert.Equal(t, "../../examples/kartas/trainjob.yaml: ok\n", stdout)
	assert.Len(t, regexp.MustCompile(`(?m)^\.\./\.\./examples/kartas/trainjob-drifted\.yaml:[0-9]+: spec\.`).FindAllString(stderr, -1), 4, stderr)
	assert.Contains(t, stderr, `replicasPath: spec has no field "worker"; did you mean "workers"?`)

	stdout, stderr, code = runCLI(t, "", "validate", "--live", "--kubeconfig", kubeconfig, "../../examples/kartas/pytorchjob.yaml")
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "../../examples/kartas/pytorchjob.yaml: ok\n", stdout)
	assert.Contains(t, stderr, "warning: cannot tell whether the path yields pod templates (objects with spec.containers): "+
		"enters x-kubernetes-preserve-unknown-fields at spec")
}
