//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/internal/testenv"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/webhook"
)

// Hostile Kartas in a cluster (issue 28): each is refused or contained and
// named on its own conditions, while the controller stays up and its
// webhook keeps answering for a well-behaved Karta's kind.
func TestIntegrationControllerHostileKartas(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.InstallCRDs(t, cfg)
	ns := testenv.Namespace(t, cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	c := startController(t, "--kubeconfig", testenv.Kubeconfig(t), "--leader-elect=false",
		"-l", "karta.run.ai/test="+ns, "--limit-interval", "1s",
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--serve", "127.0.0.1:0")
	kartas := dyn.Resource(controller.KartaResource)

	// Each Karta is the TrainJob example in a group of its own, with a
	// script.
	create := func(name, script string) (group string) {
		group = name + "." + ns + ".example.com"
		k := testobj.Read(t, "../../examples/kartas/trainjob.yaml")
		k.SetName(ns + "-" + name)
		k.SetLabels(map[string]string{"karta.run.ai/test": ns})
		require.NoError(t, unstructured.SetNestedField(k.Object, group, "spec", "structureDefinition", "rootComponent", "kind", "group"))
		if script != "" {
			require.NoError(t, unstructured.SetNestedField(k.Object, script, "spec", "luaScript"))
		}
		_, err := kartas.Create(context.Background(), k, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = kartas.Delete(context.Background(), k.GetName(), metav1.DeleteOptions{}) })
		return group
	}
	// falseCondition waits for a condition of the Karta that is False
	// with the reason and a message holding msg. The reasons are spelt
	// out as users read them, not as controller.Reason*: this file is built
	// only with -tags integration, and internal/apisurface must find the
	// same uses of the public names with and without it.
	falseCondition := func(name, reason, msg string) {
		t.Helper()
		var last []any
		require.Eventually(t, func() bool {
			obj, err := kartas.Get(context.Background(), ns+"-"+name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			last, _, _ = unstructured.NestedSlice(obj.Object, "status", "conditions")
			for _, cv := range last {
				m, _ := cv.(map[string]any)
				if m["status"] == "False" && m["reason"] == reason && strings.Contains(condField(m["message"]), msg) {
					return true
				}
			}
			return false
		}, 2*time.Minute, 100*time.Millisecond, "%s: no False condition %s with %q; conditions %v", name, reason, msg, last)
	}

	good := create("good", "")
	// Lua nested past the parsers' bound: a Go stack overflow before the
	// bound, refused by the scanner now, without running gopher-lua.
	create("nested", "function InterpretHealth(obj)\n  return "+strings.Repeat("(", 100_000)+"true"+strings.Repeat(")", 100_000)+"\nend\n")
	// Top-level code that never ends: refused when compiled.
	create("loops", "while true do end\nfunction InterpretHealth(obj) return true end\n")
	// A hook that doubles a string past the string limit, on every call.
	bomb := create("bomb", "function InterpretHealth(obj)\n  local s = 'x'\n  for i = 1, 40 do s = s .. s end\n  return true\nend\n")

	falseCondition("nested", "Invalid", "nesting depth exceeds the limit")
	falseCondition("loops", "ScriptFailed", "")

	webhookAddr := c.addrs["the interpreter webhook"]
	require.Eventually(t, func() bool { return interpretHealth(t, webhookAddr, good).Successful },
		time.Minute, 100*time.Millisecond, "the good Karta's kind is not served")
	require.Eventually(t, func() bool {
		r := interpretHealth(t, webhookAddr, bomb)
		return !r.Successful && r.Status != nil && strings.Contains(r.Status.Message, "string size limit")
	}, time.Minute, 100*time.Millisecond, "the bomb's call does not end on the string size limit")
	falseCondition("bomb", "LimitExceeded", "string size limit")

	// Hostile calls in a row do not take the good kind down.
	for range 5 {
		assert.False(t, interpretHealth(t, webhookAddr, bomb).Successful)
		r := interpretHealth(t, webhookAddr, good)
		require.True(t, r.Successful, "the good kind after a hostile call: %+v", r.Status)
		require.NotNil(t, r.Healthy)
		assert.True(t, *r.Healthy)
	}
	assert.True(t, c.alive(), "the controller stopped: %s", c.stderr.String())
	code, _ := httpGet(c.addrs["health probes"], readyzPath)
	assert.Equal(t, http.StatusOK, code)
}

// interpretHealth asks the interpreter webhook at addr for the health of
// the tutorial's running TrainJob in group.
func interpretHealth(t *testing.T, addr, group string) *webhook.ResourceInterpreterResponse {
	t.Helper()
	req, err := json.Marshal(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext",
		"request": map[string]any{"uid": "h-1", "operation": "InterpretHealth", "object": controllerTrainJob(t, group),
			"kind": map[string]string{"group": group, "version": "v1", "kind": "TrainJob"}}})
	require.NoError(t, err)
	resp, err := http.Post("http://"+addr+webhook.InterpretPath, "application/json", bytes.NewReader(req))
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var out webhook.ResourceInterpreterContext
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	return out.Response
}
