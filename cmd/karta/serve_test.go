package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/webhook"
)

const serveCustomization = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: widget
spec:
  target:
    apiVersion: test.karta.io/v1
    kind: Widget
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj)
          return obj.status ~= nil and obj.status.ready == true
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, desired)
          obj.spec.replicas = desired
          return obj
        end
`

// selfSigned writes a certificate for 127.0.0.1 and its key to dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	cert, key := issue(t, &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "karta-test"},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}, nil)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

var servingRE = regexp.MustCompile(`serving \d+ kinds on https://(127\.0\.0\.1:\d+)`)

// waitStopped waits for a serve command to return, without error.
func waitStopped(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("karta serve did not stop")
	}
}

// startServe runs the karta command of args (a serve) until ctx ends and
// returns the address re reads from its log, what the command returns and
// its standard error.
func startServe(t *testing.T, ctx context.Context, re *regexp.Regexp, args ...string) (string, <-chan error, *testenv.SyncBuffer) {
	t.Helper()
	stderr := &testenv.SyncBuffer{}
	root := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: stderr})
	root.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var addr string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}, 20*time.Second, 10*time.Millisecond, "no address printed: %s", stderr.String())
	return addr, done, stderr
}

// karta serve answers over TLS and stops on SIGTERM.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	cust := filepath.Join(dir, "widget.yaml")
	require.NoError(t, os.WriteFile(cust, []byte(serveCustomization), 0o600))

	addr, done, stderr := startServe(t, context.Background(), servingRE,
		"serve", "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile, "-c", cust)

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer client.CloseIdleConnections()
	base := "https://" + addr

	interpret := func(req map[string]any) *webhook.ResourceInterpreterResponse {
		t.Helper()
		body, err := json.Marshal(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "request": req})
		require.NoError(t, err)
		resp, err := client.Post(base+"/interpret", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var out webhook.ResourceInterpreterContext
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.NotNil(t, out.Response)
		return out.Response
	}
	obj := json.RawMessage(`{"apiVersion":"test.karta.io/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1},"status":{"ready":true}}`)
	kind := map[string]string{"group": "test.karta.io", "version": "v1", "kind": "Widget"}

	r := interpret(map[string]any{"uid": "h-1", "kind": kind, "operation": "InterpretHealth", "object": obj})
	require.True(t, r.Successful, "%+v", r.Status)
	assert.Equal(t, "h-1", string(r.UID))
	require.NotNil(t, r.Healthy)
	assert.True(t, *r.Healthy)

	r = interpret(map[string]any{"uid": "r-1", "kind": kind, "operation": "ReviseReplica", "object": obj, "replicas": 4})
	require.True(t, r.Successful, "%+v", r.Status)
	assert.Equal(t, "r-1", string(r.UID))
	assert.JSONEq(t, `[{"op":"replace","path":"/spec/replicas","value":4}]`, string(r.Patch))
	require.NotNil(t, r.PatchType)
	assert.Equal(t, "JSONPatch", *r.PatchType)

	r = interpret(map[string]any{"uid": "x-1", "kind": kind, "operation": "InterpretReplica", "object": obj})
	assert.False(t, r.Successful)
	require.NotNil(t, r.Status)
	assert.Equal(t, int32(404), r.Status.Code)

	get := func(path string) string {
		t.Helper()
		resp, err := client.Get(base + path)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	assert.Equal(t, "ok", get("/healthz"))
	assert.Contains(t, get("/metrics"), `karta_webhook_calls_total{api_version="test.karta.io/v1",kind="Widget",operation="InterpretHealth"} 1`)

	// Plain HTTP is refused: the server speaks TLS only.
	resp, err := http.Post("http://"+addr+"/interpret", "application/json", strings.NewReader("{}"))
	if err == nil {
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		_ = resp.Body.Close()
	}

	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("karta serve did not stop on SIGTERM")
	}
	assert.Contains(t, stderr.String(), "karta: shutting down")
	_, err = client.Get(base + "/healthz")
	assert.Error(t, err, "the server is closed")
}

// Cancelling the command's context stops a plain HTTP server too.
func TestServeStopsWithContext(t *testing.T) {
	cust := filepath.Join(t.TempDir(), "widget.yaml")
	require.NoError(t, os.WriteFile(cust, []byte(serveCustomization), 0o600))
	var stderr testenv.SyncBuffer
	root := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: &stderr})
	root.SetArgs([]string{"serve", "--listen", "127.0.0.1:0", "-c", cust, "--max-request-bytes", "100"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	re := regexp.MustCompile(`on http://(127\.0\.0\.1:\d+)`)
	var addr string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}, 20*time.Second, 10*time.Millisecond, stderr.String())

	resp, err := http.Post("http://"+addr+"/interpret", "application/json", strings.NewReader(strings.Repeat(" ", 200)))
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "--max-request-bytes")
	_ = resp.Body.Close()

	cancel()
	waitStopped(t, done)
}

func TestServeUsage(t *testing.T) {
	dir := t.TempDir()
	cust := filepath.Join(dir, "widget.yaml")
	require.NoError(t, os.WriteFile(cust, []byte(serveCustomization), 0o600))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\n"), 0o600))
	certFile, keyFile, _ := selfSigned(t, dir)
	// A Karta whose luaScript loops at top level: every hook it defines
	// would fail, so the server refuses to start.
	loops := filepath.Join(dir, "loops.yaml")
	require.NoError(t, os.WriteFile(loops, []byte(strings.Replace(hostileServeKarta, "spec:\n", "spec:\n  luaScript: |\n    while true do end\n", 1)), 0o600))
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no listen", []string{"serve", "-c", cust}, exitUsage, "listen"},
		{"nothing to serve", []string{"serve", "--listen", "127.0.0.1:0", "--builtins=false"}, exitUsage, "nothing to serve"},
		{"cert without key", []string{"serve", "--listen", "127.0.0.1:0", "-c", cust, "--tls-cert", cust}, exitUsage, "--tls-cert and --tls-key go together"},
		{"bad limit", []string{"serve", "--listen", "127.0.0.1:0", "-c", cust, "--max-request-bytes", "0"}, exitUsage, "--max-request-bytes"},
		{"missing file", []string{"serve", "--listen", "127.0.0.1:0", "-c", filepath.Join(dir, "nope.yaml")}, exitUsage, "cannot read"},
		{"not a customization", []string{"serve", "--listen", "127.0.0.1:0", "-c", bad}, exitInvalid, "want config.karmada.io/v1alpha1"},
		{"bad key pair", []string{"serve", "--listen", "127.0.0.1:0", "-c", cust, "--tls-cert", cust, "--tls-key", cust}, exitInvalid, "--tls-cert"},
		{"bad address", []string{"serve", "--listen", "127.0.0.1:notaport", "-c", cust}, exitInvalid, "--listen"},
		{"client CA without TLS", []string{"serve", "--listen", "127.0.0.1:0", "-c", cust, "--client-ca", cust}, exitUsage, "--client-ca needs --tls-cert"},
		{"client CA not PEM", []string{"serve", "--listen", "127.0.0.1:0", "-c", cust, "--tls-cert", certFile, "--tls-key", keyFile, "--client-ca", cust}, exitInvalid, "no PEM certificate"},
		{"bad isolate", []string{"serve", "--listen", "127.0.0.1:0", "-c", cust, "--isolate", "some"}, exitUsage, "--isolate must be untrusted, all or none"},
		{"bad concurrency", []string{"serve", "--listen", "127.0.0.1:0", "-c", cust, "--karta-concurrency", "-1"}, exitUsage, "--karta-concurrency must not be negative"},
		{"script that cannot run", []string{"serve", "--listen", "127.0.0.1:0", "-k", loops}, exitInvalid, `karta "hostile": load: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stderr, tt.msg)
		})
	}
}

const hostileServeKarta = `apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: hostile}
spec:
  structureDefinition:
    rootComponent:
      name: hostile
      kind: {group: example.com, version: v1alpha1, kind: BatchRun}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: '("x" * 100000000) | length > 0', expectedResult: "true"}
`

// karta serve with a hostile Karta beside the built-ins: the hostile kind
// gets a failed answer naming the Karta, the hook and the limit (the
// default memory guard), counted in /metrics; a built-in kind answers.
// webhook/hostile_test.go holds every amplification family.
func TestServeHostileKarta(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hostile.yaml")
	require.NoError(t, os.WriteFile(file, []byte(hostileServeKarta), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done, _ := startServe(t, ctx, regexp.MustCompile(`on http://(127\.0\.0\.1:\d+)`), "serve", "--listen", "127.0.0.1:0", "-k", file)
	base := "http://" + addr

	interpret := func(file string) *webhook.ResourceInterpreterResponse {
		t.Helper()
		obj := readObjectJSON(t, file)
		body, err := json.Marshal(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext",
			"request": map[string]any{"uid": "u", "operation": "InterpretHealth", "object": obj}})
		require.NoError(t, err)
		resp, err := http.Post(base+"/interpret", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		var out webhook.ResourceInterpreterContext
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.NotNil(t, out.Response)
		return out.Response
	}
	r := interpret("../../examples/custom-hook/batchrun-degraded.yaml")
	assert.False(t, r.Successful)
	require.NotNil(t, r.Status)
	assert.EqualValues(t, http.StatusInternalServerError, r.Status.Code)
	assert.Equal(t, `InterpretHealth (hook InterpretHealth) for example.com/v1alpha1 BatchRun ended on the memory limit: `+
		`karta "hostile": InterpretStatus: memory limit 64 MiB exceeded`, r.Status.Message)

	r = interpret("../../examples/pytorchjob/running.yaml")
	require.True(t, r.Successful, "%+v", r.Status)
	require.NotNil(t, r.Healthy)
	assert.True(t, *r.Healthy)

	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(metrics), `karta_webhook_limit_errors_total{hook="InterpretStatus",karta="hostile",kind="memory"} 1`)

	cancel()
	waitStopped(t, done)
}

// readObjectJSON reads a YAML object file as JSON.
func readObjectJSON(t *testing.T, file string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	raw, err := yaml.YAMLToJSON(data)
	require.NoError(t, err)
	return raw
}

// serve -k takes a built-in's name like every -k, and the log names every
// kind served and what answers for it.
func TestServeKartasAndLog(t *testing.T) {
	var stderr bytes.Buffer
	s := streams{in: strings.NewReader(""), out: io.Discard, err: &stderr}
	kartas, sources, err := serveKartas(s, &serveFlags{kartas: []string{"pytorchjob", "../../examples/kartas/trainjob.yaml"}})
	require.NoError(t, err, stderr.String())
	custs, err := karmada.Load([]byte(serveCustomization), "widget.yaml")
	require.NoError(t, err)
	lines := servedKinds(custs, kartas, sources)
	assert.Contains(t, lines, `kubeflow.org/v1, Kind=PyTorchJob: karta "pytorchjob" (built-in)`)
	assert.Contains(t, lines, `example.com/v1, Kind=TrainJob: karta "example-trainjob" (from ../../examples/kartas/trainjob.yaml)`)

	// With --isolate=untrusted, the Kartas of files run in workers.
	f := isolateFlags{mode: isolateUntrusted, memoryMiB: 512, concurrency: 1}
	sup, err := f.apply(&kartas, func(p *interpreter.Program) bool { return sources[p.Name()] == "built-in" })
	require.NoError(t, err)
	defer sup.Close()
	lines = servedKinds(custs, kartas, sources)
	assert.Contains(t, lines, `kubeflow.org/v1, Kind=PyTorchJob: karta "pytorchjob" (built-in)`)
	assert.Contains(t, lines, `example.com/v1, Kind=TrainJob: karta "example-trainjob" (from ../../examples/kartas/trainjob.yaml; isolated)`)
	found := false
	for _, l := range lines {
		if strings.Contains(l, "customization ") {
			found = true
		}
	}
	assert.True(t, found, "the customization's kind is listed: %v", lines)

	_, _, err = serveKartas(s, &serveFlags{kartas: []string{"no-such-karta"}})
	assert.ErrorContains(t, err, "-k no-such-karta: no such file and no built-in Karta of that name")
}
