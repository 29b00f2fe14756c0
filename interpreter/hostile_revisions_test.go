package interpreter

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/heapwatch"
	"github.com/kartalua/karta/luaapi"
)

// Revisions are charged before any runs (revise_charge.go): too many, or
// patches too large, end the call on a limit with the default limits,
// promptly, whichever path would have run them — and a script's call of
// the generated ReviseSpec is charged as the hook is.
func TestHostileRevisions(t *testing.T) {
	k := progKartaFile(t, "../builtin/kartas/pytorchjob.yaml")
	obj := progObjFile(t, "../examples/pytorchjob/running.yaml")[0]
	label := func(i int) Revision {
		return Revision{Component: "worker", Patch: map[string]any{"metadata": map[string]any{"labels": map[string]any{fmt.Sprintf("rev-%d", i): "x"}}}}
	}
	many := make([]Revision, 20000)
	for i := range many {
		many[i] = label(i)
	}
	// Each writes the one label, a value of its own: every pair conflicts.
	clash := make([]Revision, 3000)
	for i := range clash {
		clash[i] = Revision{Component: "worker", Patch: map[string]any{"metadata": map[string]any{"labels": map[string]any{"rev": fmt.Sprint(i)}}}}
	}
	big := map[string]any{}
	for i := range 300000 {
		big[fmt.Sprintf("k%d", i)] = "v"
	}
	large := []Revision{{Component: "worker", Patch: map[string]any{"metadata": map[string]any{"annotations": big}}}}

	for _, tc := range []struct {
		name     string
		script   string
		revs     []Revision
		conflict bool
	}{
		{"20,000 revisions", "", many, false},
		{"3,000 revisions that write one field", "", clash, true},
		{"a patch of 300,000 values", "", large, false},
		{"20,000 revisions through a script", "function ReviseSpec(obj, revisions) return karta.generated.ReviseSpec(obj, revisions) end", many, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts Options
			if tc.script != "" {
				opts.Scripts = []Script{{Name: "pass.lua", Source: tc.script}}
			}
			p := progCompile(t, k, opts)
			var err error
			cost := heapwatch.Measure(func() { _, err = p.ReviseSpec(context.Background(), obj, tc.revs) })
			heapwatch.AssertPrompt(t, cost, luaapi.DefaultTimeout)
			var le *luaapi.LimitError
			if tc.conflict {
				// Within the budget, and refused for its conflicts, of
				// which it names a few.
				require.ErrorContains(t, err, "more conflicting writes (only the first 20 are named)")
				assert.Equal(t, 21, strings.Count(err.Error(), "conflicting writes"))
			} else {
				require.ErrorAs(t, err, &le)
				assert.Contains(t, []luaapi.LimitKind{luaapi.KindInstructions, luaapi.KindMemory}, le.Kind, err.Error())
			}
			t.Logf("%v after %v (CPU %v)", err, cost.Wall, cost.CPU)

			// A reasonable call still runs.
			_, err = p.ReviseSpec(context.Background(), obj, many[:20])
			require.NoError(t, err)
		})
	}
}
