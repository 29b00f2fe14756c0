package argo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The CLI's fixtures: Argo CD's layout, with scripts written for karta.
const (
	fixtures = "../cmd/karta/testdata/argo/customizations"
	failing  = "../cmd/karta/testdata/argo/failing"
)

func TestMatchKey(t *testing.T) {
	cases := []struct {
		pattern, key string
		want         bool
	}{
		{"_", "Widget", true},
		{"_", "", true},
		{"_", "apps.example.com/Widget", true}, // "_" is "*" without separators: it spans the "/"
		{"Widget", "Widget", true},
		{"Widget", "widget", false},
		{"_.example.com/_", "toys.example.com/Widget", true},
		{"_.example.com/_", "a.b.example.com/Widget", true},
		{"_.example.com/_", "example.com/Widget", false},
		{"_.example.com/_", "toys.example.org/Widget", false},
		{"_/Widget", "toys.example.com/Widget", true},
		{"_/Widget", "Widget", false},
		{"Wid_", "Widget", true},
		{"W_t", "Widget", true},
		{"W_t", "Wt", true},
		{"W_t", "Widgets", false},
		{"_dg_", "Widget", true},
		{"_a_a_", "banana", true},
		{"_a_a_", "bnn", false},
		{"__", "x", true},
		{"x_", "", false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, matchKey(tc.pattern, tc.key), "%q ~ %q", tc.pattern, tc.key)
	}
}

func TestPick(t *testing.T) {
	folders := []*folder{
		{rel: "PersistentVolumeClaim", hasScript: true},
		{rel: "_.example.com/_", hasScript: true},
		{rel: "_/Gizmo", hasScript: true},
		{rel: "apps.example.com/Gizmo", hasScript: true},
		{rel: "tests.example.com/Only", hasTest: true},
		{rel: "_/Only", hasScript: true},
		{rel: "_", hasScript: true},
	}
	cases := []struct{ group, kind, want string }{
		{"", "PersistentVolumeClaim", "PersistentVolumeClaim"},
		{"", "ConfigMap", "_"},
		{"apps.example.com", "Gizmo", "apps.example.com/Gizmo"},
		{"b.example.com", "Gizmo", "_.example.com/_"}, // both wildcards match: the first in walk order
		{"example.org", "Gizmo", "_/Gizmo"},
		{"b.example.com", "Cog", "_.example.com/_"},
		{"example.org", "Cog", "_"},
		{"tests.example.com", "Only", "_.example.com/_"}, // the exact folder has no health.lua
		{"apps.example.com", "", ""},
	}
	for _, tc := range cases {
		f := pick(folders, tc.group, tc.kind)
		got := ""
		if f != nil {
			got = f.rel
		}
		assert.Equal(t, tc.want, got, "%s/%s", tc.group, tc.kind)
	}
	assert.Nil(t, pick(folders[:4], "example.org", "Cog"), "no folder matches")
}

func TestGroupKind(t *testing.T) {
	for _, tc := range []struct {
		obj         map[string]any
		group, kind string
	}{
		{map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout"}, "argoproj.io", "Rollout"},
		{map[string]any{"apiVersion": "v1", "kind": "Pod"}, "", "Pod"},
		{map[string]any{"kind": "Pod"}, "", "Pod"},
		{map[string]any{"apiVersion": 1, "kind": true}, "", ""},
	} {
		g, k := groupKind(tc.obj)
		assert.Equal(t, [2]string{tc.group, tc.kind}, [2]string{g, k})
	}
}

func TestRunTestDirFixtures(t *testing.T) {
	rep, err := RunTestDir(context.Background(), fixtures)
	require.NoError(t, err)
	for _, r := range rep.Results {
		assert.True(t, r.OK(), "%s: want %v, got %v, err %v", r.Name, r.Want, r.Got, r.Err)
	}
	assert.Empty(t, rep.Problems)
	assert.Equal(t, 31, rep.Passed)
	assert.Zero(t, rep.Failed)

	scripts := map[string]string{}
	var names []string
	for _, r := range rep.Results {
		scripts[r.Name] = r.Script
		names = append(names, r.Name)
	}
	assert.IsNonDecreasing(t, names, "results are sorted by name")
	assert.Equal(t, "_/Widget/health.lua", scripts["_/Widget/testdata/toys-ready.yaml"], "the wildcard folder serves other groups")
	assert.Equal(t, "example.com/Widget/health.lua", scripts["_/Widget/testdata/example-com.yaml"], "the exact folder wins")
	assert.Equal(t, "PersistentVolumeClaim/health.lua", scripts["PersistentVolumeClaim/testdata/bound.yaml"], "a core kind's folder")
	assert.Equal(t, "batch/Job/health.lua", scripts["batch/Job/testdata/failed.yaml"])
}

// A single customization folder as the directory: its tests run its script.
func TestRunTestDirOneFolder(t *testing.T) {
	rep, err := RunTestDir(context.Background(), filepath.Join(fixtures, "batch", "Job"))
	require.NoError(t, err)
	assert.Equal(t, 4, rep.Passed)
	assert.Zero(t, rep.Failed)
	assert.Equal(t, "testdata/complete.yaml", rep.Results[0].Name)
	assert.Equal(t, "health.lua", rep.Results[0].Script)
}

func TestRunTestDirFailures(t *testing.T) {
	rep, err := RunTestDir(context.Background(), failing)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Passed)
	assert.Equal(t, 10, rep.Failed)
	require.Len(t, rep.Problems, 1)
	assert.Equal(t, "apps.example.com/Sprocket/health.lua", rep.Problems[0].Path)
	assert.EqualError(t, rep.Problems[0].Err, "no health_test.yaml beside it")

	byName := map[string]Result{}
	for _, r := range rep.Results {
		byName[r.Name] = r
	}
	mismatch := byName["apps.example.com/Gadget/testdata/idle.yaml"]
	require.NoError(t, mismatch.Err)
	assert.False(t, mismatch.OK())
	assert.Equal(t, Health{Status: StatusProgressing, Message: "Spinning up"}, mismatch.Want)
	assert.Equal(t, Health{Status: StatusProgressing, Message: "Not spinning yet"}, mismatch.Got)

	assert.Equal(t, Health{}, byName["apps.example.com/Cog/testdata/cog.yaml"].Got, "no return: no assessment")
	assert.Equal(t, Health{Status: StatusUnknown, Message: InvalidHealthStatus}, byName["apps.example.com/Gadget/testdata/fine.yaml"].Got)
	for name, want := range map[string]string{
		"apps.example.com/Gadget/testdata/no-status.yaml":    "script:apps.example.com/Gadget/health.lua:5: attempt to index",
		"apps.example.com/Gadget/testdata/no-such-file.yaml": "cannot read: no such file or directory",
	} {
		r := byName[name]
		require.Error(t, r.Err, name)
		assert.Contains(t, r.Err.Error(), want, name)
	}
}

// writeTree writes files (slash paths) under a new temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

func TestRunTestDirLayoutProblems(t *testing.T) {
	const healthy = "return {status = 'Healthy', message = 'ok'}"
	const object = "apiVersion: example.com/v1\nkind: Thing\n"
	const oneTest = "tests:\n- inputPath: testdata/x.yaml\n  healthStatus: {status: Healthy, message: ok}\n"
	dir := writeTree(t, map[string]string{
		"example.com/Thing/health.lua":       healthy,
		"example.com/Thing/health_test.yaml": oneTest,
		"example.com/Thing/testdata/x.yaml":  object,

		"bad.example.com/Yaml/health.lua":       healthy,
		"bad.example.com/Yaml/health_test.yaml": "tests: [\n",

		"bad.example.com/Lonely/health_test.yaml": oneTest,

		"bad.example.com/Multi/health.lua":       healthy,
		"bad.example.com/Multi/health_test.yaml": oneTest,
		"bad.example.com/Multi/testdata/x.yaml":  object + "---\n" + object,

		"bad.example.com/Empty/health.lua":       healthy,
		"bad.example.com/Empty/health_test.yaml": "tests:\n- healthStatus: {status: Healthy}\n",

		"bad.example.com/Syntax/health.lua":       "return {status = ",
		"bad.example.com/Syntax/health_test.yaml": oneTest,
		"bad.example.com/Syntax/testdata/x.yaml":  "apiVersion: bad.example.com/v1\nkind: Syntax\n",
	})
	rep, err := RunTestDir(context.Background(), dir)
	require.NoError(t, err)
	problems := map[string]string{}
	for _, p := range rep.Problems {
		problems[p.Path] = p.Err.Error()
	}
	assert.Equal(t, map[string]string{
		"bad.example.com/Lonely/health_test.yaml": "no health.lua beside it",
		"bad.example.com/Yaml/health_test.yaml":   "bad.example.com/Yaml/health_test.yaml:2: invalid YAML: did not find expected node content",
	}, problems)

	errs := map[string]string{}
	for _, r := range rep.Results {
		if r.Err != nil {
			errs[r.Name] = r.Err.Error()
		}
	}
	assert.Equal(t, map[string]string{
		"bad.example.com/Multi/testdata/x.yaml":  "testdata/x.yaml: want one object, found 2 documents",
		"bad.example.com/Empty":                  "the test has no inputPath",
		"bad.example.com/Syntax/testdata/x.yaml": "script:bad.example.com/Syntax/health.lua: at EOF: syntax error",
	}, errs)
	assert.Equal(t, 1, rep.Passed)
	assert.Equal(t, 5, rep.Failed)
}

func TestRunTestDirErrors(t *testing.T) {
	ctx := context.Background()

	_, err := RunTestDir(ctx, "testdata/no-such-dir")
	assert.ErrorIs(t, err, fs.ErrNotExist)

	_, err = RunTestDir(ctx, "doc.go")
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, syscall.ENOTDIR)

	empty := t.TempDir()
	_, err = RunTestDir(ctx, empty)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no health.lua, health_test.yaml or actions/action_test.yaml found")

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = RunTestDir(canceled, fixtures)
	assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
}
