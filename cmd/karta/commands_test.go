package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

const (
	pytorchKarta = "../../examples/kartas/pytorchjob.yaml"
	trainKarta   = "../../examples/kartas/trainjob.yaml"
	pytorchJob   = "testdata/in/pytorchjob.yaml"
	pytorchPods  = "testdata/in/pytorchjob-pods.yaml"
	jobStates    = "testdata/in/pytorchjob-states.yaml"
	revisions    = "testdata/in/revisions.yaml"
	trainJob     = "../../examples/tutorial-trainjob/running.yaml"
	trainPods    = "../../examples/tutorial-trainjob/pods.yaml"
	trainRevs    = "../../examples/tutorial-trainjob/revisions.yaml"
	// pytorchRunning is the built-in PyTorchJob's running example.
	pytorchRunning = "../../examples/pytorchjob/running.yaml"
)

// TestGoldenCommands pins the output and exit code of compile, pods,
// status, revise and gang, as TestGolden does for validate. Regenerate
// with: go test ./cmd/karta -run TestGoldenCommands -update
// partialAnswers are the golden cases that fail (exit 1) yet answer on
// standard output what they could: the good documents of several, or
// describe's status when GetPodSpecs fails (docs/cli.md).
var partialAnswers = map[string]bool{
	"pods-one-document-fails": true,
	"describe-hook-error":     true,
}

func TestGoldenCommands(t *testing.T) {
	cases := []struct {
		name string
		// stdin is the content of these files, joined as documents.
		stdin []string
		args  []string
	}{
		{"compile", nil, []string{"compile", "-k", pytorchKarta}},
		{"compile-script", nil, []string{"compile", "-k", pytorchKarta, "--script", "testdata/in/degraded.lua"}},
		{"compile-no-karta", nil, []string{"compile"}},
		{"builtin-list", nil, []string{"builtin", "list"}},
		{"compile-several-kartas", nil, []string{"compile", "-k", "testdata/in/multi.yaml"}},
		{"compile-unknown-builtin", nil, []string{"compile", "-k", "no-such-workload"}},
		{"compile-builtin", nil, []string{"compile", "-k", "pytorchjob"}},
		{"compile-broken-karta", nil, []string{"compile", "-k", "../../examples/kartas/broken.yaml"}},

		{"pods-json", nil, []string{"pods", "-k", pytorchKarta, "-f", pytorchJob}},
		{"pods-table", nil, []string{"pods", "-k", pytorchKarta, "-f", pytorchJob, "-o", "table"}},
		{"pods-yaml", nil, []string{"pods", "-k", pytorchKarta, "-f", pytorchJob, "-o", "yaml"}},
		{"pods-trainjob-json", nil, []string{"pods", "-k", trainKarta, "-f", trainJob, "-o", "json"}},
		{"pods-trainjob-table", nil, []string{"pods", "-k", trainKarta, "-f", trainJob, "-o", "table"}},
		{"pods-hook-error", nil, []string{"pods", "-k", pytorchKarta, "-f", "testdata/in/pytorchjob-bad-replicas.yaml"}},
		{"pods-one-document-fails", []string{pytorchJob, "testdata/in/pytorchjob-bad-replicas.yaml"}, []string{"pods", "-k", pytorchKarta, "-f", "-"}},
		{"pods-no-filename", nil, []string{"pods", "-k", pytorchKarta}},
		{"pods-unknown-flag", nil, []string{"pods", "-k", pytorchKarta, "-f", pytorchJob, "--frobnicate"}},
		{"pods-list", nil, []string{"pods", "-k", pytorchKarta, "-f", "testdata/in/pytorchjob-list.yaml", "-o", "table"}},
		{"pods-kind-mismatch", nil, []string{"pods", "-k", pytorchKarta, "-f", trainJob}},
		// A Karta of one's own for a built-in's kind: -k wins; without -k the built-in.
		{"pods-own-karta-for-builtin-kind", nil, []string{"pods", "-k", "testdata/in/deployment-karta.yaml", "-f", "../../examples/deployment/running.yaml", "-o", "table"}},
		{"pods-builtin-for-the-same-kind", nil, []string{"pods", "-f", "../../examples/deployment/running.yaml", "-o", "table"}},

		{"status-json", nil, []string{"status", "-k", pytorchKarta, "-f", pytorchJob}},
		{"status-table", nil, []string{"status", "-k", pytorchKarta, "-f", pytorchJob, "-o", "table"}},
		{"status-yaml", nil, []string{"status", "-k", pytorchKarta, "-f", pytorchJob, "-o", "yaml"}},
		{"status-states-json", nil, []string{"status", "-k", pytorchKarta, "-f", jobStates, "-o", "json"}},
		{"status-states-table", nil, []string{"status", "-k", pytorchKarta, "-f", jobStates, "-o", "table"}},
		{"status-script", nil, []string{"status", "-k", pytorchKarta, "-f", jobStates, "--script", "testdata/in/degraded.lua", "-o", "table"}},
		{"status-stdin", []string{pytorchJob}, []string{"status", "-k", pytorchKarta, "-f", "-", "-o", "table"}},
		{"status-trainjob-table", nil, []string{"status", "-k", trainKarta, "-f", trainJob, "-o", "table"}},
		{"status-no-registered-karta", nil, []string{"status", "-f", "../../examples/tutorial-trainjob/running.yaml"}},
		{"status-builtin-by-kind", nil, []string{"status", "-f", pytorchJob}},
		{"status-unknown-builtin", nil, []string{"status", "-k", "no-such-workload", "-f", pytorchJob}},
		{"status-builtin-by-name", nil, []string{"status", "-k", "pytorchjob", "-f", pytorchJob}},
		{"status-broken-karta", nil, []string{"status", "-k", "../../examples/kartas/broken.yaml", "-f", pytorchJob}},
		{"status-karta-for-another-kind", nil, []string{"status", "-k", "testdata/in/multi.yaml", "-f", pytorchJob}},
		{"status-missing-file", nil, []string{"status", "-k", pytorchKarta, "-f", "testdata/in/no-such-file.yaml"}},
		{"status-missing-script", nil, []string{"status", "-k", pytorchKarta, "-f", pytorchJob, "--script", "testdata/in/no-such-file.lua"}},
		{"status-bad-output", nil, []string{"status", "-k", pytorchKarta, "-f", pytorchJob, "-o", "xml"}},
		{"status-not-an-object", nil, []string{"status", "-k", pytorchKarta, "-f", "testdata/in/truncated.yaml"}},
		{"status-kind-mismatch", nil, []string{"status", "-k", "jobset", "-f", pytorchJob}},
		{"status-kind-mismatch-file", nil, []string{"status", "-k", trainKarta, "-f", pytorchJob}},
		{"status-kind-mismatch-allowed", nil, []string{"status", "-k", "jobset", "-f", pytorchJob, "--allow-kind-mismatch", "-o", "json"}},
		{"status-list", nil, []string{"status", "-f", "testdata/in/pytorchjob-list.yaml", "-o", "table"}},
		{"status-list-and-document", []string{"testdata/in/pytorchjob-list.yaml", pytorchJob}, []string{"status", "-k", "pytorchjob", "-f", "-", "-o", "json"}},
		{"status-duplicate-key", nil, []string{"status", "-f", "testdata/in/pytorchjob-duplicate-key.yaml"}},
		{"status-misspelt-hook", nil, []string{"status", "-k", pytorchKarta, "-f", pytorchJob, "--script", "testdata/in/misspelt-hook.lua", "-o", "table"}},

		{"revise-yaml", nil, []string{"revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", revisions}},
		{"revise-json", nil, []string{"revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", revisions, "-o", "json"}},
		{"revise-patch", nil, []string{"revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", revisions, "-o", "patch"}},
		{"revise-states-yaml", nil, []string{"revise", "-k", pytorchKarta, "-f", jobStates, "-r", revisions}},
		{"revise-trainjob-yaml", nil, []string{"revise", "-k", trainKarta, "-f", trainJob, "-r", trainRevs}},
		{"revise-trainjob-patch", nil, []string{"revise", "-k", trainKarta, "-f", trainJob, "-r", trainRevs, "-o", "patch"}},
		{"revise-bad-revisions", nil, []string{"revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", "testdata/in/revisions-bad.yaml"}},
		{"revise-unknown-component", nil, []string{"revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", "testdata/in/revisions-unknown.yaml"}},
		{"revise-no-revisions", nil, []string{"revise", "-k", pytorchKarta, "-f", pytorchJob}},
		{"revise-missing-revisions", nil, []string{"revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", "testdata/in/no-such-file.yaml"}},
		{"revise-table", nil, []string{"revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", revisions, "-o", "table"}},
		{"revise-merge-warning", nil, []string{"revise", "-f", pytorchRunning, "-r", "../../examples/revisions/pytorchjob-image.yaml", "-o", "patch"}},
		{"revise-type-strategic", nil, []string{"revise", "-f", pytorchRunning, "-r", "../../examples/revisions/pytorchjob-image.yaml", "--type", "strategic", "-o", "patch"}},
		{"revise-types-patch", nil, []string{"revise", "-f", pytorchRunning, "-r", "../../examples/revisions/pytorchjob-typed.yaml", "-o", "patch"}},
		{"revise-types-yaml", nil, []string{"revise", "-f", pytorchRunning, "-r", "../../examples/revisions/pytorchjob-typed.yaml"}},
		{"revise-types-bad-op", nil, []string{"revise", "-f", pytorchRunning, "-r", "testdata/in/revisions-typed-bad.yaml"}},
		{"revise-types-fail", nil, []string{"revise", "-f", pytorchRunning, "-r", "testdata/in/revisions-typed-fail.yaml"}},
		{"revise-type-unknown", nil, []string{"revise", "-f", pytorchRunning, "-r", "../../examples/revisions/pytorchjob-image.yaml", "--type", "apply"}},
		{"revise-types-trainjob", nil, []string{"revise", "-k", trainKarta, "-f", trainJob, "-r", "../../examples/tutorial-trainjob/revisions-typed.yaml", "-o", "patch"}},
		{"revise-list-patch", nil, []string{"revise", "-k", pytorchKarta, "-f", "testdata/in/pytorchjob-list.yaml", "-r", revisions, "-o", "patch"}},
		{"revise-list-yaml", nil, []string{"revise", "-k", pytorchKarta, "-f", "testdata/in/pytorchjob-list.yaml", "-r", revisions}},
		{"revise-kind-mismatch", nil, []string{"revise", "-k", "jobset", "-f", pytorchJob, "-r", revisions}},

		{"gang-json", nil, []string{"gang", "-k", pytorchKarta, "-f", pytorchJob, "--pods", pytorchPods}},
		{"gang-table", nil, []string{"gang", "-k", pytorchKarta, "-f", pytorchJob, "--pods", pytorchPods, "-o", "table"}},
		{"gang-trainjob-json", nil, []string{"gang", "-k", trainKarta, "-f", trainJob, "--pods", trainPods, "-o", "json"}},
		{"gang-trainjob-table", nil, []string{"gang", "-k", trainKarta, "-f", trainJob, "--pods", trainPods, "-o", "table"}},
		{"gang-pods-stdin", []string{trainPods}, []string{"gang", "-k", trainKarta, "-f", trainJob, "--pods", "-", "-o", "table"}},
		{"gang-no-pods", nil, []string{"gang", "-k", pytorchKarta, "-f", pytorchJob}},
		{"gang-kind-mismatch", nil, []string{"gang", "-k", trainKarta, "-f", pytorchJob, "--pods", pytorchPods}},
		{"gang-pods-list", nil, []string{"gang", "-k", trainKarta, "-f", trainJob, "--pods", "testdata/in/trainjob-pods-list.yaml", "-o", "table"}},
		{"gang-both-stdin", nil, []string{"gang", "-k", pytorchKarta, "-f", "-", "--pods", "-"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, joinDocuments(t, tc.stdin), tc.args...)
			checkGolden(t, tc.name, tc.args, stdout, stderr, code)
			assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
			if code != exitOK && !partialAnswers[tc.name] {
				assert.Empty(t, stdout, "a failed command prints nothing on standard output")
				assert.NotEmpty(t, stderr, "a failed command says why")
			}
		})
	}
}

// checkGolden compares the run with testdata/golden/NAME.txt, in
// TestGolden's format.
func checkGolden(t *testing.T, name string, args []string, stdout, stderr string, code int) {
	t.Helper()
	got := fmt.Sprintf("$ karta %s\nexit: %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code, stdout, stderr)
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create the golden file")
	assert.Equal(t, string(want), got)
}

func joinDocuments(t *testing.T, files []string) string {
	t.Helper()
	docs := make([]string, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		docs[i] = string(b)
	}
	return strings.Join(docs, "---\n")
}

func TestCompileIsDeterministic(t *testing.T) {
	args := []string{"compile", "-k", trainKarta, "--script", "testdata/in/degraded.lua"}
	first, stderr, code := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, stderr)
	second, _, _ := runCLI(t, "", args...)
	assert.Equal(t, first, second)
	assert.Contains(t, first, "-- override: script:degraded.lua\n", "--script chunks come after the generated hooks")
}

// A JSON result is one value per document: a stream a consumer can decode
// value by value.
func TestJSONIsOneValuePerDocument(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "status", "-k", pytorchKarta, "-f", jobStates, "-o", "json")
	require.Equal(t, exitOK, code, stderr)
	dec := json.NewDecoder(strings.NewReader(stdout))
	var statuses []string
	for {
		var v struct {
			Status string `json:"status"`
		}
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		statuses = append(statuses, v.Status)
	}
	assert.Equal(t, []string{"Initializing", "Running", "Degraded", "Completed", "Failed", "Suspended", "Running"}, statuses)
}

// revise -o yaml is the input with exactly the patch's writes: everything
// else, comments and number spellings included, is the input's own.
func TestReviseKeepsUntouchedText(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", revisions)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "# A running PyTorchJob as the Kubeflow training operator leaves it")
	assert.Contains(t, stdout, "requests: {cpu: 1.0, memory: 1.5Gi}")
	assert.Contains(t, stdout, "schedulerName: kai-scheduler")
	assert.NotContains(t, stdout, "sidecar.istio.io/inject")
	assert.Less(t, strings.Index(stdout, "uid:"), strings.Index(stdout, "generation:"), "key order is the input's, not sorted")
}

func TestDecodeRevisions(t *testing.T) {
	revs, err := decodeRevisions([]byte(`
- component: worker
  instance: "*"
  patch: {spec: {containers: [{name: c, resources: {requests: {cpu: 1.0, memory: 1.5Gi}}}]}, metadata: {annotations: {a: null}}}
`), "r.yaml", interpreter.PatchMerge)
	require.NoError(t, err)
	require.Len(t, revs, 1)
	assert.Equal(t, "worker", revs[0].Component)
	assert.Equal(t, "*", revs[0].Instance)
	patch := revs[0].Patch.(map[string]any)
	c := patch["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	assert.Equal(t, json.Number("1.0"), c["resources"].(map[string]any)["requests"].(map[string]any)["cpu"], "a number literal keeps its spelling")
	ann := patch["metadata"].(map[string]any)["annotations"].(map[string]any)
	v, ok := ann["a"]
	assert.True(t, ok, "null is kept: it removes the field")
	assert.Nil(t, v)

	// JSON is YAML.
	revs, err = decodeRevisions([]byte(`[{"component": "master", "patch": {"spec": {"priority": 0x10}}}]`), "r.yaml", interpreter.PatchMerge)
	require.NoError(t, err)
	assert.Equal(t, json.Number("16"), revs[0].Patch.(map[string]any)["spec"].(map[string]any)["priority"], "YAML spellings JSON lacks become their value")

	for input, want := range map[string]string{
		"": "no revisions found",
		"- component: a\n  patch: {}\n---\n- component: b\n  patch: {}\n": "more than one document",
		"component: a":                          "revisions must be a list",
		"- [unclosed":                           "invalid YAML",
		"- component: a\n  patch: {.inf: .inf}": "is not a JSON number",
	} {
		_, err := decodeRevisions([]byte(input), "r.yaml", interpreter.PatchMerge)
		require.Error(t, err, input)
		assert.Contains(t, err.Error(), want, input)
	}
}

func TestOutputFormat(t *testing.T) {
	offered := []string{formatJSON, formatYAML, formatTable}
	f, err := outputFormat("", offered, formatTable)
	require.NoError(t, err)
	assert.Equal(t, formatTable, f)
	f, err = outputFormat("yaml", offered, formatTable)
	require.NoError(t, err)
	assert.Equal(t, formatYAML, f)
	_, err = outputFormat("patch", offered, formatTable)
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitUsage, ee.code)
}

// The default output is a table for a character device (a terminal) and
// JSON for anything else.
func TestDefaultFormat(t *testing.T) {
	assert.Equal(t, formatJSON, defaultFormat(&bytes.Buffer{}))
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	defer func() { _ = file.Close() }()
	assert.Equal(t, formatJSON, defaultFormat(file))
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no %s: %v", os.DevNull, err)
	}
	defer func() { _ = devNull.Close() }()
	assert.Equal(t, formatTable, defaultFormat(devNull), "%s is a character device, as a terminal is", os.DevNull)
}

// Results print as YAML with number literals as the object spells them.
func TestWriteYAMLKeepsNumberLiterals(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeYAML(&buf, map[string]any{"cpu": json.Number("1.0"), "s": "true", "n": nil, "l": []any{}}))
	assert.Equal(t, "cpu: 1.0\nl: []\nn: null\ns: \"true\"\n", buf.String())
}

func TestCommandsHaveHelp(t *testing.T) {
	root := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	for _, name := range []string{"compile", "pods", "status", "revise", "gang", "podgroups"} {
		cmd, _, err := root.Find([]string{name})
		require.NoError(t, err, name)
		assert.NotEmpty(t, cmd.Short, name)
		assert.NotEmpty(t, cmd.Long, name)
		assert.Contains(t, cmd.Example, "karta "+name, name)
	}
}

// terminalTable are the commands whose default output on a terminal is a
// table (and JSON elsewhere).
var terminalTable = map[string]bool{"pods": true, "status": true, "gang": true, "podgroups": true, "describe": true}

// The console examples of the README, docs/*.md and the examples' READMEs
// are real output: each block that runs `go run ./cmd/karta` and is not cut
// short (…) must print what it shows (but the blanks that end a line, which
// a table pads with and Markdown does not keep). The docs show a terminal, where the default output is a
// table. A command that ends in >/dev/null shows its standard error. A
// block that ends in `exit status N` (what go run prints when the program
// fails) shows a failure: standard error, then that line, and the command
// must exit N.
func TestREADMEExamples(t *testing.T) {
	checked := 0
	for _, block := range docBlocks(t, "console") {
		command, want, _ := strings.Cut(block.text, "\n")
		args, ok := strings.CutPrefix(command, "$ go run ./cmd/karta ")
		if !ok || strings.Contains(want, "…") {
			continue
		}
		t.Run(block.file+": "+args, func(t *testing.T) {
			args, stderrOnly := strings.CutSuffix(args, " >/dev/null")
			argv := strings.Fields(args)
			for i, a := range argv {
				if _, err := os.Stat(filepath.Join("../..", a)); err == nil && strings.Contains(a, "/") {
					argv[i] = filepath.Join("../..", a) // the docs run from the repository root
				}
			}
			if terminalTable[argv[0]] && !strings.Contains(args, " -o ") {
				argv = append(argv, "-o", "table")
			}
			stdout, stderr, code := runCLI(t, "", argv...)
			// Paths print as the command got them: from the root.
			stderr = strings.ReplaceAll(stderr, "../../", "")
			if stderrOnly {
				require.Equal(t, exitOK, code, stderr)
				assert.Equal(t, trimLineEnds(want), trimLineEnds(stderr))
				return
			}
			wantCode := exitOK
			lines := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
			if n, found := strings.CutPrefix(lines[len(lines)-1], "exit status "); found {
				var err error
				wantCode, err = strconv.Atoi(n)
				require.NoError(t, err)
				want = strings.Join(lines[:len(lines)-1], "\n") + "\n"
				assert.Equal(t, trimLineEnds(want), trimLineEnds(stdout+stderr))
			} else {
				assert.Equal(t, trimLineEnds(want), trimLineEnds(stdout))
			}
			require.Equal(t, wantCode, code, stderr)
		})
		checked++
	}
	assert.GreaterOrEqual(t, checked, 8, "the docs' examples were found")
}

// trimLineEnds drops the blanks at the end of every line of s.
func trimLineEnds(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// A -k file with several Kartas serves each document with the Karta for its
// kind.
func TestKartaFilePicksByKind(t *testing.T) {
	both := filepath.Join(t.TempDir(), "kartas.yaml")
	require.NoError(t, os.WriteFile(both, []byte(joinDocuments(t, []string{pytorchKarta, trainKarta})), 0o644))
	stdin := joinDocuments(t, []string{trainJob, pytorchJob})
	stdout, stderr, code := runCLI(t, stdin, "pods", "-k", both, "-f", "-", "-o", "json")
	require.Equal(t, exitOK, code, stderr)
	dec := json.NewDecoder(strings.NewReader(stdout))
	var components [][]string
	for dec.More() {
		var v struct {
			Items []struct {
				Component string `json:"component"`
			} `json:"items"`
		}
		require.NoError(t, dec.Decode(&v))
		var names []string
		for _, it := range v.Items {
			names = append(names, it.Component)
		}
		components = append(components, names)
	}
	assert.Equal(t, [][]string{{"launcher", "worker"}, {"master", "worker"}}, components)

	// Two Kartas for one kind: which one is meant is not for karta to guess.
	_, stderr, code = runCLI(t, "apiVersion: example.com/v1\nkind: Trainer\nmetadata: {name: t}\n", "status", "-k", "testdata/in/multi.yaml", "-f", "-")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, `<stdin>: testdata/in/multi.yaml holds 2 Kartas ("single" for example.com/v1, Kind=Trainer, "second" for example.com/v1, Kind=Trainer) and several are for example.com/v1, Kind=Trainer`)
}

// Without -k, or with -k NAME, the Karta comes from the built-in registry;
// --script recompiles it with the override.
func TestResolverUsesRegistry(t *testing.T) {
	kartas, err := karta.LoadFile(pytorchKarta)
	require.NoError(t, err)
	builtin, err := interpreter.Compile(kartas[0], interpreter.Options{})
	require.NoError(t, err)
	reg := interpreter.NewRegistry()
	reg.Put(builtin)
	regFn := func() (*interpreter.Registry, error) { return reg, nil }
	s := streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard}

	r, err := newResolver(s, "", nil, regFn)
	require.NoError(t, err)
	p, err := r.program(builtin.GVK())
	require.NoError(t, err)
	assert.Same(t, builtin, p)
	_, err = r.program(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	assert.EqualError(t, err, "no Karta registered for apps/v1, Kind=Deployment; pass -k FILE")

	r, err = newResolver(s, "pytorchjob", nil, regFn)
	require.NoError(t, err)
	p, err = r.only()
	require.NoError(t, err)
	assert.Same(t, builtin, p)

	script, err := os.ReadFile("testdata/in/degraded.lua")
	require.NoError(t, err)
	r, err = newResolver(s, "pytorchjob", []interpreter.Script{{Name: "degraded.lua", Source: string(script)}}, regFn)
	require.NoError(t, err)
	p, err = r.program(builtin.GVK())
	require.NoError(t, err)
	assert.NotSame(t, builtin, p)
	assert.True(t, p.Overridden(interpreter.HookInterpretStatus))
	assert.False(t, builtin.Overridden(interpreter.HookInterpretStatus), "the registered Program is left alone")

	_, err = newResolver(s, "jobset", nil, regFn)
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitUsage, ee.code)
	assert.Equal(t, "-k jobset: no such file and no built-in Karta of that name", ee.msg)
}
