package kindwatch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

const (
	waitFor = 30 * time.Second // generous: the machine is shared
	tick    = 10 * time.Millisecond
)

var replicaSets = Kind{
	GVK:        schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	GVR:        schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"},
	Namespaced: true,
}

var deployments = Kind{
	GVK:        schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
	GVR:        schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
	Namespaced: true,
}

// fakeCluster is a dynamic and a metadata client that serve pods,
// ReplicaSets and Deployments, and the informers on them, run until the test ends.
type fakeCluster struct {
	dyn  *dynamicfake.FakeDynamicClient
	meta *metadatafake.FakeMetadataClient
	inf  *Informers
}

func newFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		Pods.GVR: "PodList", replicaSets.GVR: "ReplicaSetList", deployments.GVR: "DeploymentList"})
	ms := metadatafake.NewTestScheme()
	require.NoError(t, metav1.AddMetaToScheme(ms))
	meta := metadatafake.NewSimpleMetadataClient(ms)
	inf, err := NewInformers(dyn, meta, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		inf.Wait()
	})
	inf.Start(ctx)
	return &fakeCluster{dyn: dyn, meta: meta, inf: inf}
}

// lists counts the lists of gvr the client was asked for.
func lists(actions []clienttesting.Action, gvr schema.GroupVersionResource) int {
	n := 0
	for _, a := range actions {
		if a.GetVerb() == "list" && a.GetResource() == gvr {
			n++
		}
	}
	return n
}

// recorder is an event handler that records the names it was told of.
type recorder struct {
	mu    sync.Mutex
	names map[string]int
}

func newRecorder() *recorder { return &recorder{names: map[string]int{}} }

func (r *recorder) handler() cache.ResourceEventHandler {
	see := func(obj any) {
		if m, err := metaOf(obj); err == nil {
			r.mu.Lock()
			r.names[m.GetName()]++
			r.mu.Unlock()
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, obj any) { see(obj) }, DeleteFunc: see}
}

func (r *recorder) saw(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[name] > 0
}

func metaOf(obj any) (metav1.Object, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	return meta.Accessor(obj)
}

func pod(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "ml", "uid": name + "-uid"}}}
}

func replicaSet(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": name, "namespace": "ml", "uid": name + "-uid"},
		"spec":     map[string]any{"replicas": int64(2)}}}
}

// Two consumers' watches of the pods share one informer: one list, one
// cache, and each handler told of every change; the informer stops with
// the last watch, not the first.
func TestOneInformerPerResource(t *testing.T) {
	c := newFakeCluster(t)
	first, second := newRecorder(), newRecorder()
	w1 := c.inf.Watch(Pods, true, 0, first.handler())
	w2 := c.inf.Watch(Pods, true, 0, second.handler())
	require.Eventually(t, func() bool { return w1.Synced() && w2.Synced() }, waitFor, tick)

	_, err := c.dyn.Resource(Pods.GVR).Namespace("ml").Create(context.Background(), pod("a"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return first.saw("a") && second.saw("a") }, waitFor, tick, "both handlers told")
	assert.NotNil(t, w1.Get("ml", "a"))
	assert.NotNil(t, w2.Get("ml", "a"))
	assert.Equal(t, 1, lists(c.dyn.Actions(), Pods.GVR), "one list of the pods for both watches")

	w1.Stop()
	_, err = c.dyn.Resource(Pods.GVR).Namespace("ml").Create(context.Background(), pod("b"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return second.saw("b") }, waitFor, tick, "the informer runs on for the other watch")
	assert.False(t, first.saw("b"), "a stopped watch is told nothing")

	w2.Stop()
	c.inf.mu.Lock()
	defer c.inf.mu.Unlock()
	assert.Empty(t, c.inf.entries, "the informer stops with its last watch")
}

// A resource watched by its metadata, then whole by another consumer, is
// one informer, whole: the first watch reads the whole objects once the
// whole informer has synced, and is told of their changes from it.
func TestWholeWatchReplacesAMetadataOne(t *testing.T) {
	c := newFakeCluster(t)
	rs := replicaSet("web-1")
	_, err := c.dyn.Resource(replicaSets.GVR).Namespace("ml").Create(context.Background(), rs, metav1.CreateOptions{})
	require.NoError(t, err)
	pm := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ml", UID: "web-1-uid"}}
	_, err = c.meta.Resource(replicaSets.GVR).Namespace("ml").(metadatafake.MetadataClient).CreateFake(pm, metav1.CreateOptions{})
	require.NoError(t, err)

	owners := newRecorder()
	byMeta := c.inf.Watch(replicaSets, false, 0, owners.handler())
	require.Eventually(t, byMeta.Synced, waitFor, tick)
	require.IsType(t, &metav1.PartialObjectMetadata{}, byMeta.Get("ml", "web-1"))

	whole := c.inf.Watch(replicaSets, true, 0, newRecorder().handler())
	require.Eventually(t, func() bool {
		_, ok := byMeta.Get("ml", "web-1").(*unstructured.Unstructured)
		return ok && whole.Synced() && byMeta.Synced()
	}, waitFor, tick, "the metadata watch reads the whole informer's cache")
	c.inf.mu.Lock()
	require.Len(t, c.inf.entries, 1)
	e := c.inf.entries[replicaSets.GVR]
	assert.True(t, e.whole)
	assert.Len(t, e.users, 2)
	c.inf.mu.Unlock()

	_, err = c.dyn.Resource(replicaSets.GVR).Namespace("ml").Create(context.Background(), replicaSet("web-2"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return owners.saw("web-2") }, waitFor, tick, "the first watch is told of the whole informer's changes")
}
