package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cliDocFile is the command reference, generated from the commands' own
// help (cobra's markdown generator) so that it cannot drift from them.
const cliDocFile = "../../docs/cli.md"

// cliDocHeader is the part of docs/cli.md that no command's help holds:
// what every command shares.
const cliDocHeader = `# The karta command

This reference is generated from the commands' own help (` + "`karta help COMMAND`" + ` prints the same); do not
edit it by hand: ` + "`make generate`" + ` (or ` + "`go test ./cmd/karta -run TestCLIDoc -update`" + `) rewrites it.

## What every command shares

- **The Karta** (` + "`-k REF`" + `): a Karta file, or the name of a built-in (` + "`karta builtin list`" + `). Left out, the
  built-in registered for each object's kind is used. An object whose apiVersion and kind are not the
  Karta's root kind is an error unless ` + "`--allow-kind-mismatch`" + ` says it is intended.
- **Input** (` + "`-f FILE`" + `): YAML or JSON; ` + "`-f -`" + ` reads standard input, as do ` + "`--pods -`" + `, ` + "`-r -`" + `, ` + "`-c -`" + `,
  ` + "`--crd -`" + ` and ` + "`validate -`" + ` (one input at a time). Messages call it ` + "`<stdin>`" + `. When standard input is a
  terminal, karta says on standard error what it waits for (` + "`karta: reading the object from standard input (Ctrl-D to end)`" + `).
  A file of several documents gives one result per document, and a ` + "`v1 List`" + `
  (what ` + "`kubectl get -o yaml`" + ` prints) one result per item. Duplicate keys are an error, as in a Karta.
  **One bad document never hides the good ones, and never passes for a whole answer**: every command that
  answers per document (` + "`status`" + `, ` + "`pods`" + `, ` + "`gang`" + `, ` + "`podgroups`" + `, ` + "`revise`" + `, ` + "`describe`" + `, ` + "`argo health`" + `,
  ` + "`argo actions`" + `, ` + "`karmada run`" + `) prints the results of the good documents on standard output, names
  each bad one on standard error (` + "`FILE:LINE: document N: message`" + `, ` + "`FILE:LINE: item M: message`" + ` in a List),
  and exits 1. ` + "`--pods`" + ` takes v1 Pods only: any other object is named at its line and refused. A test
  runner (` + "`test`" + `, ` + "`argo test`" + `, ` + "`karmada test`" + `) on a folder with no test fails. A test in
  ` + "`cmd/karta`" + ` (` + "`TestSweepDataCommands`" + `) walks the command tree and holds every command to this rule with
  the same classes of input; a new command gets its cases there, or an exemption with its reason.
- **A schema at hand** (` + "`--crd FILE`" + ` on ` + "`status`" + `, ` + "`pods`" + `, ` + "`gang`" + `, ` + "`podgroups`" + `, ` + "`revise`" + ` and ` + "`describe -f`" + `): each
  Karta is checked against its CRD's schema the first time it runs, and every path the schema refutes
  (` + "`.spec.templat`" + `, which reads nothing on any object of the kind) is a warning on standard error, with the
  schema's did-you-mean: ` + "`FILE: warning: karta \"NAME\": FIELD: spec has no field \"templat\"; did you mean \"template\"?`" + `.
  Warnings never change the exit code (the hooks ran and answered); ` + "`karta validate --crd`" + ` makes them errors.
- **Output** (` + "`-o`" + `): ` + "`json`" + `, ` + "`yaml`" + ` or ` + "`table`" + ` on every command that prints data (` + "`pods`" + `, ` + "`status`" + `,
  ` + "`gang`" + `, ` + "`podgroups`" + `, ` + "`describe`" + `, ` + "`get`" + `, ` + "`builtin list`" + `, ` + "`version`" + `, ` + "`argo health`" + `, ` + "`argo actions`" + `,
  ` + "`karmada run`" + `): a table on a terminal, JSON in a pipe or a file. Several results print as a JSON stream,
  YAML documents separated by ` + "`---`" + `, or tables under a ` + "`==> FILE:LINE: document N: Kind namespace/name <==`" + `
  heading. Where a format does not apply: ` + "`revise`" + ` prints the revised object as YAML by default, in a pipe
  too, because it is the input's own text with only the revised fields changed (comments kept), which JSON
  cannot carry; ` + "`argo action`" + ` prints an object, which has no table (YAML on a terminal, JSON in a pipe);
  ` + "`compile`" + ` prints Lua, ` + "`crd`" + ` and ` + "`karmada export`" + ` print manifests for ` + "`kubectl apply`" + ` (YAML, their
  scripts as block text); ` + "`validate`" + ` and the test runners (` + "`test`" + `, ` + "`argo test`" + `, ` + "`karmada test`" + `)
  report problems and failures for people, and their exit code for scripts.
- **Errors** go to standard error, one per line, each where it is: ` + "`FILE:LINE: message`" + `, with
  ` + "`document N: `" + ` after the position in a file of several documents (never in a file of one) and ` + "`item M: `" + `
  for an item of a List; the line is left out when the problem is the file's as a whole. A YAML problem in any
  input reads the same whichever command and flag read it (` + "`FILE:4: invalid YAML: did not find expected ',' or ']'`" + `).
  A Karta's validation problems name the field path, at the line of that field:
  ` + "`FILE:LINE: spec.structureDefinition.childComponents[0].ownerRef: message`" + `, or ` + "`FIELD: warning: message`" + `
  for a warning. A hook's error names the Karta and the hook once: ` + "`karta \"NAME\": HOOK: message`" + `.
- **Exit codes**: ` + "`0`" + ` success; ` + "`1`" + ` the input was understood but is invalid (a Karta that does not
  validate, a hook that fails, a test that fails); ` + "`2`" + ` usage errors (an unknown flag or output format,
  a missing file, wrong arguments).

## Commands

`

// TestCLIDoc checks docs/cli.md against the commands; -update rewrites it.
func TestCLIDoc(t *testing.T) {
	got := cliDoc(t)
	if *update {
		require.NoError(t, os.WriteFile(cliDocFile, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(cliDocFile)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "docs/cli.md is stale: run make generate")
}

// cliDoc renders every visible command, depth first in the order karta
// help lists them, with cobra's markdown generator; links between commands
// become anchors in the one file.
func cliDoc(t *testing.T) string {
	t.Helper()
	root := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	root.InitDefaultHelpCmd()
	var buf bytes.Buffer
	buf.WriteString(cliDocHeader)
	link := func(name string) string {
		return "#" + strings.ReplaceAll(strings.TrimSuffix(name, ".md"), "_", "-")
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		c.DisableAutoGenTag = true
		var one bytes.Buffer
		require.NoError(t, doc.GenMarkdownCustom(c, &one, link))
		// One level down: the file's title is the page's.
		text := strings.ReplaceAll(one.String(), "\n### ", "\n#### ")
		text = strings.Replace(text, "## ", "### ", 1)
		buf.WriteString(text)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return buf.String()
}
