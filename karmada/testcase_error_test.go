package karmada

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A test file's problems are placed as every input's are: the file alone
// when it holds one case, its document and first line among several.
func TestLoadTestCasesErrors(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{
		"name: a\noperation: [x]\n": "one.yaml: cannot unmarshal array into Go struct field TestCase.operation of type string",
		"name: a\noperation: InterpretHealth\n---\nname: b\noperation: [x]\n": "one.yaml:4: document 2: cannot unmarshal array",
		"name: a\n  operation: InterpretHealth\n":                             "one.yaml:2: invalid YAML: mapping values are not allowed in this context",
	} {
		file := filepath.Join(dir, "one.yaml")
		assert.NoError(t, os.WriteFile(file, []byte(text), 0o644))
		_, err := LoadTestCases(file)
		if assert.Error(t, err, text) {
			assert.Contains(t, err.Error(), filepath.Join(dir, want), text)
		}
	}
}
