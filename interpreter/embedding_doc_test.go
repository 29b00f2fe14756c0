package interpreter_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/embedding.md shows the examples of this package and of package
// object verbatim, so that its code is compiled, run and its output
// checked by go test: every Go block of the page must be in one of them.
func TestEmbeddingDocIsTheExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/embedding.md")
	require.NoError(t, err)
	var sources []string
	for _, f := range []string{"example_test.go", "../object/example_test.go"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		sources = append(sources, string(b))
	}
	examples := strings.Join(sources, "\n")
	blocks := strings.Split(string(doc), "```go\n")[1:]
	require.GreaterOrEqual(t, len(blocks), 4)
	for _, b := range blocks {
		code := b[:strings.Index(b, "```")]
		first, _, _ := strings.Cut(code, "\n")
		assert.Contains(t, examples, code, "docs/embedding.md shows code that is not an example of interpreter or object (%s)", first)
		assert.Contains(t, code, "func ", "each block is a whole function")
	}
	// The README's excerpt is a part of one.
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	blocks = strings.Split(string(readme), "```go\n")[1:]
	require.NotEmpty(t, blocks)
	for _, b := range blocks {
		code := b[:strings.Index(b, "```")]
		assert.Contains(t, examples, code, "the README shows code that is not part of an example of interpreter or object")
	}
}
