package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/conformance"
)

const (
	karmadaDir   = "testdata/karmada"
	gizmoCust    = karmadaDir + "/pass/example.io/v1/Gizmo/customizations.yaml"
	gizmo        = karmadaDir + "/gizmo.yaml"
	gizmoObs     = karmadaDir + "/gizmo-observed.yaml"
	gizmoItems   = karmadaDir + "/status-items.yaml"
	karmadaFails = karmadaDir + "/fail"
)

// TestKarmadaGolden pins the output and exit code of karta karmada test
// and run, in TestGolden's format, under testdata/karmada/golden.
// Regenerate with: go test ./cmd/karta -run TestKarmadaGolden -update
func TestKarmadaGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"test-pass", []string{"karmada", "test", karmadaDir + "/pass"}},
		{"test-folder-above", []string{"karmada", "test", karmadaDir}},
		{"test-kind-folder", []string{"karmada", "test", karmadaDir + "/pass/example.io/v1/Gizmo"}},
		{"test-fail", []string{"karmada", "test", karmadaFails}},
		{"test-missing-dir", []string{"karmada", "test", karmadaDir + "/no-such-dir"}},
		{"test-no-dir", []string{"karmada", "test"}},

		{"run-replica", []string{"karmada", "run", "--operation", "InterpretReplica", "-f", gizmo, "-c", gizmoCust, "-o", "yaml"}},
		{"run-replica-table", []string{"karmada", "run", "--operation", "InterpretReplica", "-f", gizmo, "-c", gizmoCust, "-o", "table"}},
		{"run-replica-json", []string{"karmada", "run", "--operation", "getreplicas", "-f", gizmo, "-c", gizmoCust, "-o", "json"}},
		{"run-components", []string{"karmada", "run", "--operation", "InterpretComponent", "-f", gizmo, "-c", gizmoCust, "-o", "yaml"}},
		{"run-components-table", []string{"karmada", "run", "--operation", "InterpretComponent", "-f", gizmo, "-c", gizmoCust, "-o", "table"}},
		{"run-revise", []string{"karmada", "run", "--operation", "ReviseReplica", "--replicas", "5", "-f", gizmo, "-c", gizmoCust, "-o", "yaml"}},
		{"run-retain", []string{"karmada", "run", "--operation", "Retain", "-f", gizmo, "--observed", gizmoObs, "-c", gizmoCust, "-o", "yaml"}},
		{"run-retain-two-documents", []string{"karmada", "run", "--operation", "Retain", "-f", karmadaDir + "/gizmos.yaml", "--observed", gizmoObs, "-c", gizmoCust}},
		{"run-status", []string{"karmada", "run", "--operation", "InterpretStatus", "-f", gizmo, "-c", gizmoCust, "-o", "yaml"}},
		{"run-status-table", []string{"karmada", "run", "--operation", "InterpretStatus", "-f", gizmo, "-c", gizmoCust, "-o", "table"}},
		{"run-documents", []string{"karmada", "run", "--operation", "InterpretReplica", "-f", karmadaDir + "/gizmos.yaml", "-c", gizmoCust}},
		{"run-documents-table", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", karmadaDir + "/gizmos.yaml", "-c", gizmoCust, "-o", "table"}},
		{"run-list", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", karmadaDir + "/gizmo-list.yaml", "-c", gizmoCust, "-o", "table"}},
		{"run-health", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", gizmo, "-c", gizmoCust, "-o", "json"}},
		{"run-dependencies", []string{"karmada", "run", "--operation", "InterpretDependency", "-f", gizmo, "-c", gizmoCust, "-o", "yaml"}},
		{"run-dependencies-table", []string{"karmada", "run", "--operation", "InterpretDependency", "-f", gizmo, "-c", gizmoCust, "-o", "table"}},

		{"run-script-error", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", karmadaDir + "/gadget.yaml", "-c", karmadaFails + "/example.io/v1/Gadget/customizations.yaml"}},
		{"run-not-enabled", []string{"karmada", "run", "--operation", "InterpretReplica", "-f", gizmo, "-c", karmadaFails + "/example.io/v1/Gadget/customizations.yaml"}},
		{"run-not-a-customization", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", gizmo, "-c", gizmo}},
		{"run-unknown-operation", []string{"karmada", "run", "--operation", "Prune", "-f", gizmo, "-c", gizmoCust}},
		{"run-revise-without-replicas", []string{"karmada", "run", "--operation", "ReviseReplica", "-f", gizmo, "-c", gizmoCust}},
		{"run-retain-without-observed", []string{"karmada", "run", "--operation", "Retain", "-f", gizmo, "-c", gizmoCust}},
		{"run-observed-not-for-health", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", gizmo, "--observed", gizmoObs, "-c", gizmoCust}},
		{"run-missing-object", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", karmadaDir + "/no-such-file.yaml", "-c", gizmoCust}},
		{"run-no-customization", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", gizmo}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", tc.args...)
			got := fmt.Sprintf("$ karta %s\nexit: %d\n--- stdout\n%s--- stderr\n%s", strings.Join(tc.args, " "), code, stdout, stderr)
			path := filepath.Join(karmadaDir, "golden", tc.name+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create the golden file")
			assert.Equal(t, string(want), got)
			assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
		})
	}
}

// AggregateStatus stamps the time, so it is checked by value rather than
// against a golden file.
func TestKarmadaRunAggregateStatus(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "karmada", "run", "--operation", "AggregateStatus", "--status-items", gizmoItems,
		"-f", gizmo, "-c", gizmoCust, "-o", "json")
	require.Equal(t, exitOK, code, stderr)
	var out struct {
		AggregatedStatus struct {
			Kind   string         `json:"kind"`
			Status map[string]any `json:"status"`
		} `json:"aggregatedStatus"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	assert.Equal(t, "Gizmo", out.AggregatedStatus.Kind)
	assert.Equal(t, 3.0, out.AggregatedStatus.Status["ready"])
	assert.Equal(t, 2.0, out.AggregatedStatus.Status["clusters"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, out.AggregatedStatus.Status["updated"])

	// Without --status-items the script gets nil and returns the object.
	stdout, stderr, code = runCLI(t, "", "karmada", "run", "--operation", "AggregateStatus", "-f", gizmo, "-c", gizmoCust, "-o", "json")
	require.Equal(t, exitOK, code, stderr)
	out.AggregatedStatus.Status = nil
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	assert.Equal(t, map[string]any{"phase": "Running", "ready": 2.0}, out.AggregatedStatus.Status)
}

// The object may come from standard input.
func TestKarmadaRunReadsStdin(t *testing.T) {
	data, err := os.ReadFile(gizmo)
	require.NoError(t, err)
	stdout, stderr, code := runCLI(t, string(data), "karmada", "run", "--operation", "InterpretHealth", "-f", "-", "-c", gizmoCust)
	require.Equal(t, exitOK, code, stderr)
	assert.JSONEq(t, `{"healthy": true}`, stdout, "JSON in a pipe, as every command that prints data")
}

// Karmada's own suite, through the CLI: the last line is the count.
func TestKarmadaTestConformance(t *testing.T) {
	dir := conformance.Require(t)
	stdout, stderr, code := runCLI(t, "", "karmada", "test", dir)
	assert.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	assert.Equal(t, "564 passed, 0 failed", lines[len(lines)-1], stdout)
}
