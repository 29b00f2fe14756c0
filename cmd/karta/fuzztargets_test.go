package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMakeFuzzRunsEveryTarget: `make fuzz` runs the fuzz targets its
// FUZZ_TARGETS lists, one `go test -fuzz` per target, so a fuzz test left
// out of the list (a new parser's) is fuzzed by nobody. Every Fuzz
// function of the module is listed, and every listed one exists.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^FUZZ_TARGETS :=((?:.*\\\n)*.*)$`).FindSubmatch(makefile)
	require.NotNil(t, m, "the Makefile defines FUZZ_TARGETS")
	listed := strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " "))
	sort.Strings(listed)

	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w*)\(\w+ \*testing\.F\)`)
	var found []string
	root := filepath.Join("..", "..")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Other modules (test/helm, test/karmada, test/perf …) have
			// their own go.mod; `make fuzz` runs this module's targets.
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || fileExists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, f := range fuzzFunc.FindAllSubmatch(src, -1) {
			found = append(found, "./"+filepath.ToSlash(rel)+":"+string(f[1]))
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(found)
	assert.NotEmpty(t, found)
	assert.Equal(t, found, listed, "the Makefile's FUZZ_TARGETS and the module's fuzz tests")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
