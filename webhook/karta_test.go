package webhook

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
)

// kartaReview builds a request for a workload object read from a file.
func kartaReview(t *testing.T, uid string, op karmada.Operation, file string, fields map[string]any) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	obj, err := sigsyaml.YAMLToJSON(data)
	require.NoError(t, err)
	var meta struct{ APIVersion, Kind string }
	require.NoError(t, json.Unmarshal(obj, &meta))
	gv, err := schema.ParseGroupVersion(meta.APIVersion)
	require.NoError(t, err)
	kind := map[string]string{"group": gv.Group, "version": gv.Version, "kind": meta.Kind}
	req := map[string]any{"uid": uid, "kind": kind, "operation": op, "object": json.RawMessage(obj)}
	for k, v := range fields {
		req[k] = v
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "request": req})
	require.NoError(t, err)
	return b
}

// TestKartasBackend serves the built-ins' generated Karmada hooks and checks
// each answer against the Program called directly.
func TestKartasBackend(t *testing.T) {
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	h := New(Options{}, Kartas{Registry: reg})
	const job = "../examples/pytorchjob/running.yaml"

	code, resp := post(t, h, kartaReview(t, "u-health", karmada.OpInterpretHealth, job, nil))
	require.Equal(t, http.StatusOK, code)
	require.True(t, resp.Response.Successful, "%+v", resp.Response.Status)
	assert.Equal(t, "u-health", string(resp.Response.UID))
	require.NotNil(t, resp.Response.Healthy)
	assert.True(t, *resp.Response.Healthy, "a Running PyTorchJob is healthy")

	_, resp = post(t, h, kartaReview(t, "u-comp", karmada.OpInterpretComponent, job, nil))
	require.True(t, resp.Response.Successful, "%+v", resp.Response.Status)
	var names []string
	for _, c := range resp.Response.Components {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"master", "worker"}, names)

	_, resp = post(t, h, kartaReview(t, "u-status", karmada.OpInterpretStatus, job, nil))
	require.True(t, resp.Response.Successful, "%+v", resp.Response.Status)
	require.NotNil(t, resp.Response.RawStatus)
	assert.Contains(t, string(resp.Response.RawStatus.Raw), `"conditions"`)

	_, resp = post(t, h, kartaReview(t, "u-deps", karmada.OpInterpretDependency, job, nil))
	require.True(t, resp.Response.Successful, "%+v", resp.Response.Status)

	// A PyTorchJob has two pod-bearing components: GetReplicas does not
	// apply, and the answer says so (404, as for an operation nothing
	// interprets) rather than inventing a number or claiming a failure.
	_, resp = post(t, h, kartaReview(t, "u-rep", karmada.OpInterpretReplica, job, nil))
	assert.False(t, resp.Response.Successful)
	require.NotNil(t, resp.Response.Status)
	assert.EqualValues(t, http.StatusNotFound, resp.Response.Status.Code)
	assert.Contains(t, resp.Response.Status.Message, "GetReplicas")

	// The built-in PyTorchJob Karta defines no Retain: no backend handles it.
	_, resp = post(t, h, kartaReview(t, "u-retain", karmada.OpRetain, job, map[string]any{"observedObject": json.RawMessage(`{}`)}))
	assert.False(t, resp.Response.Successful)
	require.NotNil(t, resp.Response.Status)
	assert.EqualValues(t, http.StatusNotFound, resp.Response.Status.Code)

	// The Programs' pools show in /metrics.
	metrics := scrape(t, h)
	assert.Regexp(t, `(?m)^karta_webhook_pool_size\{backend="0"\} [1-9][0-9]*$`, metrics)
	assert.Regexp(t, `(?m)^karta_webhook_pool_in_use\{backend="0"\} 0$`, metrics)
}

// TestKartasRetain: a Karta whose script defines Retain answers Retain in
// process, as its Karmada export does.
func TestKartasRetain(t *testing.T) {
	ks, err := karta.LoadFile("../examples/kartas/pytorchjob.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{Scripts: []interpreter.Script{{Name: "retain.lua", Source: `
function Retain(desired, observed)
  desired.spec.runPolicy = desired.spec.runPolicy or {}
  desired.spec.runPolicy.suspend = observed.spec.runPolicy and observed.spec.runPolicy.suspend or false
  return desired
end`}}})
	require.NoError(t, err)
	reg := interpreter.NewRegistry()
	reg.Put(p)
	h := New(Options{}, Kartas{Registry: reg})
	observed := json.RawMessage(`{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"x"},"spec":{"runPolicy":{"suspend":true}}}`)
	code, resp := post(t, h, kartaReview(t, "u-retain", karmada.OpRetain, "../examples/pytorchjob/running.yaml", map[string]any{"observedObject": observed}))
	require.Equal(t, http.StatusOK, code)
	require.True(t, resp.Response.Successful, "%+v", resp.Response.Status)
	assert.Contains(t, string(resp.Response.Patch), `"path":"/spec/runPolicy/suspend","value":true`)
}
