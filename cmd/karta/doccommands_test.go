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

// TestDocCommandsExist covers the commands TestREADMEExamples cannot run:
// console blocks of commands that need a cluster (`karta get -A --context
// prod`) or take minutes (`make bench`), shown without output, and the sh
// blocks of the docs (commands to copy). Each must still be true: a karta
// command line parses (the command exists, its flags and their values are
// accepted), a make target is one the Makefile defines, and in a console
// block a path a command runs (a script, a package, a directory) exists.
// Other tools' commands in sh blocks (helm, kubectl, shell loops) are left
// to their own tools.
func TestDocCommandsExist(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	checked := 0
	check := func(file, line string, console bool) {
		line, _, _ = strings.Cut(line, "#")
		for _, and := range strings.Split(line, "&&") {
			for _, part := range strings.Split(and, "|") {
				if checkDocCommand(t, file, strings.Fields(part), string(makefile), console) {
					checked++
				}
			}
		}
	}
	for _, block := range docBlocks(t, "console") {
		for _, line := range strings.Split(block.text, "\n") {
			command, ok := strings.CutPrefix(line, "$ ")
			if !ok || strings.HasPrefix(command, "go run ./cmd/karta ") {
				continue // output, or run by TestREADMEExamples
			}
			check(block.file, command, true)
		}
	}
	for _, block := range docBlocks(t, "sh") {
		for _, line := range strings.Split(strings.ReplaceAll(block.text, "\\\n", " "), "\n") {
			check(block.file, line, false)
		}
	}
	assert.GreaterOrEqual(t, checked, 30, "the docs' commands were found")
}

// docBlock is the text of a fenced block (without its fences) of a
// Markdown file, named from the repository's root.
type docBlock struct{ file, text string }

// docBlocks are the blocks fenced as lang of the README, docs/*.md and the
// examples' READMEs.
func docBlocks(t *testing.T, lang string) []docBlock {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	exampleDocs, err := filepath.Glob("../../examples/*/README.md")
	require.NoError(t, err)
	var blocks []docBlock
	for _, file := range append(append([]string{"../../README.md"}, docs...), exampleDocs...) {
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, block := range strings.Split(string(text), "```"+lang+"\n")[1:] {
			blocks = append(blocks, docBlock{file: strings.TrimPrefix(file, "../../"), text: block[:strings.Index(block, "```")]})
		}
	}
	return blocks
}

// checkDocCommand checks one command of a doc's block and reports whether
// it knew the command; console is set for a console block, where every
// command must be karta's, make's, go's or a file of the repository (an sh
// block's are checked when they are karta's or make's).
func checkDocCommand(t *testing.T, file string, argv []string, makefile string, console bool) bool {
	t.Helper()
	if len(argv) == 0 {
		return false
	}
	where := file + ": " + strings.Join(argv, " ")
	if len(argv) > 2 && argv[0] == "go" && argv[1] == "run" && argv[2] == "./cmd/karta" {
		argv = append([]string{"karta"}, argv[3:]...)
	}
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
		if !console {
			return false // a recipe's go commands may run in another checkout
		}
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "./") {
				_, err := os.Stat(filepath.Join("../..", strings.TrimSuffix(a, "/...")))
				assert.NoError(t, err, where)
			}
		}
	default:
		if !console || argv[0] == "uptime" || argv[0] == "eval" {
			return false
		}
		_, err := os.Stat(filepath.Join("../..", argv[0]))
		assert.NoError(t, err, "%s: the command is in the repository", where)
	}
	return true
}
