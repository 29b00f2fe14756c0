package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rule (docs/cli.md, "What every command shares"): no wrong answer
// with exit 0. Every command that answers about objects, given the same
// classes of bad input, answers the good documents on standard output,
// names each bad one on standard error with FILE:LINE, exits non-zero, and
// skips nothing silently. TestSweepDataCommands holds every command of the
// cobra tree to it: a new command must get its cases here, or be listed in
// sweepExempt with the reason the rule does not apply.

// sweepCase is one class of input for one command.
type sweepCase struct {
	class string
	args  []string
	// out must match standard output; empty: nothing on it.
	out string
	// errs must each match standard error.
	errs []string
	code int
}

// sweepExempt are the commands the sweep does not run, and why.
var sweepExempt = map[string]string{
	"karta argo action":    "takes one object (-f of several documents is a usage error, exit 2) and prints what Argo CD would apply to it",
	"karta argo export":    "writes a customization from a Karta and its examples, reads no object; its failures are in flags-and-warnings.txtar",
	"karta builtin list":   "lists the built-ins; reads no input",
	"karta compile":        "prints a Karta's Lua; reads no object",
	"karta completion":     "cobra's shell completion scripts",
	"karta controller":     "a long-running controller against a cluster; its inputs are the cluster's objects (controller tests)",
	"karta crd":            "prints the Karta CRD; reads no input",
	"karta exporter":       "a long-running exporter against a cluster; its inputs are the cluster's objects (exporter tests, TestIntegrationExporter)",
	"karta get":            "reads a cluster, not files (get_test.go runs it on a fake cluster)",
	"karta help":           "cobra's help",
	"karta karmada export": "prints manifests from a Karta; reads no object",
	"karta serve":          "a long-running webhook; each request is one object (webhook tests)",
	"karta studio":         "a long-running local web app; its documents come in requests, each answered per document (studio tests)",
	"karta version":        "prints the version; reads no input",
}

// sweepCommands are the data commands with their cases; dir holds the
// inputs sweepInputs writes.
func sweepCommands(dir string) map[string][]sweepCase {
	in := func(name string) string { return filepath.Join(dir, name) }
	mixed := in("mixed.yaml")
	badDoc := regexp.QuoteMeta(mixed) + `:\d+: document 2: `
	pods := "../../examples/pytorchjob/pods.yaml"
	running := "../../examples/pytorchjob/running.yaml"
	notPods := regexp.QuoteMeta(in("pods.yaml")) + `:5: document 2: --pods takes v1 Pods; this is apps/v1 Deployment ml/web`
	wrongKind := `the object is kubeflow.org/v1 PyTorchJob; this Karta describes jobset.x-k8s.io/v1alpha2 JobSet \(--allow-kind-mismatch runs it anyway\)`
	typo := []string{"-k", in("typo.yaml"), "-f", "../../examples/tutorial-trainjob/running.yaml", "--crd", "../../examples/tutorial-trainjob/crd.yaml"}
	typoWarning := `warning: karta "typo": spec.structureDefinition.childComponents\[0\].specDefinition.podSpecPath: spec.launcher has no field "podSpc"; did you mean "podSpec"\?`
	objectCases := func(cmd []string, good string, extra ...string) []sweepCase {
		args := func(a ...string) []string { return append(append(append([]string{}, cmd...), a...), extra...) }
		return []sweepCase{
			{"one good and one bad document", args("-f", mixed, "-o", "json"), good, []string{badDoc}, exitInvalid},
			{"a wrong kind", args("-k", "jobset", "-f", running, "-o", "json"), "", []string{wrongKind}, exitInvalid},
		}
	}
	withTypo := func(cmd []string, extra ...string) sweepCase {
		return sweepCase{"a typo'd path with a schema at hand", append(append(append([]string{}, cmd...), typo...), extra...), `\S`, []string{typoWarning}, exitOK}
	}
	withNotPods := func(cmd []string, extra ...string) sweepCase {
		return sweepCase{"a non-Pod in --pods", append(append(append([]string{}, cmd...), "-f", running, "--pods", in("pods.yaml")), extra...), "", []string{notPods}, exitInvalid}
	}
	emptyDir := func(cmd []string, msg string) []sweepCase {
		return []sweepCase{{"an empty folder", append(append([]string{}, cmd...), in("empty")), "", []string{regexp.QuoteMeta(in("empty")) + `: ` + msg}, exitInvalid}}
	}
	return map[string][]sweepCase{
		"karta status": append(objectCases([]string{"status"}, `"status": "Running"`), withTypo([]string{"status"}, "-o", "json")),
		"karta pods":   append(objectCases([]string{"pods"}, `"component": "master"`), withTypo([]string{"pods"}, "-o", "json")),
		"karta gang": append(objectCases([]string{"gang"}, `"groups"`, "--pods", pods),
			withNotPods([]string{"gang"}), withTypo([]string{"gang"}, "--pods", pods, "-o", "json")),
		"karta podgroups": append(objectCases([]string{"podgroups", "--for", "kai"}, `"kind": "PodGroup"`, "--pods", pods),
			withNotPods([]string{"podgroups", "--for", "kai"})),
		"karta revise": append(objectCases([]string{"revise"}, `"kind": "PyTorchJob"`, "-r", "../../examples/pytorchjob/revisions.yaml", "--type", "strategic"),
			withTypo([]string{"revise", "-r", in("no-revisions.yaml")}, "-o", "json")),
		"karta describe": append(objectCases([]string{"describe"}, `"kind": "Workload"`),
			withNotPods([]string{"describe"}), withTypo([]string{"describe"}, "-o", "json")),
		"karta argo health": {
			{"one good and one bad document", []string{"argo", "health", "--script", in("health.lua"), "-f", mixed, "-o", "json"}, `"status": "Healthy"`, []string{badDoc + `script:health.lua:\d+: a gadget`}, exitInvalid},
		},
		"karta argo actions": {
			{"one good and one bad document", []string{"argo", "actions", "--dir", in("customizations"), "-f", mixed, "-o", "json"}, `"name": "stop"`, []string{badDoc}, exitInvalid},
		},
		"karta karmada run": append(objectCases([]string{"karmada", "run", "--operation", "InterpretHealth", "-k", "pytorchjob"}, `"healthy": true`)[:1],
			sweepCase{"a wrong kind", []string{"karmada", "run", "--operation", "InterpretHealth", "-k", "jobset", "-f", running, "-o", "json"}, "", []string{wrongKind}, exitInvalid}),
		"karta validate": {
			{"one good and one bad file", []string{"validate", "../../examples/kartas/trainjob.yaml", in("nameless.yaml")}, `trainjob.yaml: ok`, []string{regexp.QuoteMeta(in("nameless.yaml")) + `:\d+: metadata.name: required`}, exitInvalid},
			{"a typo'd path with a schema at hand", []string{"validate", "--crd", "../../examples/tutorial-trainjob/crd.yaml", in("typo.yaml")}, "", []string{`did you mean "podSpec"`}, exitInvalid},
		},
		"karta test":         emptyDir([]string{"test"}, "no karta_test.yaml in it or below"),
		"karta argo test":    emptyDir([]string{"argo", "test"}, "no health.lua"),
		"karta karmada test": emptyDir([]string{"karmada", "test"}, "no test case found in it or below"),
	}
}

// sweepInputs writes the inputs the cases read.
func sweepInputs(t *testing.T, dir string) {
	t.Helper()
	running, err := os.ReadFile("../../examples/pytorchjob/running.yaml")
	require.NoError(t, err)
	files := map[string]string{
		"mixed.yaml": string(running) + "---\napiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: nlp}\n",
		"pods.yaml":  "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: nlp}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ml}\n",
		"typo.yaml": `apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: typo}
spec:
  structureDefinition:
    rootComponent:
      name: trainjob
      kind: {group: example.com, version: v1, kind: TrainJob}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
    childComponents:
    - name: launcher
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: trainjob
      specDefinition:
        podSpecPath: .spec.launcher.podSpc
      scaleDefinition: {replicasPath: "1"}
`,
		"nameless.yaml":     "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {}\nspec:\n  structureDefinition:\n    rootComponent:\n      name: g\n      kind: {group: example.com, version: v1, kind: Gadget}\n",
		"no-revisions.yaml": "[]\n",
		"health.lua":        "if obj.kind == \"Gadget\" then error(\"a gadget\") end\nreturn {status = \"Healthy\"}\n",
		"customizations/kubeflow.org/PyTorchJob/actions/discovery.lua": "return {stop = {}}\n",
		"empty/.keep": "",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
}

func TestSweepDataCommands(t *testing.T) {
	dir := t.TempDir()
	sweepInputs(t, dir)
	commands := sweepCommands(dir)

	// Every runnable command of the tree is swept or exempt, and every
	// entry names a command that exists.
	leaves := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && !c.Hidden && !c.HasSubCommands() {
			leaves[c.CommandPath()] = true
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := newRootCmd(streams{in: strings.NewReader(""), out: &strings.Builder{}, err: &strings.Builder{}})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	walk(root)
	var names []string
	for name := range leaves {
		_, swept := commands[name]
		_, exempt := sweepExempt[name]
		if parent := name[:strings.LastIndex(name, " ")]; sweepExempt[parent] != "" && parent != "karta" {
			exempt = true // karta completion bash, ...: their parent's reason
		}
		assert.True(t, swept != exempt, "%s: sweep it (sweepCommands) or exempt it with a reason (sweepExempt), not both and not neither", name)
		names = append(names, name)
	}
	for name := range commands {
		assert.True(t, leaves[name], "sweepCommands names %q, which is not a command", name)
	}
	for name := range sweepExempt {
		if !strings.HasPrefix(name, "karta help") && !strings.HasPrefix(name, "karta completion") {
			assert.True(t, leaves[name], "sweepExempt names %q, which is not a command", name)
		}
	}
	sort.Strings(names)

	for _, name := range names {
		for _, tc := range commands[name] {
			t.Run(name+"/"+tc.class, func(t *testing.T) {
				stdout, stderr, code := runCLI(t, "", tc.args...)
				assert.Equal(t, tc.code, code, "exit code; stderr:\n%s", stderr)
				if tc.out == "" {
					assert.Empty(t, stdout, "nothing answered")
				} else {
					assert.Regexp(t, tc.out, stdout, "the good documents are answered")
				}
				for _, e := range tc.errs {
					assert.Regexp(t, regexp.MustCompile(`(?m)^.*`+e), stderr, "named on standard error")
				}
				if tc.code != exitOK {
					assert.NotEmpty(t, stderr, "a failure says why")
				}
				assert.NotContains(t, stderr, "goroutine ", "no Go stack traces")
			})
		}
	}
}
