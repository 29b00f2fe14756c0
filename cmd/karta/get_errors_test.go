package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Without a cluster to talk to, get and revise --live fail with one line
// that names the server or the file, and exit 1.
func TestClusterConnectionErrors(t *testing.T) {
	home := t.TempDir() // no ~/.kube/config
	missing := filepath.Join(home, "no-such-kubeconfig")
	cases := []struct {
		name       string
		kubeconfig string // $KUBECONFIG
		args       []string
		want       string
	}{
		{"unreachable", clusterKubeconfig(t, "https://127.0.0.1:1", "nlp"), []string{"get", "-A"},
			"karta: cannot reach the cluster at https://127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused\n"},
		{"unreachable revise", clusterKubeconfig(t, "https://127.0.0.1:1", "nlp"), []string{"revise", "--live", "pytorchjob/x", "-r", pytorchRevisions},
			"karta: cannot reach the cluster at https://127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused\n"},
		{"no kubeconfig", missing, []string{"get"},
			"karta: no kubeconfig: pass --kubeconfig FILE, set $KUBECONFIG, or create ~/.kube/config: no configuration found\n"},
		{"--kubeconfig missing", "", []string{"get", "--kubeconfig", missing},
			"karta: kubeconfig: stat " + missing + ": no such file or directory\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv("KUBECONFIG", tc.kubeconfig)
			t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod
			stdout, stderr, code := runCLI(t, "", tc.args...)
			assert.Equal(t, exitInvalid, code)
			assert.Empty(t, stdout)
			assert.Equal(t, tc.want, stderr)
		})
	}
}
