package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/gangoutput"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// controllerKubeconfig writes a kubeconfig for a server at url.
func controllerKubeconfig(t *testing.T, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "` + url + `"}
users:
- name: test
  user: {token: secret}
contexts:
- name: test
  context: {cluster: test, user: test, namespace: karta-system}
current-context: test
`
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// controllerArgs are the flags every test run needs: free ports.
var controllerArgs = []string{"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0"}

func TestControllerUsageErrors(t *testing.T) {
	kubeconfig := controllerKubeconfig(t, "https://127.0.0.1:1")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"args", []string{"controller", "extra"}, `karta: unknown command "extra" for "karta controller"`},
		{"tls pair", []string{"controller", "--tls-cert", "tls.crt"}, "karta: --tls-cert and --tls-key go together"},
		{"tls without serve", []string{"controller", "--tls-cert", "tls.crt", "--tls-key", "tls.key"}, "karta: --tls-cert and --tls-key are for --serve"},
		{"workers", []string{"controller", "--workers", "0"}, "karta: --workers must be positive, not 0"},
		{"limit interval", []string{"controller", "--limit-interval", "-1s"}, "karta: --limit-interval must not be negative, not -1s"},
		{"selector", []string{"controller", "-l", "shard in (a"}, "karta: --selector: "},
		{"lease name", []string{"controller", "--leader-election-name", ""}, "karta: --leader-election-name must not be empty"},
		{"gang target", []string{"controller", "--gang-output", "yunikorn"}, `karta: --gang-output: unknown target "yunikorn" (want workload-api, kai, volcano, coscheduling)`},
		{"pod webhook without gang output", []string{"controller", "--pod-webhook"}, "karta: --pod-webhook needs --gang-output: it links pods to the target's groups"},
		{"pod webhook without serve", []string{"controller", "--gang-output", "kai", "--pod-webhook"}, "karta: --pod-webhook is served on --serve's port: give --serve (and its certificate)"},
		{"skip without gang output", []string{"controller", "--gang-output-skip", "PyTorchJob.kubeflow.org"}, "karta: --gang-output-skip is for --gang-output"},
		{"queue without gang output", []string{"controller", "--gang-output-queue", "research"}, "karta: --gang-output-queue is for --gang-output"},
		{"composite without gang output", []string{"controller", "--gang-output-composite-pod-group"}, "karta: --gang-output-composite-pod-group is for --gang-output"},
		{"composite for kai", []string{"controller", "--gang-output", "kai", "--gang-output-composite-pod-group"}, "karta: --gang-output-composite-pod-group is for --gang-output=workload-api"},
		{"volcano subgroup policy without gang output", []string{"controller", "--gang-output-volcano-subgroup-policy"}, "karta: --gang-output-volcano-subgroup-policy is for --gang-output"},
		{"volcano subgroup policy for kai", []string{"controller", "--gang-output", "kai", "--gang-output-volcano-subgroup-policy"}, "karta: --gang-output-volcano-subgroup-policy is for --gang-output=volcano"},
		{"skip kinds", []string{"controller", "--gang-output", "kai", "--gang-output-skip", "kubeflow.org/v1 PyTorchJob"},
			`karta: --gang-output-skip: "kubeflow.org/v1 PyTorchJob" is not a kind: write Kind.group, e.g. PyTorchJob.kubeflow.org`},
		{"gang selector", []string{"controller", "--gang-output", "kai", "--gang-output-selector", "team in (a"}, "karta: --gang-output-selector: "},
		{"durations", []string{"controller", "--kubeconfig", kubeconfig, "--leader-election-retry-period", "20s"},
			"karta: leader election: renewDeadline must be greater than retryPeriod*JitterFactor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", append(tc.args, controllerArgs...)...)
			assert.Equal(t, exitUsage, code, stderr)
			assert.True(t, strings.HasPrefix(stderr, tc.want), "stderr: %s", stderr)
			assert.Len(t, strings.Split(strings.TrimRight(stderr, "\n"), "\n"), 1, "one line: %s", stderr)
		})
	}
}

func TestControllerKubeconfigMissing(t *testing.T) {
	_, stderr, code := runCLI(t, "", append([]string{"controller", "--kubeconfig", filepath.Join(t.TempDir(), "nope")}, controllerArgs...)...)
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "kubeconfig: ")
	assert.Contains(t, stderr, "no such file or directory")
}

// With a gang output, /readyz also waits for its caches.
func TestControllerProbesWaitForTheGangOutput(t *testing.T) {
	listKinds := map[schema.GroupVersionResource]string{controller.KartaResource: "KartaList"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	ctrl, err := controller.New(dyn, interpreter.NewRegistry(), controller.Options{})
	require.NoError(t, err)
	gang, err := gangoutput.New(dyn, metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme()), meta.NewDefaultRESTMapper(nil),
		interpreter.NewRegistry(), gangoutput.Options{Target: podgroups.Volcano})
	require.NoError(t, err)
	srv := httptest.NewServer(probes(ctrl, &gangRun{ctrl: gang}, nil))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, ctrl.Run(ctx)) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	require.Eventually(t, ctrl.HasSynced, time.Minute, 10*time.Millisecond)
	resp, err := http.Get(srv.URL + readyzPath)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "not ready: the gang output's caches are not synced yet", string(body))
}

// A cluster without the Karta CRD: the command says so and fails at once
// instead of waiting for a cache that cannot sync.
func TestControllerWithoutTheCRD(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}))
	defer api.Close()
	args := append([]string{"controller", "--kubeconfig", controllerKubeconfig(t, api.URL), "--leader-elect=false"}, controllerArgs...)
	_, stderr, code := runCLI(t, "", args...)
	assert.Equal(t, exitInvalid, code, stderr)
	assert.Contains(t, stderr, "\nthe cluster does not serve kartas.run.ai (is the Karta CRD installed? karta crd | kubectl apply -f -)\n")
	assert.Contains(t, stderr, `msg="shutting down"`)
	assert.NotContains(t, stderr, "goroutine ")
}

func TestControllerBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = ln.Close() }()
	args := []string{"controller", "--kubeconfig", controllerKubeconfig(t, "https://127.0.0.1:1"), "--leader-elect=false",
		"--builtins=false", "--health-addr", ln.Addr().String(), "--metrics-addr", "127.0.0.1:0"}
	_, stderr, code := runCLI(t, "", args...)
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "--health-addr: listen tcp "+ln.Addr().String()+": bind: address already in use")
}

func TestControllerProbes(t *testing.T) {
	listKinds := map[schema.GroupVersionResource]string{controller.KartaResource: "KartaList"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	ctrl, err := controller.New(dyn, interpreter.NewRegistry(), controller.Options{Standby: true})
	require.NoError(t, err)
	srv := httptest.NewServer(probes(ctrl, &gangRun{}, nil))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}

	code, body := get(healthzPath)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
	code, body = get(readyzPath)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not ready: the Kartas are not synced yet", body)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, ctrl.Run(ctx)) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	require.Eventually(t, ctrl.HasSynced, time.Minute, 10*time.Millisecond)
	code, body = get(readyzPath)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok: standby", body)
	ctrl.SetLeading(true)
	_, body = get(readyzPath)
	assert.Equal(t, "ok: leader", body)
	code, _ = get(healthzPath)
	assert.Equal(t, http.StatusOK, code)
}
