package argo

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

func TestHealthWords(t *testing.T) {
	batch, serving := HealthWords(true), HealthWords(false)
	assert.Equal(t, "Progressing", batch[karta.StatusRunning])
	assert.Equal(t, "Healthy", serving[karta.StatusRunning])
	for _, st := range karta.StatusPrecedence {
		assert.NotEmpty(t, batch[st], st)
		assert.NotEmpty(t, serving[st], st)
	}
	_, ok := batch[karta.StatusUndefined]
	assert.False(t, ok, "Undefined has no word: no assessment")
}

func TestHealthMessage(t *testing.T) {
	s := func(v string) *string { return &v }
	assert.Equal(t, "", HealthMessage(nil))
	assert.Equal(t, "b", HealthMessage([]interpreter.Condition{{Type: "A", Status: s("True"), Message: s("a")}, {Type: "B", Status: s("True"), Message: s("b")}, {Type: "C", Status: s("False"), Message: s("c")}}))
	assert.Equal(t, "c", HealthMessage([]interpreter.Condition{{Type: "A", Status: s("False"), Message: s("a")}, {Type: "C", Status: s("False"), Message: s("c")}, {Type: "D", Status: s("True"), Message: s("")}}))
}

func TestExportArgoRefusesAStatusOverride(t *testing.T) {
	ks, err := karta.LoadFile(filepath.Join("..", "builtin", "kartas", "jobset.yaml"))
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{Scripts: []interpreter.Script{{Name: "status.lua", Source: "function InterpretStatus(obj)\n  return {status = 'Running'}\nend\n"}}})
	require.NoError(t, err)
	_, err = ExportProgram(p)
	var ee *interpreter.ExportError
	require.True(t, errors.As(err, &ee), "got %v", err)
	assert.Equal(t, "Argo CD", ee.Target)
	assert.True(t, strings.Contains(err.Error(), "cannot export to Argo CD: ") && strings.Contains(err.Error(), "overrides InterpretStatus, which the Argo CD export cannot carry"), err.Error())
}
