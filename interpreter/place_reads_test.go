package interpreter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestPlacementReadsWhatPlacementNeeds: the gang hooks evaluate the
// instances' ids and presence, the scale and minimum paths, and no
// fragment path (presenceOnly): a Milvus whose proxy affinity is a string
// fails GetPodSpecs (its affinity paths index the string) and is
// placed and ganged as the unbroken Milvus is.
func TestPlacementReadsWhatPlacementNeeds(t *testing.T) {
	ctx := context.Background()
	p := progCompile(t, progKartaFile(t, filepath.Join("..", "builtin", "kartas", "milvus.yaml")), Options{})
	dir := filepath.Join("..", "examples", "milvus")
	running := progObjFile(t, filepath.Join(dir, "running.yaml"))[0]
	pods := progObjFile(t, filepath.Join(dir, "pods.yaml"))
	require.NotEmpty(t, pods)
	broken := running.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(broken.Object, "none", "spec", "components", "proxy", "affinity"))

	_, err := p.GetPodSpecs(ctx, running)
	require.NoError(t, err)
	_, err = p.GetPodSpecs(ctx, broken)
	require.ErrorContains(t, err, "podAffinityPath")

	wantGangs, err := p.GetGangGroups(ctx, running, pods)
	require.NoError(t, err)
	gotGangs, err := p.GetGangGroups(ctx, broken, pods)
	require.NoError(t, err)
	assert.Equal(t, wantGangs, gotGangs)
	for _, pod := range pods {
		want, wantErr := p.PlacePod(ctx, running, pod)
		got, gotErr := p.PlacePod(ctx, broken, pod)
		assert.Equal(t, want, got, pod.GetName())
		assert.Equal(t, wantErr, gotErr, pod.GetName())
	}
	wantAll, err := p.PlacePods(ctx, running, pods)
	require.NoError(t, err)
	gotAll, err := p.PlacePods(ctx, broken, pods)
	require.NoError(t, err)
	assert.Equal(t, wantAll, gotAll)
}
