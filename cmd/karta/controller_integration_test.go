//go:build integration

package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/webhook"
)

var servingAddrRE = regexp.MustCompile(`msg="serving ([^"]+)" addr=(\S+)`)

// karta controller end to end: it takes the lease, reports ready, writes
// conditions, serves metrics and the webhook from the live registry, and
// gives the lease back when stopped.
func TestIntegrationControllerCommand(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	identity := "it-" + ns
	group := ns + ".example.com"

	var stderr testenv.SyncBuffer
	root := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: &stderr})
	root.SetArgs([]string{"controller", "--kubeconfig", testenv.Kubeconfig(t),
		"--leader-election-namespace", ns, "--leader-election-identity", identity,
		"-l", "karta.run.ai/test=" + ns,
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--serve", "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	addrs := map[string]string{}
	require.Eventually(t, func() bool {
		for _, m := range servingAddrRE.FindAllStringSubmatch(stderr.String(), -1) {
			addrs[m[1]] = m[2]
		}
		return len(addrs) == 3
	}, time.Minute, 20*time.Millisecond, "addresses not logged: %s", stderr.String())
	get := func(addr, path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	health := addrs["health probes"]

	// Ready as the leader, holding the lease.
	require.Eventually(t, func() bool {
		code, body := get(health, readyzPath)
		return code == http.StatusOK && body == "ok: leader"
	}, 2*time.Minute, 100*time.Millisecond, "readyz; stderr: %s", stderr.String())
	code, body := get(health, healthzPath)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
	lease, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "karta-controller", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, lease.Spec.HolderIdentity)
	assert.Equal(t, identity, *lease.Spec.HolderIdentity)

	// The webhook does not know the kind until its Karta exists.
	interpret := func() *webhook.ResourceInterpreterResponse {
		return interpretHealth(t, addrs["the interpreter webhook"], group)
	}
	assert.False(t, interpret().Successful)

	// A Karta: accepted, compiled, and served by the webhook.
	karta := testobj.Read(t, "../../examples/kartas/trainjob.yaml")
	karta.SetName(ns + "-trainjob")
	karta.SetLabels(map[string]string{"karta.run.ai/test": ns})
	require.NoError(t, unstructured.SetNestedField(karta.Object, group, "spec", "structureDefinition", "rootComponent", "kind", "group"))
	kartas := dyn.Resource(controller.KartaResource)
	_, err = kartas.Create(context.Background(), karta, metav1.CreateOptions{})
	require.NoError(t, err)
	defer func() { _ = kartas.Delete(context.Background(), karta.GetName(), metav1.DeleteOptions{}) }()
	require.Eventually(t, func() bool {
		obj, err := kartas.Get(context.Background(), karta.GetName(), metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		var list []metav1.Condition
		for _, c := range conds {
			m, _ := c.(map[string]any)
			list = append(list, metav1.Condition{Type: condField(m["type"]), Status: metav1.ConditionStatus(condField(m["status"]))})
		}
		return meta.IsStatusConditionTrue(list, controller.ConditionAccepted) && meta.IsStatusConditionTrue(list, controller.ConditionCompiled)
	}, 2*time.Minute, 100*time.Millisecond, "conditions; stderr: %s", stderr.String())
	require.Eventually(t, func() bool { return interpret().Successful }, time.Minute, 100*time.Millisecond)
	r := interpret()
	require.NotNil(t, r.Healthy)
	assert.True(t, *r.Healthy)

	all, err := builtin.All()
	require.NoError(t, err)
	// The gauges follow the reconcile that wrote the conditions: poll.
	waitMetrics(t, func() string { _, m := get(addrs["metrics"], "/metrics"); return m },
		"karta_controller_leading 1",
		"karta_controller_synced 1",
		"karta_controller_registry_programs "+strconv.Itoa(len(all)+1),
		`karta_controller_reconciles_total{result="accepted"} `,
		`karta_controller_kartas{state="accepted"} 1`,
		"karta_controller_queue_depth ",
		"go_goroutines ",
	)

	// Stopped: exits cleanly and gives the lease back.
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "stderr: %s", stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("karta controller did not stop; stderr: %s", stderr.String())
	}
	lease, err = cs.CoordinationV1().Leases(ns).Get(context.Background(), "karta-controller", metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "", "the lease is released")
	assert.NotContains(t, stderr.String(), "goroutine ")
}

// controllerTrainJob is examples/tutorial-trainjob/running.yaml in group.
func controllerTrainJob(t *testing.T, group string) map[string]any {
	t.Helper()
	obj := testobj.Read(t, "../../examples/tutorial-trainjob/running.yaml")
	obj.SetAPIVersion(group + "/v1")
	return obj.Object
}

func condField(v any) string { s, _ := v.(string); return s }

// waitMetrics polls scrape until its text holds every line start in wants
// (a minute at most) and returns the last scrape, each missing one
// reported: metrics are updated after the writes a test observes.
func waitMetrics(t *testing.T, scrape func() string, wants ...string) string {
	t.Helper()
	has := func(text string) bool {
		for _, w := range wants {
			if !strings.Contains(text, w) {
				return false
			}
		}
		return true
	}
	assert.Eventually(t, func() bool { return has(scrape()) }, time.Minute, 100*time.Millisecond, "metrics")
	text := scrape()
	for _, w := range wants {
		assert.Contains(t, text, w)
	}
	return text
}
