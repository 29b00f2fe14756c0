package interpreter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAbsentComponentsAreNotEvaluated: GetPodSpecs skips the programs of a
// component whose instanceIdPath gives no id when each of them begins
// with the id's guard (guardedByIDs). Every built-in's every example state
// gets the answer (or the error) it gets with every program run, and the
// guarded kinds run fewer evaluations.
func TestAbsentComponentsAreNotEvaluated(t *testing.T) {
	ctx := context.Background()
	guarded := map[string]bool{}
	for _, name := range builtinNames(t) {
		dk := directKindOf(t, name)
		k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", name+".yaml"))
		p := progCompile(t, k, Options{})
		all := progCompile(t, k, Options{})
		for _, c := range all.model.comps {
			if c.emptyWithoutIDs {
				guarded[name+"/"+c.c.Name] = true
			}
			c.emptyWithoutIDs = false
		}
		for i, st := range dk.states {
			count := func(p *Program) (*PodSpecs, error, int) {
				ev := p.newEvaluator(ctx, nil)
				res, err := p.podSpecs(ctx, ev, st.Object)
				n := ev.evals
				return res, ev.finish(err), n
			}
			got, gotErr, gotEvals := count(p)
			want, wantErr, wantEvals := count(all)
			require.Equal(t, wantErr, gotErr, "%s state %d", name, i)
			assert.Equal(t, want, got, "%s state %d", name, i)
			assert.LessOrEqual(t, gotEvals, wantEvals+len(p.model.comps), "%s state %d: evaluations", name, i)
		}
	}
	for _, tc := range []struct {
		comp    string
		guarded bool
	}{
		{"llminferenceservice/main", true},
		{"llminferenceservice/prefill-worker", true},
		{"milvus/proxy", true},
		// Its views begin at the object, not at .spec.transformer.
		{"inferenceservice/transformer", false},
		// No instanceIdPath: one instance, always.
		{"pytorchjob/master", false},
		// Its ids iterate: no literal after the guard.
		{"jobset/replicatedjob", false},
		// Its ids read only references (idsFromReferences).
		{"trainjob/job", true},
	} {
		assert.Equal(t, tc.guarded, guarded[tc.comp], tc.comp)
	}
}

// TestAbsentComponentsSaveEvaluations: the running LLMInferenceService
// (no worker, no prefill) runs its absent components' instance ids only.
func TestAbsentComponentsSaveEvaluations(t *testing.T) {
	ctx := context.Background()
	dk := directKindOf(t, "llminferenceservice")
	k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", "llminferenceservice.yaml"))
	p := progCompile(t, k, Options{})
	ev := p.newEvaluator(ctx, nil)
	_, err := p.podSpecs(ctx, ev, dk.running.Object)
	evals := ev.evals
	require.NoError(t, ev.finish(err))
	// 74 with every program run, 41 when a present component's ids were
	// run twice (once for the guard, once for its instances); evaluations
	// are exact, not timed.
	assert.Equal(t, 38, evals, "evaluations of one GetPodSpecs")
}

// TestIDsFromReferencesInShape: the rule that a component's ids come from
// references alone is decided once, in the model, and handed to the
// exports through ComponentShape (luaexport's NoInstances requires it):
// among the built-ins only trainjob's job has it.
func TestIDsFromReferencesInShape(t *testing.T) {
	var got []string
	for _, name := range builtinNames(t) {
		p := progCompile(t, progKartaFile(t, filepath.Join("..", "builtin", "kartas", name+".yaml")), Options{})
		for i, c := range p.describeModel().Components {
			assert.Equal(t, p.model.comps[i].idsFromRefs, c.IDsFromReferences, "%s/%s", name, c.Name)
			if c.IDsFromReferences {
				got = append(got, name+"/"+c.Name)
			}
		}
	}
	assert.Equal(t, []string{"trainjob/job"}, got)
}
