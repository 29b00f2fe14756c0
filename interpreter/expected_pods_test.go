package interpreter_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/internal/exampledir"
	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

// TestExpectedPodsCountsAsWorkloadReplicas: ExpectedPods, which takes the
// items' own replicas from GetPodSpecs' answer and evaluates only the
// scaled ancestors' paths, gives WorkloadReplicas' count of each item's
// component and instance (the item's own replicas where that fails), on
// every state of every built-in's examples.
func TestExpectedPodsCountsAsWorkloadReplicas(t *testing.T) {
	all, err := builtin.All()
	require.NoError(t, err)
	ctx := context.Background()
	compared, scaledAncestors := 0, 0
	for _, b := range all {
		p, err := b.Compile(interpreter.Options{})
		require.NoError(t, err)
		states, err := exampledir.States(filepath.Join("..", "examples", b.Name))
		require.NoError(t, err)
		for _, file := range states {
			obj := testobj.Read(t, file)
			specs, err := p.GetPodSpecs(ctx, obj)
			if err != nil {
				continue // a state GetPodSpecs refuses has no expected pods
			}
			wide := map[[2]string]int64{}
			reps, repErr := p.WorkloadReplicas(ctx, obj)
			for _, r := range reps {
				wide[[2]string{r.Component, r.Instance}] = r.Replicas
			}
			got := p.ExpectedPods(ctx, obj, specs)
			require.Len(t, got, len(specs.Items), file)
			for i, it := range specs.Items {
				if it.Scale == nil || it.Scale.Replicas == nil {
					assert.Nil(t, got[i], "%s: item %d", file, i)
					continue
				}
				want, ok := wide[[2]string{it.Component, it.Instance}]
				if !ok {
					want = *it.Scale.Replicas
				}
				if repErr == nil && want != *it.Scale.Replicas {
					scaledAncestors++
				}
				require.NotNil(t, got[i], "%s: item %d", file, i)
				assert.Equal(t, want, *got[i], "%s: %s/%s", file, it.Component, it.Instance)
				compared++
			}
		}
	}
	assert.Greater(t, compared, 100, "items compared")
	assert.Positive(t, scaledAncestors, "items whose count a scaled ancestor multiplies")
}
