package exampledir

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStates(t *testing.T) {
	got, err := States(filepath.Join("..", "..", "examples", "pytorchjob"))
	require.NoError(t, err)
	var names []string
	for _, f := range got {
		names = append(names, filepath.Base(f))
	}
	assert.Equal(t, []string{"completed.yaml", "created.yaml", "failed.yaml", "kueue-podsets.yaml", "restarting.yaml", "running.yaml", "suspended.yaml"}, names)
	for base, want := range map[string]bool{"running.yaml": true, "pods.yaml": false, "revisions.yaml": false, "revisions-typed.yaml": false, "pods-leader-ready.yaml": false,
		"karta_test.yaml": false, "crd.yaml": false, "README.md": false} {
		assert.Equal(t, want, IsState(base), base)
	}
}
