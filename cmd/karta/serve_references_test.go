package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/cluster/clustertest"
	"github.com/kartalua/karta/cluster/refs"
	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/webhook"
)

// probeGet answers a GET of path from h: its status and body.
func probeGet(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	body, err := io.ReadAll(w.Result().Body)
	require.NoError(t, err)
	return w.Code, string(body)
}

// waitReady waits until h's /readyz answers 200, and returns its body.
func waitReady(t *testing.T, h http.Handler) string {
	t.Helper()
	var body string
	require.Eventually(t, func() bool {
		var code int
		code, body = probeGet(t, h, readyzPath)
		return code == http.StatusOK
	}, 30*time.Second, 10*time.Millisecond, "readyz: %s", body)
	return body
}

// interpretComponents asks h for InterpretComponent of the TrainJob of
// examples/trainjob/running.yaml: the components' names, whether the
// node's requirements carry the node claim of the TrainJob's override
// (which only the runtime's pod template gets), and the Warning headers.
func interpretComponents(t *testing.T, h http.Handler) (names []string, nodeClaim bool, warnings []string) {
	t.Helper()
	data, err := os.ReadFile("../../examples/trainjob/running.yaml")
	require.NoError(t, err)
	obj, err := sigsyaml.YAMLToJSON(data)
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "request": map[string]any{
		"uid": "c-1", "operation": "InterpretComponent", "object": json.RawMessage(obj),
		"kind": map[string]string{"group": "trainer.kubeflow.org", "version": "v1alpha1", "kind": "TrainJob"}}})
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, webhook.InterpretPath, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code)
	var out webhook.ResourceInterpreterContext
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), w.Body.String())
	require.True(t, out.Response.Successful, "%+v", out.Response.Status)
	for _, c := range out.Response.Components {
		names = append(names, c.Name)
		if c.Name == "node" && c.ReplicaRequirements != nil && c.ReplicaRequirements.NodeClaim != nil {
			nodeClaim = true
		}
	}
	return names, nodeClaim, w.Header().Values("Warning")
}

// karta serve with a cluster: its references cache is guarded as the
// controller's. While the API server does not answer the list of the
// runtimes, serve keeps answering (the runtime absent, a Warning says
// why), karta_watch_failing names the resource in serve's /metrics and,
// past the bound, /readyz answers 503 naming it. Once the server answers,
// /readyz is "ok" and Karmada gets the runtime's pod templates.
func TestServeReferencesReadiness(t *testing.T) {
	c, dyn := clustertest.New(t, append(clustertest.Core(), runtimeResources...),
		clustertest.Read(t, "../../examples/trainjob/refs/torchtune-llama3.2-3b.yaml")...)
	var down atomic.Bool
	down.Store(true)
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	dyn.PrependReactor("list", "clustertrainingruntimes", func(clienttesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			return true, nil, refused
		}
		return false, nil, nil
	})
	b, ok, err := builtin.Get("trainjob")
	require.NoError(t, err)
	require.True(t, ok)
	p, err := b.Compile(interpreter.Options{})
	require.NoError(t, err)
	reg := interpreter.NewRegistry()
	reg.Put(p)

	metrics := prometheus.NewRegistry()
	live, err := newLiveReferences(c.Dynamic, c.Mapper, reg, refs.Options{
		ServerProbe: func(context.Context) error {
			if down.Load() {
				return refused
			}
			return nil
		},
		Registerer: metrics, WatchFailureBound: 100 * time.Millisecond,
	})
	require.NoError(t, err)
	h := serveHandler(webhook.Options{Registry: metrics}, live, webhook.Kartas{Registry: reg})

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { live.run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})

	const resource = "clustertrainingruntimes.trainer.kubeflow.org"
	require.Eventually(t, func() bool {
		_, body := probeGet(t, h, readyzPath)
		return bytes.Contains([]byte(body), []byte("API server has not answered"))
	}, 30*time.Second, 10*time.Millisecond)
	code, body := probeGet(t, h, readyzPath)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Regexp(t, `^not ready: references: the API server has not answered the watches of `+resource+` for \d+s: dial tcp: connection refused$`, body)
	_, body = probeGet(t, h, webhook.MetricsPath)
	assert.Contains(t, body, `karta_watch_failing{resource="`+resource+`"} 1`)
	names, nodeClaim, warnings := interpretComponents(t, h)
	assert.Equal(t, []string{"dataset-initializer", "model-initializer", "node"}, names, "the built-in's fragments")
	assert.False(t, nodeClaim)
	assert.Equal(t, []string{`299 karta "karta \"trainjob\": reference \"clusterTrainingRuntime\": absent: the cache of trainer.kubeflow.org/v1alpha1, Kind=ClusterTrainingRuntime has not synced yet"`}, warnings)

	down.Store(false)
	assert.Equal(t, "ok", waitReady(t, h))
	_, body = probeGet(t, h, webhook.MetricsPath)
	assert.NotContains(t, body, `karta_watch_failing{`)
	assert.Contains(t, body, `karta_watch_errors_total{resource="`+resource+`"}`)
	names, nodeClaim, warnings = interpretComponents(t, h)
	assert.Equal(t, []string{"dataset-initializer", "model-initializer", "node"}, names, "the runtime's jobs")
	assert.True(t, nodeClaim, "the runtime's node template, with the TrainJob's override")
	assert.Empty(t, warnings)
}

// Without a cluster, serve's /readyz has nothing to wait for.
func TestServeReadyWithoutReferences(t *testing.T) {
	h := serveHandler(webhook.Options{}, nil, webhook.Kartas{Registry: interpreter.NewRegistry()})
	code, body := probeGet(t, h, readyzPath)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
	code, body = probeGet(t, h, webhook.HealthzPath)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
}

// The controller's /readyz waits for the references' caches too, the
// same readiness as serve's.
func TestControllerProbesWaitForTheReferences(t *testing.T) {
	c, _ := clustertest.New(t, append(clustertest.Core(), runtimeResources...))
	reg := interpreter.NewRegistry()
	ks, err := karta.LoadFile("../../examples/kartas/trainjob-runtime.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	reg.Put(p)
	live, err := newLiveReferences(c.Dynamic, c.Mapper, reg, refs.Options{})
	require.NoError(t, err)
	live.cache.WatchRegistry(reg) // watched, not started

	listKinds := map[schema.GroupVersionResource]string{controller.KartaResource: "KartaList"}
	ctrl, err := controller.New(dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds), interpreter.NewRegistry(), controller.Options{Standby: true})
	require.NoError(t, err)
	h := probes(ctrl, &gangRun{}, live)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, ctrl.Run(ctx)) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	require.Eventually(t, ctrl.HasSynced, time.Minute, 10*time.Millisecond)
	code, body := probeGet(t, h, readyzPath)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not ready: the caches of the referenced kinds are not synced yet", body)

	wg.Go(func() { live.run(ctx) })
	assert.Equal(t, "ok: standby", waitReady(t, h))
}
