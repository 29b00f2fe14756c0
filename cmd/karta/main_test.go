package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/karta/crd"
)

var update = flag.Bool("update", false, "rewrite the golden files of the CLI tests")

// runCLI runs the command line in-process and returns what it printed.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, streams{in: strings.NewReader(stdin), out: &out, err: &errOut})
	return out.String(), errOut.String(), code
}

// TestGolden pins the exact output and exit code of commands, as a user
// sees them. Regenerate with: go test ./cmd/karta -run TestGolden -update
func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"validate-ok", "", []string{"validate", "../../examples/kartas/pytorchjob.yaml"}},
		{"validate-broken", "", []string{"validate", "../../examples/kartas/broken.yaml"}},
		{"validate-multi", "", []string{"validate", "testdata/in/multi.yaml"}},
		{"validate-several-files", "", []string{"validate", "../../examples/kartas/pytorchjob.yaml", "testdata/in/multi.yaml"}},
		{"validate-legacy", "", []string{"validate", "testdata/in/legacy.yaml"}},
		{"validate-warnings", "", []string{"validate", "testdata/in/warnings.yaml"}},
		{"validate-not-a-karta", "", []string{"validate", "testdata/in/deployment.yaml"}},
		{"validate-unknown-field", "", []string{"validate", "testdata/in/unknown-field.yaml"}},
		{"validate-truncated", "", []string{"validate", "testdata/in/truncated.yaml"}},
		{"validate-empty", "", []string{"validate", "testdata/in/empty.yaml"}},
		{"validate-target-karmada", "", []string{"validate", "--target", "karmada", "testdata/in/karmada-target.yaml"}},
		{"validate-target-karmada-builtin", "", []string{"validate", "--target", "karmada", "../../examples/kartas/pytorchjob.yaml"}},
		{"validate-target-unknown", "", []string{"validate", "--target", "argo", "testdata/in/karmada-target.yaml"}},
		{"validate-stdin", "apiVersion: apps/v1\nkind: Deployment\n", []string{"validate", "-"}},
		{"validate-crd", "", []string{"validate", "--crd", "../../examples/trainjob/crd.yaml", "../../examples/kartas/trainjob.yaml", "../../examples/kartas/trainjob-drifted.yaml"}},
		{"validate-crd-other-kind", "", []string{"validate", "--crd", "../../examples/trainjob/crd.yaml", "../../examples/kartas/pytorchjob.yaml"}},
		{"validate-crd-operator", "", []string{"validate", "--crd", "../../builtin/testdata/crds/training-operator-v1.8.1/kubeflow.org_pytorchjobs.yaml", "--crd", "../../builtin/testdata/crds/jobset-v0.8.1/jobset.x-k8s.io_jobsets.yaml", "../../examples/kartas/pytorchjob.yaml", "testdata/in/schema-broken.yaml"}},
		{"validate-crd-wrong-version", "", []string{"validate", "--crd", "../../examples/trainjob/crd.yaml", "testdata/in/trainjob-v2.yaml"}},
		{"validate-crd-not-a-crd", "", []string{"validate", "--crd", "../../examples/trainjob/running.yaml", "../../examples/kartas/trainjob.yaml"}},
		{"validate-crd-missing", "", []string{"validate", "--crd", "testdata/in/no-such-crd.yaml", "../../examples/kartas/trainjob.yaml"}},
		{"validate-crd-and-live", "", []string{"validate", "--crd", "../../examples/trainjob/crd.yaml", "--live", "../../examples/kartas/trainjob.yaml"}},
		{"validate-missing-file", "", []string{"validate", "testdata/in/no-such-file.yaml"}},
		{"validate-no-args", "", []string{"validate"}},
		{"unknown-flag", "", []string{"validate", "--frobnicate", "x.yaml"}},
		{"unknown-command", "", []string{"frobnicate"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tc.stdin, tc.args...)
			got := fmt.Sprintf("$ karta %s\nexit: %d\n--- stdout\n%s--- stderr\n%s", strings.Join(tc.args, " "), code, stdout, stderr)
			path := filepath.Join("testdata", "golden", tc.name+".txt")
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

func TestExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"validate", "../../examples/kartas/pytorchjob.yaml"}, exitOK},
		{[]string{"validate", "../../examples/kartas/broken.yaml"}, exitInvalid},
		{[]string{"validate", "../../examples/kartas/pytorchjob.yaml", "../../examples/kartas/broken.yaml"}, exitInvalid},
		{[]string{"validate", "testdata/in/no-such-file.yaml"}, exitUsage},
		{[]string{"validate", "--nope"}, exitUsage},
		{[]string{"crd", "extra-arg"}, exitUsage},
		{[]string{"crd"}, exitOK},
		{[]string{"version"}, exitOK},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, code := runCLI(t, "", tc.args...)
			assert.Equal(t, tc.want, code)
		})
	}
}

func TestCRDCommandPrintsEmbeddedManifest(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "crd")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, string(crd.Manifest), stdout)
}

// The Helm chart installs and upgrades the CRD `karta crd` prints, byte for
// byte (make generate copies it).
func TestCRDCommandMatchesTheChart(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "crd")
	require.Equal(t, exitOK, code, stderr)
	chart, err := os.ReadFile("../../charts/karta/files/run.ai_kartas.yaml")
	require.NoError(t, err)
	assert.Equal(t, stdout, string(chart), "charts/karta/files/run.ai_kartas.yaml differs from `karta crd`: run make generate")
}

func TestVersionCommand(t *testing.T) {
	stdout, _, code := runCLI(t, "", "version", "-o", "table")
	require.Equal(t, exitOK, code)
	assert.Regexp(t, `^karta \S+ \(commit \S+, go[0-9.]+\S*, [a-z0-9]+/[a-z0-9]+\)\n$`, stdout)

	// What -ldflags "-X main.version=... -X main.commit=..." stamps (make build, the Dockerfile).
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567"
	stdout, _, code = runCLI(t, "", "version", "-o", "table")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "karta v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567, "+runtime.Version()+", "+runtime.GOOS+"/"+runtime.GOARCH+")\n", stdout)
	// In a pipe, JSON, as every command that prints data.
	stdout, _, code = runCLI(t, "", "version")
	require.Equal(t, exitOK, code)
	assert.JSONEq(t, `{"version": "v1.2.3", "commit": "0123456789abcdef0123456789abcdef01234567", "go": "`+runtime.Version()+`", "platform": "`+runtime.GOOS+"/"+runtime.GOARCH+`"}`, stdout)
}
