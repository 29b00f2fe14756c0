package jqdirect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// pathExprs are the shapes of Karta paths (the built-ins' spec, metadata
// and fragment paths among them) and the edges of path mode.
var pathExprs = []string{
	`.spec.replicatedJobs[].template.spec.template`, `.spec.pytorchReplicaSpecs.Master.template`,
	`.spec | select(.worker != null) | .labels`, `.spec.prefill | select(. != null and .worker != null) | .annotations`,
	`.spec | select(.worker != null) | (.template // .worker).schedulerName`,
	`.spec.router.scheduler | select(. != null and .pool.ref == null) | .template.affinity.podAffinity`,
	`.spec.leaderWorkerTemplate | (.leaderTemplate // .workerTemplate)`, `.a[] | select(.x == 1)`,
	`.a[].x`, `.m[]`, `(.a, .b)`, `.a // .b`, `(.a, .b) // .m`, `.zz // .yy`, `select(.n > 1)`,
	`.spec.replicatedJobs[]?.template.spec.template`, `.spec.replicatedJobs[]?.name`, `.a[]?`, `.a?`, `.a.b?`, `.s[]?`, `.n.x?`,
	`.spec.predictor | first((.model | select(. != null)), (.[]? | select(type == "object" and has("storageUri"))), .model)`,
	`if .containerSet != null then .containerSet.containers else .sidecars end`, `if .x then .a end`,
	`if .n > 1 then .a elif .n == 1 then .b else .m end`, `first(.a[]?)`, `first(empty)`, `first(.a, .b)`,
	`.[0]`, `.[2]`, `.arr[1]`, `.arr[0][0]`, `.a.b.c`, `.[]`, `.[] | .x`, `.x | select(.)`,
	// Outside the path subset: decline (gojq gives locations or errors).
	`.[-1]`, `1`, `.n + 1`, `[.a]`, `.a // 1`, `{}`,
}

// pathInputs add objects of the built-ins' shapes to directInputs.
var pathInputs = []string{
	`{"spec": {"predictor": {"model": null, "x": {"storageUri": "s"}, "y": 3}}}`,
	`{"spec": {"predictor": {"model": {"storageUri": "m"}}}}`,
	`{"spec": {"predictor": "flat"}}`,
	`{"containerSet": {"containers": [{"name": "a"}]}, "sidecars": [{"name": "s"}]}`,
	`{"containerSet": null, "sidecars": [{"name": "s"}], "n": 1, "b": {"c": 1}}`,
	`{"spec": {"replicatedJobs": null, "worker": {"labels": {"a": "b"}}, "template": {"schedulerName": "x"}}}`,
	`{"spec": {"replicatedJobs": [], "worker": 0, "prefill": {"worker": {}}}}`,
}

// TestPathsAgreeWithGojq: where Paths gives locations, gojq's path()
// gives the same ones and EXPR the same values; where gojq fails, Paths
// declines.
func TestPathsAgreeWithGojq(t *testing.T) {
	agreed, declined := 0, 0
	for _, expr := range append(pathExprs, directExprs...) {
		q, err := gojq.Parse(expr)
		require.NoError(t, err, expr)
		d := Compile(q)
		if d == nil {
			continue
		}
		pq, err := gojq.Parse("path(" + expr + ")")
		require.NoError(t, err)
		pathCode, err := gojq.Compile(pq)
		require.NoError(t, err)
		valueCode, err := gojq.Compile(q)
		require.NoError(t, err)
		for _, text := range append(pathInputs, directInputs...) {
			for form, in := range decodeThreeWays(t, text) {
				var s Scratch
				locs, vals, ok := d.Paths(in, &s)
				s.Release()
				if !ok {
					declined++
					continue
				}
				want, wantErr := gojqOutputs(pathCode, in)
				require.NoError(t, wantErr, "path(%s) on %s (%s): Paths gave %v where gojq fails", expr, text, form, locs)
				got := make([]any, len(locs))
				for i, l := range locs {
					got[i] = l
					for _, e := range l {
						switch e.(type) {
						case string, int:
						default:
							t.Fatalf("path(%s): location element %T", expr, e)
						}
					}
				}
				assert.Equal(t, normalJSON(t, want), normalJSON(t, got), "path(%s) on %s (%s)", expr, text, form)
				wantVals, err := gojqOutputs(valueCode, in)
				require.NoError(t, err)
				assert.Equal(t, normalJSON(t, wantVals), normalJSON(t, vals), "%s on %s (%s)", expr, text, form)
				agreed++
			}
		}
	}
	assert.Greater(t, agreed, 400)
	assert.Greater(t, declined, 100)
}

// TestPathsShareNoBacking: locations built from one prefix are separate
// slices, so that a caller may append to one.
func TestPathsShareNoBacking(t *testing.T) {
	q, err := gojq.Parse(`.a[].x`)
	require.NoError(t, err)
	var s Scratch
	locs, _, ok := Compile(q).Paths(map[string]any{"a": []any{map[string]any{}, map[string]any{}}}, &s)
	s.Release()
	require.True(t, ok)
	require.Len(t, locs, 2)
	_ = append(locs[0], "y")
	assert.Equal(t, []any{"a", 1, "x"}, locs[1])
	assert.Equal(t, []any{"a", 0, "x"}, locs[0])
}

// TestPathsAreBounded: iteration is charged to the step budget.
func TestPathsAreBounded(t *testing.T) {
	xs := make([]any, directStepBudget+1)
	q, err := gojq.Parse(`.x[]`)
	require.NoError(t, err)
	var s Scratch
	_, _, ok := Compile(q).Paths(map[string]any{"x": xs}, &s)
	s.Release()
	assert.False(t, ok)
}
