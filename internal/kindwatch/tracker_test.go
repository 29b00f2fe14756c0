package kindwatch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
)

// NewTracker refuses a consumer without its clients, mapper or registry.
func TestNewTrackerNeedsItsClients(t *testing.T) {
	c := newFakeCluster(t)
	mapper := meta.NewDefaultRESTMapper(nil)
	reg := interpreter.NewRegistry()
	for _, tc := range []struct {
		name string
		new  func() (*Tracker, error)
		want string
	}{
		{"dynamic", func() (*Tracker, error) { return NewTracker(nil, c.meta, mapper, reg, nil, Options{}) }, "no dynamic client"},
		{"metadata", func() (*Tracker, error) { return NewTracker(c.dyn, nil, mapper, reg, nil, Options{}) }, "no metadata client"},
		{"mapper", func() (*Tracker, error) { return NewTracker(c.dyn, c.meta, nil, reg, nil, Options{}) }, "no REST mapper"},
		{"registry", func() (*Tracker, error) { return NewTracker(c.dyn, c.meta, mapper, nil, nil, Options{}) }, "no registry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.new()
			assert.EqualError(t, err, tc.want)
		})
	}
}

// A tracker on shared informers watches its kinds on them: a kind two
// trackers want is one informer; Update starts what is new, tells of what
// is gone, and its first watches are the set's Initial, which Synced
// waits for; End stops the tracker's watches, not the other's.
func TestTrackersShareInformers(t *testing.T) {
	c := newFakeCluster(t)
	mapper := meta.NewDefaultRESTMapper(nil)
	reg := interpreter.NewRegistry()
	a, err := NewTracker(c.dyn, c.meta, mapper, reg, c.inf, Options{})
	require.NoError(t, err)
	b, err := NewTracker(c.dyn, c.meta, mapper, reg, c.inf, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tr := range []*Tracker{a, b} {
		tr.Begin(ctx, func(next *Set) { next.Pods = c.inf.Watch(Pods, true, 0, newRecorder().handler()) })
		assert.False(t, tr.Load().Synced(), "nothing discovered yet")
	}
	start := func(k Kind, root bool) *Watch { return c.inf.Watch(k, root, 0, newRecorder().handler()) }
	var gone []schema.GroupKind
	removed := func(w *Watch, _ bool) {
		gone = append(gone, w.GVK.GroupKind())
		w.Stop()
	}
	roots := map[schema.GroupKind]Kind{deployments.GVK.GroupKind(): deployments}
	owners := map[schema.GroupKind]Kind{replicaSets.GVK.GroupKind(): replicaSets}
	setA := a.Update(roots, owners, start, removed)
	setB := b.Update(map[schema.GroupKind]Kind{}, owners, start, removed)
	require.Len(t, setA.Initial, 2)
	require.Len(t, setB.Initial, 1)
	require.Eventually(t, func() bool { return a.Load().Synced() && b.Load().Synced() }, waitFor, tick)
	c.inf.mu.Lock()
	assert.Len(t, c.inf.entries, 3, "pods, Deployments, ReplicaSets: one informer each")
	assert.Len(t, c.inf.entries[replicaSets.GVR].users, 2)
	c.inf.mu.Unlock()
	assert.Equal(t, 1, lists(c.dyn.Actions(), replicaSets.GVR)+lists(c.meta.Actions(), replicaSets.GVR), "one list of ReplicaSets")

	setA = a.Update(roots, map[schema.GroupKind]Kind{}, start, removed)
	assert.Equal(t, []schema.GroupKind{replicaSets.GVK.GroupKind()}, gone)
	assert.Empty(t, setA.Owners)
	assert.Len(t, setA.Initial, 2, "Initial stays the first discovery's")

	cancel()
	a.End()
	assert.Nil(t, a.Update(roots, owners, start, removed), "no Update once the run has ended")
	c.inf.mu.Lock()
	defer c.inf.mu.Unlock()
	assert.Len(t, c.inf.entries, 2, "b's watches of pods and ReplicaSets stay")
}
