package object

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/kartalua/karta/internal/yamlerr"
)

// Inputs whose node tree would grow far faster than their text are refused
// by a scan before the YAML library builds it.
func TestDecodeBoundsValuesAndDocuments(t *testing.T) {
	for name, data := range map[string]string{
		"10 MB of empty objects": "[" + strings.Repeat("{},", 3_300_000) + "{}]",
		"a flow list of numbers": "a: [" + strings.Repeat("1,", MaxValues/2) + "1]",
		"a block list":           "a:\n" + strings.Repeat("- a\n", MaxValues/2),
		"many documents":         strings.Repeat("a: b\n---\n", MaxDocuments+1),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(data), "big.yaml")
			var de *DecodeError
			require.True(t, errors.As(err, &de), "a *DecodeError: %v", err)
			assert.Equal(t, "big.yaml", de.Source)
			assert.Contains(t, err.Error(), "more than the limit")
		})
	}
	docs, err := Decode([]byte(strings.Repeat("a: b\n---\n", MaxDocuments-1)), "many.yaml")
	require.NoError(t, err)
	assert.Len(t, docs, MaxDocuments-1)
}

// countValues bounds the nodes the YAML library builds (twice the
// separators plus one), for every shape.
func TestCountValuesIsAnUpperBound(t *testing.T) {
	for _, src := range []string{"{}", "[]", "a: 1", "[a]", "[[[[a]]]]", "{a: {b: {c: [1, 2]}}}", "a:\n  b:\n  - c\n  - {d: e}\n", "? a\n: b\n", "a: &x [1]\nb: *x\n"} {
		docs, err := Decode([]byte(src), "x.yaml")
		if err != nil {
			continue // a document that is not a map
		}
		nodes := 0
		for _, d := range docs {
			nodes += countNodes(d.node)
		}
		assert.LessOrEqual(t, nodes, yamlerr.CountValues([]byte(src)), src)
	}
}

// Every object file of the repository is far inside the limits.
func TestRealFilesWithinValueLimits(t *testing.T) {
	most, where := 0, ""
	require.NoError(t, filepath.WalkDir("../examples", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := yamlerr.CountValues(data); n > most {
			most, where = n, path
		}
		assert.Less(t, yamlerr.CountDocuments(data), MaxDocuments/100, path)
		return nil
	}))
	t.Logf("the largest example holds at most %d values (%s)", most, where)
	assert.Less(t, most, MaxValues/20)
}

// countNodes counts the nodes of a tree as the YAML library built it.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}
