package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/builtin"
)

// The flags whose values name inputs in the repository, by what they
// name. --dir is argo export's output folder, and an input elsewhere.
var exampleInputFlags = map[string]string{
	"filename": "file", "pods": "file", "revisions": "file", "script": "file", "crd": "file",
	"customization": "file", "observed": "file", "status-items": "file", "karta": "file or built-in",
	"examples": "dir", "dir": "dir",
}

// exampleOutsideRepo are the flags whose files are made where karta runs,
// never stored in a repository.
var exampleOutsideRepo = map[string]string{
	"tls-cert":   "a certificate is made per deployment (cert-manager, a Secret)",
	"tls-key":    "a certificate is made per deployment (cert-manager, a Secret)",
	"kubeconfig": "the user's own kubeconfig",
}

// exampleArgs are the commands whose arguments are inputs.
var exampleArgs = map[string]string{
	"karta validate": "file", "karta test": "dir", "karta argo test": "dir", "karta karmada test": "dir",
}

// karta is one karta command line of an Example.
type exampleLine struct {
	command string // as written, for messages
	args    []string
	// stdin: the line reads standard input (a pipe into karta, or -).
	stdin bool
}

// exampleLines splits an Example into its karta command lines: a line
// ending in \ or | continues on the next; in a pipeline, the karta part;
// what follows > is not karta's.
func exampleLines(example string) []exampleLine {
	var out []exampleLine
	var joined []string
	cur := ""
	for _, line := range strings.Split(example, "\n") {
		line = strings.TrimSpace(line)
		if c, ok := strings.CutSuffix(line, "\\"); ok {
			cur += c + " "
			continue
		}
		cur += line
		if strings.HasSuffix(line, "|") {
			cur += " "
			continue
		}
		joined = append(joined, cur)
		cur = ""
	}
	for _, line := range joined {
		segments := strings.Split(line, "|")
		for i, seg := range segments {
			words := shellWords(seg)
			if len(words) == 0 || words[0] != "karta" {
				continue
			}
			if j := indexOf(words, ">"); j >= 0 {
				words = words[:j]
			}
			out = append(out, exampleLine{command: strings.TrimSpace(seg), args: words[1:], stdin: i > 0 || indexOf(words, "-") >= 0})
		}
	}
	return out
}

// shellWords splits a command line as a shell would, for the quoting the
// examples use.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote, started := false, byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, started = c, true
		case c == ' ' || c == '\t':
			if started {
				words = append(words, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteByte(c)
			started = true
		}
		_ = in
	}
	if started {
		words = append(words, cur.String())
	}
	return words
}

func indexOf(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}

// Every command's help has examples, and what they name exists in the
// repository: the files and folders of input flags and arguments (or a
// built-in's name for -k). Those that need no cluster, no standard input
// and write nothing run from the repository's root and succeed.
func TestHelpExamples(t *testing.T) {
	root := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if sub.Runnable() {
				cmds = append(cmds, sub)
			}
			walk(sub)
		}
	}
	walk(root)
	t.Chdir("../..") // the examples are written from the repository's root

	ran := 0
	for _, c := range cmds {
		path := c.CommandPath()
		lines := exampleLines(c.Example)
		if !assert.NotEmpty(t, lines, "%s: its help has no example", path) {
			continue
		}
		for _, ex := range lines {
			// A fresh command tree parses each line.
			fresh := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
			cmd, rest, err := fresh.Find(ex.args)
			require.NoError(t, err, ex.command)
			require.Equal(t, path, cmd.CommandPath(), "%s: the example runs another command", ex.command)
			require.NoError(t, cmd.ParseFlags(rest), ex.command)
			for name, kind := range exampleInputFlags {
				f := cmd.Flags().Lookup(name)
				if f == nil || !f.Changed || (name == "dir" && path == "karta argo export") {
					continue
				}
				values := []string{f.Value.String()}
				if sv, ok := f.Value.(interface{ GetSlice() []string }); ok {
					values = sv.GetSlice()
				}
				for _, v := range values {
					checkExamplePath(t, ex.command, "--"+name, v, kind)
				}
			}
			if kind, ok := exampleArgs[path]; ok {
				for _, a := range cmd.Flags().Args() {
					checkExamplePath(t, ex.command, "an argument", a, kind)
				}
			}
			// Any other word that looks like a file of the repository.
			for _, w := range rest {
				if strings.Contains(w, "/") && (strings.HasSuffix(w, ".yaml") || strings.HasSuffix(w, ".lua") || strings.HasSuffix(w, ".json")) {
					checkExamplePath(t, ex.command, "a word", w, "file")
				}
			}
			for name, why := range exampleOutsideRepo {
				if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
					t.Logf("%s: --%s is not checked: %s", ex.command, name, why)
				}
			}
			if reason := notRun(ex, cmd); reason != "" {
				t.Logf("%s: not run: %s", ex.command, reason)
				continue
			}
			t.Run(ex.command, func(t *testing.T) {
				_, stderr, code := runCLI(t, "", ex.args...)
				assert.Equal(t, exitOK, code, "%s\n%s", ex.command, stderr)
			})
			ran++
		}
	}
	assert.GreaterOrEqual(t, ran, 25, "the examples that can run ran")
}

// notRun says why an example does not run here, "" when it does.
func notRun(ex exampleLine, cmd *cobra.Command) string {
	changed := func(name string) bool { f := cmd.Flags().Lookup(name); return f != nil && f.Changed }
	switch path := cmd.CommandPath(); {
	case ex.stdin:
		return "it reads standard input"
	case path == "karta serve" || path == "karta controller" || path == "karta studio" || path == "karta exporter":
		return "it serves until stopped"
	case path == "karta get", changed("live"), path == "karta describe" && len(cmd.Flags().Args()) > 0:
		return "it needs a cluster"
	case changed("update"), path == "karta argo export" && !changed("output"):
		return "it writes files"
	}
	return ""
}

// checkExamplePath fails when an example names an input that is not in
// the repository.
func checkExamplePath(t *testing.T, command, what, value, kind string) {
	t.Helper()
	if value == "-" {
		return
	}
	st, err := os.Stat(filepath.FromSlash(value))
	switch {
	case err == nil && kind == "dir" && !st.IsDir():
		t.Errorf("%s: %s %s is not a folder", command, what, value)
	case err == nil:
	case kind == "file or built-in":
		if _, ok, _ := builtin.Get(value); !ok {
			t.Errorf("%s: %s %s is neither a file of the repository nor a built-in", command, what, value)
		}
	default:
		t.Errorf("%s: %s %s does not exist in the repository", command, what, value)
	}
}
