package karmada

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/interpreter"
)

// TestGetComponentsCountsAsWorkloadReplicas: the replicas of Karmada's
// GetComponents for a Karta are the Program's own workload-wide counts
// (Program.WorkloadReplicas, what karta get and describe show), on every
// example of every built-in, so there is one rule for the count.
func TestGetComponentsCountsAsWorkloadReplicas(t *testing.T) {
	files, err := filepath.Glob("../builtin/kartas/*.yaml")
	require.NoError(t, err)
	ctx := context.Background()
	compared := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			p := progCompile(t, progKartaFile(t, f), interpreter.Options{})
			for _, obj := range exampleObjects(t, name, p) {
				comps, cerr := ForProgram(p).GetComponents(ctx, obj)
				reps, rerr := p.WorkloadReplicas(ctx, obj)
				if p.Overridden(interpreter.HookGetComponents) || cerr != nil {
					continue // a script's own answer, or a Karmada naming rule
				}
				require.NoError(t, rerr, obj.GetName())
				require.Len(t, reps, len(comps), obj.GetName())
				for i := range comps {
					assert.EqualValues(t, comps[i].Replicas, reps[i].Replicas, "%s: %s", obj.GetName(), comps[i].Name)
				}
				compared++
			}
		})
	}
	assert.Greater(t, compared, 50, "examples compared")
}
