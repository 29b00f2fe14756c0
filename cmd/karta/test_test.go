package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoldenKartaTest pins the output and exit code of karta test, in
// TestGolden's format. Regenerate with:
// go test ./cmd/karta -run TestGoldenKartaTest -update
func TestGoldenKartaTest(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"test-examples-one", []string{"test", "../../examples/pytorchjob"}},
		{"test-failures", []string{"test", "testdata/karta-test"}},
		{"test-no-tests", []string{"test", "testdata/in"}},
		{"test-missing-dir", []string{"test", "testdata/no-such-dir"}},
		{"test-no-args", []string{"test"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", tc.args...)
			checkGolden(t, tc.name, tc.args, stdout, stderr, code)
		})
	}
}

// TestKartaTestExamples runs karta test over the whole examples tree, as a
// user would: every example folder's tests pass.
func TestKartaTestExamples(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "test", "../../examples")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `^\d+ passed, 0 failed\n$`, stdout)
}

// TestKartaTestUpdate: --update writes the goldens and the inline values,
// keeps the test file's comments, and fills in a case that states nothing;
// the folder then passes.
func TestKartaTestUpdate(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs("../../examples/pytorchjob")
	require.NoError(t, err)
	for _, f := range []string{"running.yaml", "completed.yaml", "pods.yaml"} {
		data, err := os.ReadFile(filepath.Join(abs, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
	}
	test := filepath.Join(dir, "karta_test.yaml")
	require.NoError(t, os.WriteFile(test, []byte(`# my tests
karta: pytorchjob # the built-in
tests:
- object: running.yaml
  status: {status: Failed, golden: golden/running.status.json} # stale
  gang: {pods: pods.yaml, unmatched: 9}
- object: completed.yaml
`), 0o644))

	stdout, _, code := runCLI(t, "", "test", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "0 passed, 3 failed")

	stdout, stderr, code := runCLI(t, "", "test", dir, "--update")
	require.Equal(t, 0, code, "%s%s", stdout, stderr)
	assert.Contains(t, stdout, "wrote "+test)
	assert.Contains(t, stdout, "wrote "+filepath.Join(dir, "golden", "running.status.json"))
	written, err := os.ReadFile(test)
	require.NoError(t, err)
	assert.Equal(t, `# my tests
karta: pytorchjob # the built-in
tests:
- object: running.yaml
  status: {status: Running, golden: golden/running.status.json} # stale
  gang: {pods: pods.yaml, unmatched: 2}
- object: completed.yaml
  status:
    status: Completed
    matched: [Completed]
  pods:
    count: 2
`, string(written))

	stdout, _, code = runCLI(t, "", "test", dir)
	assert.Equal(t, 0, code, stdout)
	assert.True(t, strings.HasSuffix(stdout, "4 passed, 0 failed\n"), stdout)
}

// TestBuiltinList: a row per built-in on a table, and the same as JSON.
func TestBuiltinList(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "builtin", "list", "-o", "table")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^pytorchjob +kubeflow.org/v1 +PyTorchJob +(yes|-) +pytorchjob, master, worker$`, stdout)
	stdout, _, code = runCLI(t, "", "builtin", "list")
	require.Equal(t, 0, code)
	var entries []builtinEntry
	require.NoError(t, json.Unmarshal([]byte(stdout), &entries), "JSON in a pipe")
	require.NotEmpty(t, entries)
	found := false
	for _, e := range entries {
		if e.Name == "pytorchjob" {
			found = true
			assert.Equal(t, builtinEntry{Name: "pytorchjob", Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob", Components: []string{"pytorchjob", "master", "worker"}}, e)
		}
	}
	assert.True(t, found)
	_, stderr, code = runCLI(t, "", "builtin", "list", "-o", "wide")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "unknown output format")
}

// TestVersionFlag: --version prints what karta version -o table does.
func TestVersionFlag(t *testing.T) {
	flag, _, code := runCLI(t, "", "--version")
	require.Equal(t, 0, code)
	cmd, _, _ := runCLI(t, "", "version", "-o", "table")
	assert.Equal(t, cmd, flag)
}
