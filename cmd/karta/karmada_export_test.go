package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/karmada"
)

// TestKarmadaExportGolden pins karta karmada export and karta karmada run
// -k, in TestGolden's format, under testdata/golden/karmada-export-*.txt.
// Regenerate with: go test ./cmd/karta -run TestKarmadaExportGolden -update
func TestKarmadaExportGolden(t *testing.T) {
	const (
		pytorch = "../../examples/pytorchjob/running.yaml"
		jobset  = "../../examples/jobset/running.yaml"
	)
	cases := []struct {
		name string
		args []string
	}{
		{"pytorchjob", []string{"karmada", "export", "-k", "pytorchjob"}},
		{"fragmented", []string{"karmada", "export", "-k", "milvus"}},
		{"unknown", []string{"karmada", "export", "-k", "no-such-karta"}},
		{"args", []string{"karmada", "export", "pytorchjob"}},

		{"run-components", []string{"karmada", "run", "--operation", "InterpretComponent", "-f", pytorch, "-k", "pytorchjob"}},
		{"run-components-instances", []string{"karmada", "run", "--operation", "GetComponents", "-f", jobset, "-k", "jobset", "-o", "json"}},
		{"run-replica-not-defined", []string{"karmada", "run", "--operation", "InterpretReplica", "-f", jobset, "-k", "jobset"}},
		{"run-dependencies", []string{"karmada", "run", "--operation", "InterpretDependency", "-f", jobset, "-k", "jobset"}},
		{"run-health", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", pytorch, "-k", "pytorchjob"}},
		{"run-status", []string{"karmada", "run", "--operation", "InterpretStatus", "-f", "../../examples/knative-service/running.yaml", "-k", "knative-service"}},
		{"run-retain", []string{"karmada", "run", "--operation", "Retain", "-f", pytorch, "--observed", pytorch, "-k", "pytorchjob"}},
		{"run-both", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", pytorch, "-k", "pytorchjob", "-c", gizmoCust}},
		{"run-neither", []string{"karmada", "run", "--operation", "InterpretHealth", "-f", pytorch}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", tc.args...)
			got := fmt.Sprintf("$ karta %s\nexit: %d\n--- stdout\n%s--- stderr\n%s", strings.Join(tc.args, " "), code, stdout, stderr)
			path := filepath.Join("testdata", "golden", "karmada-export-"+tc.name+".txt")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create the golden file")
			assert.Equal(t, string(want), got)
			assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
		})
	}
}

// The exported customization is one Karmada loads and runs: its output
// fed back to karta karmada run -c gives what -k gives.
func TestKarmadaExportRoundTrip(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "karmada", "export", "-k", "pytorchjob")
	require.Equal(t, 0, code, stderr)
	custs, err := karmada.Load([]byte(stdout), "export")
	require.NoError(t, err)
	require.Len(t, custs, 1)
	file := filepath.Join(t.TempDir(), "customization.yaml")
	require.NoError(t, os.WriteFile(file, []byte(stdout), 0o644))
	for _, op := range []string{"InterpretComponent", "InterpretHealth", "InterpretDependency", "InterpretStatus"} {
		viaK, _, codeK := runCLI(t, "", "karmada", "run", "--operation", op, "-f", "../../examples/pytorchjob/running.yaml", "-k", "pytorchjob", "-o", "json")
		viaC, errC, codeC := runCLI(t, "", "karmada", "run", "--operation", op, "-f", "../../examples/pytorchjob/running.yaml", "-c", file, "-o", "json")
		require.Equal(t, 0, codeK, op)
		require.Equal(t, 0, codeC, errC)
		assert.JSONEq(t, viaK, viaC, op)
	}

	// Without -k: every built-in that exports, the others on stderr.
	stdout, stderr, code = runCLI(t, "", "karmada", "export")
	require.Equal(t, 0, code)
	all, err := karmada.Load([]byte(stdout), "export")
	require.NoError(t, err)
	builtins, err := builtin.All()
	require.NoError(t, err)
	assert.Len(t, all, len(builtins))
	assert.Equal(t, 0, strings.Count(stderr, "skipped: "), stderr)
}
