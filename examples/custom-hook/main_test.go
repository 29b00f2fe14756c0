package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's console block is the program's real output: the test reads
// the expected text from it, so the two cannot drift apart.
func TestCustomHook(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, block, found := strings.Cut(string(readme), "```console\n$ go run ./examples/custom-hook\n")
	require.True(t, found, "README.md shows the program's run in a console block")
	want, _, found := strings.Cut(block, "```")
	require.True(t, found, "the console block ends")

	out, err := run(context.Background(), ".")
	require.NoError(t, err)
	assert.Equal(t, want, out)
}
