package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/stutter"
)

// inputFlags are every way a command reads a YAML input, with FILE where
// the file goes (every other argument is valid).
var inputFlags = []struct {
	name string
	args []string
	// kartas: the input is a Karta file, whose loader reports the
	// problems of the documents before the broken one too.
	kartas bool
}{
	{name: "validate FILE", args: []string{"validate", "FILE"}, kartas: true},
	{name: "validate --crd", args: []string{"validate", "--crd", "FILE", trainKarta}},
	{name: "-k", args: []string{"status", "-k", "FILE", "-f", pytorchJob}, kartas: true},
	{name: "status -f", args: []string{"status", "-k", pytorchKarta, "-f", "FILE"}},
	{name: "pods -f", args: []string{"pods", "-f", "FILE"}},
	{name: "gang --pods", args: []string{"gang", "-k", pytorchKarta, "-f", pytorchJob, "--pods", "FILE"}},
	{name: "podgroups --pods", args: []string{"podgroups", "-k", pytorchKarta, "-f", pytorchJob, "--pods", "FILE", "--for", "volcano"}},
	{name: "revise -r", args: []string{"revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", "FILE"}},
	{name: "describe -f", args: []string{"describe", "-f", "FILE"}},
	{name: "describe --pods", args: []string{"describe", "-k", pytorchKarta, "-f", pytorchJob, "--pods", "FILE"}},
	{name: "argo health -f", args: []string{"argo", "health", "--script", "testdata/argo/customizations/argoproj.io/Rollout/health.lua", "-f", "FILE"}},
	{name: "argo actions -f", args: []string{"argo", "actions", "--dir", "testdata/argo/customizations", "-f", "FILE"}},
	{name: "argo action -f", args: []string{"argo", "action", "pause", "--dir", "testdata/argo/customizations", "-f", "FILE"}},
	{name: "karmada run -f", args: []string{"karmada", "run", "--operation", "InterpretHealth", "-c", gizmoCust, "-f", "FILE"}},
	{name: "karmada run -c", args: []string{"karmada", "run", "--operation", "InterpretHealth", "-c", "FILE", "-f", gizmo}},
	{name: "karmada run --observed", args: []string{"karmada", "run", "--operation", "Retain", "-c", gizmoCust, "-f", gizmo, "--observed", "FILE"}},
	{name: "karmada run --status-items", args: []string{"karmada", "run", "--operation", "AggregateStatus", "-c", gizmoCust, "-f", gizmo, "--status-items", "FILE"}},
}

func withFile(args []string, file string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == "FILE" {
			out[i] = file
		}
	}
	return out
}

// A YAML problem in any input prints one way, whichever command and flag
// read it: FILE:LINE: message, the line where the problem is, no document
// for a single-document input.
func TestYAMLProblemsPrintOneWay(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, text, want string }{
		{"unclosed list", "kind: Pod\nmetadata:\n  name: x\n  labels: [a, b\nspec: {}\n", "FILE:4: invalid YAML: did not find expected ',' or ']'"},
		{"bad indentation", "kind: Pod\nmetadata:\n  name: x\n   bad: indent\n", "FILE:4: invalid YAML: mapping values are not allowed in this context"},
		{"second document", "kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata:\n  labels: [a, b\n", "FILE:6: document 2: invalid YAML: did not find expected ',' or ']'"},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
		require.NoError(t, os.WriteFile(file, []byte(tc.text), 0o644))
		want := strings.ReplaceAll(tc.want, "FILE", file)
		for _, in := range inputFlags {
			t.Run(tc.name+"/"+in.name, func(t *testing.T) {
				stdout, stderr, code := runCLI(t, "", withFile(in.args, file)...)
				assert.Equal(t, exitInvalid, code, stderr)
				assert.Empty(t, stdout)
				if in.kartas {
					lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
					stderr = lines[len(lines)-1] + "\n"
				}
				assert.Equal(t, want+"\n", stderr)
			})
		}
	}
}

// Standard input has one name in every message, and a note on standard
// error says what is awaited when it is a terminal, where karta would
// otherwise seem to hang.
func TestStandardInput(t *testing.T) {
	for _, in := range inputFlags {
		if in.name == "-k" {
			continue // -k names a file or a built-in
		}
		t.Run(in.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "a: [", withFile(in.args, "-")...)
			assert.Equal(t, exitInvalid, code, stderr)
			assert.True(t, strings.HasPrefix(stderr, stdinSource+":2: invalid YAML: "), stderr)
		})
	}
	// /dev/null is a character device, as a terminal is (see
	// TestDefaultFormat); it reads as empty.
	tty, err := os.Open(os.DevNull)
	if err != nil {
		t.Skipf("no %s: %v", os.DevNull, err)
	}
	defer func() { _ = tty.Close() }()
	for args, what := range map[string]string{
		"status -k pytorchjob -f -": "the object",
		"validate -":                "the Karta",
		"gang -k pytorchjob -f " + pytorchJob + " --pods -": "the pods",
		"revise -k pytorchjob -f " + pytorchJob + " -r -":   "the revisions",
	} {
		var out, errOut strings.Builder
		code := run(strings.Fields(args), streams{in: tty, out: &out, err: &errOut})
		assert.Equal(t, exitInvalid, code, args)
		lines := strings.Split(errOut.String(), "\n")
		assert.Equal(t, "karta: reading "+what+" from standard input (Ctrl-D to end)", lines[0], args)
		assert.True(t, strings.HasPrefix(lines[1], stdinSource+": "), "then the input's problem: %s", lines[1])
	}
	// A pipe or a file gets no note.
	_, stderr, _ := runCLI(t, "", "status", "-k", "pytorchjob", "-f", "-")
	assert.NotContains(t, stderr, "Ctrl-D")
}

// No error says a name twice: every Karmada operation on a Karta that
// does not define it or on an object of another kind, and the error paths
// of the other commands.
func TestErrorsDoNotStutter(t *testing.T) {
	var runs [][]string
	for _, op := range []string{"InterpretReplica", "InterpretComponent", "ReviseReplica", "InterpretStatus", "AggregateStatus", "InterpretHealth", "InterpretDependency", "Retain"} {
		for _, k := range []string{trainKarta, pytorchKarta} {
			for _, obj := range []string{trainJob, pytorchJob} {
				args := []string{"karmada", "run", "--operation", op, "-k", k, "-f", obj}
				switch op {
				case "ReviseReplica":
					args = append(args, "--replicas", "2")
				case "Retain":
					args = append(args, "--observed", obj)
				case "AggregateStatus":
					args = append(args, "--status-items", "testdata/karmada/status-items.yaml")
				}
				runs = append(runs, args)
			}
		}
	}
	for _, cmd := range []string{"pods", "status", "describe"} {
		runs = append(runs,
			[]string{cmd, "-k", trainKarta, "-f", pytorchJob},
			[]string{cmd, "-k", pytorchKarta, "-f", "testdata/in/pytorchjob-bad-replicas.yaml"},
			[]string{cmd, "-k", "../../examples/kartas/broken.yaml", "-f", pytorchJob})
	}
	runs = append(runs,
		[]string{"gang", "-k", trainKarta, "-f", pytorchJob, "--pods", pytorchPods},
		[]string{"revise", "-k", pytorchKarta, "-f", pytorchJob, "-r", "testdata/in/revisions-unknown.yaml"},
		[]string{"revise", "-k", trainKarta, "-f", pytorchJob, "-r", revisions},
		[]string{"podgroups", "-k", "testdata/in/pytorchjob-no-gang.yaml", "-f", pytorchJob, "--for", "volcano"},
		[]string{"karmada", "export", "-k", "testdata/in/karmada-target.yaml"},
		[]string{"argo", "export", "-k", "testdata/in/karmada-target.yaml", "-o", "argocd-cm"},
		[]string{"karmada", "run", "--operation", "InterpretHealth", "-f", "testdata/karmada/gadget.yaml", "-c", karmadaFails + "/example.io/v1/Gadget/customizations.yaml"},
	)
	failures := 0
	for _, args := range runs {
		_, stderr, code := runCLI(t, "", args...)
		if code == exitOK {
			continue
		}
		failures++
		for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
			assert.Empty(t, stutter.Find(line), "karta %s: says a name twice: %s", strings.Join(args, " "), line)
		}
	}
	assert.Greater(t, failures, 30, "the runs fail as intended")
}
