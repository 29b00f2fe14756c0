package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocCommandsExist covers the console blocks TestREADMEExamples cannot
// run: commands that need a cluster (`karta get -A --context prod`) or take
// minutes (`make bench`), shown without output. Each line must still be
// true: a karta command line parses (the command exists, its flags and
// their values are accepted), a make target is one the Makefile defines,
// and a path a command runs (a script, a package, a directory) exists.
func TestDocCommandsExist(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	checked := 0
	for _, block := range consoleBlocks(t) {
		for _, line := range strings.Split(block.text, "\n") {
			command, ok := strings.CutPrefix(line, "$ ")
			if !ok || strings.HasPrefix(command, "go run ./cmd/karta ") {
				continue // output, or run by TestREADMEExamples
			}
			command, _, _ = strings.Cut(command, "#")
			for _, part := range strings.Split(command, "&&") {
				if checkDocCommand(t, block.file, strings.Fields(part), string(makefile)) {
					checked++
				}
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 6, "the docs' commands were found")
}

// consoleBlock is the text of a console block (without its fences) of a
// Markdown file, named from the repository's root.
type consoleBlock struct{ file, text string }

// consoleBlocks are the console blocks of the README, docs/*.md and the
// examples' READMEs.
func consoleBlocks(t *testing.T) []consoleBlock {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	exampleDocs, err := filepath.Glob("../../examples/*/README.md")
	require.NoError(t, err)
	var blocks []consoleBlock
	for _, file := range append(append([]string{"../../README.md"}, docs...), exampleDocs...) {
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, block := range strings.Split(string(text), "```console\n")[1:] {
			blocks = append(blocks, consoleBlock{file: strings.TrimPrefix(file, "../../"), text: block[:strings.Index(block, "```")]})
		}
	}
	return blocks
}

// checkDocCommand checks one command of a doc's console block and reports
// whether it knew the command.
func checkDocCommand(t *testing.T, file string, argv []string, makefile string) bool {
	t.Helper()
	if len(argv) == 0 {
		return false
	}
	where := file + ": " + strings.Join(argv, " ")
	switch argv[0] {
	case "karta":
		root := newRootCmd(streams{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
		cmd, rest, err := root.Find(argv[1:])
		require.NoError(t, err, where)
		require.NotEqual(t, root, cmd, "%s: names a command", where)
		assert.NoError(t, cmd.ParseFlags(rest), where)
	case "make":
		for _, target := range argv[1:] {
			if strings.Contains(target, "=") {
				continue // a variable
			}
			defined := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).MatchString(makefile)
			assert.True(t, defined, "%s: the Makefile has no target %s", where, target)
		}
	case "go":
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "./") {
				_, err := os.Stat(filepath.Join("../..", strings.TrimSuffix(a, "/...")))
				assert.NoError(t, err, where)
			}
		}
	case "uptime", "eval":
		return false
	default:
		_, err := os.Stat(filepath.Join("../..", argv[0]))
		assert.NoError(t, err, "%s: the command is in the repository", where)
	}
	return true
}
