package karmada

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunTestDir(t *testing.T) {
	report, err := RunTestDir(context.Background(), filepath.Join("testdata", "suite"))
	require.NoError(t, err)
	assert.Equal(t, "2 passed, 2 failed", report.Summary())
	require.Len(t, report.Failures, 2)

	misplaced := report.Failures[0]
	assert.Equal(t, "example.io/v1/Misplaced", misplaced.Kind)
	assert.Equal(t, "example.io/v1/Misplaced/testdata/interprethealth-test.yaml", misplaced.File)
	assert.Equal(t, "never runs", misplaced.Case)
	assert.Equal(t, `customization "misplaced": target kind Widget does not match the directory (Misplaced)`, misplaced.Message)

	broken := report.Failures[1]
	assert.Equal(t, "broken", broken.Customization)
	assert.Equal(t, "InterpretHealth", broken.Operation)
	assert.Contains(t, broken.Message, `customization "broken": spec.customizations.healthInterpretation.luaScript: karmada:broken/healthInterpretation: at EOF: syntax error`)
	assert.Equal(t, "FAIL example.io/v2/Broken [broken/InterpretHealth] \"cannot compile\" (example.io/v2/Broken/testdata/interprethealth-test.yaml)\n    "+broken.Message+"\n", broken.String())

	_, err = RunTestDir(context.Background(), filepath.Join("testdata", "no-such-dir"))
	assert.Error(t, err)
	_, err = RunTestDir(context.Background(), filepath.Join("testdata", "suite", "example.io", "v1", "Widget", "customizations.yaml"))
	assert.ErrorContains(t, err, "not a directory")
}
