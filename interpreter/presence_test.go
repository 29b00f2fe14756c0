package interpreter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPresenceProgramsAnswerPresence: a component whose spec path has a
// presence program (RayJob's submitter builds its default template)
// resolves, for the gang hooks, the instances that reading the template
// itself resolves: the same ids, the same presence, the same error — on
// every example state of every built-in and on their broken variants.
func TestPresenceProgramsAnswerPresence(t *testing.T) {
	ctx := context.Background()
	with := map[string]bool{}
	for _, name := range builtinNames(t) {
		dk := directKindOf(t, name)
		k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", name+".yaml"))
		p := progCompile(t, k, Options{})
		var states []map[string]any
		for _, st := range dk.states {
			states = append(states, st.Object)
			for _, b := range brokenVariants(t, st) {
				states = append(states, b.Object)
			}
		}
		for _, c := range p.model.comps {
			if c.spec == nil || c.spec.presence == nil {
				continue
			}
			with[name+"/"+c.c.Name] = true
			for i, obj := range states {
				resolve := func(read instanceReading) ([]instance, error) {
					ev := p.newEvaluator(ctx, nil)
					insts, err := p.model.instancesInto(ctx, ev, c, obj, nil, read)
					return insts, ev.finish(err)
				}
				want, wantErr := resolve(everyInstancePath)
				got, gotErr := resolve(presenceOnly)
				require.Equal(t, wantErr, gotErr, "%s/%s state %d", name, c.c.Name, i)
				require.Len(t, got, len(want), "%s/%s state %d", name, c.c.Name, i)
				for j := range want {
					assert.Equal(t, want[j].id, got[j].id, "%s/%s state %d", name, c.c.Name, i)
					assert.Equal(t, want[j].present, got[j].present, "%s/%s state %d instance %d", name, c.c.Name, i, j)
				}
			}
		}
	}
	assert.True(t, with["rayjob/submitter"], "RayJob's default submitter template is read for presence: %v", with)
}

// TestPresenceBuildsNoSubmitter: RayJob's PlacePod reads the submitter's
// presence without building its default template (the running example
// names no submitterPodTemplate).
func TestPresenceBuildsNoSubmitter(t *testing.T) {
	ctx := context.Background()
	dk := directKindOf(t, "rayjob")
	k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", "rayjob.yaml"))
	p := progCompile(t, k, Options{})
	sub := p.model.byName["submitter"]
	require.NotNil(t, sub.spec.presence)
	obj := dk.running.Object
	read := func(r instanceReading) float64 {
		return testing.AllocsPerRun(50, func() {
			ev := p.newEvaluator(ctx, nil)
			insts, err := p.model.instancesInto(ctx, ev, sub, obj, make([]instance, 0, 1), r)
			require.NoError(t, ev.finish(err))
			require.Len(t, insts, 1)
			require.True(t, insts[0].present)
		})
	}
	assert.Less(t, read(presenceOnly), read(everyInstancePath), "the template is not built")
}
