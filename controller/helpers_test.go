package controller

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
)

// The kinds of the example Kartas.
var (
	trainJobGVK   = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "TrainJob"}
	pyTorchJobGVK = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}
)

// waitFor is how long the tests wait for the controller: generous, the
// machine is shared.
const waitFor = 60 * time.Second

const tick = 20 * time.Millisecond

// readYAML reads a repository file (relative to the repo root) as an
// object.
func readYAML(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	return testobj.Read(t, filepath.Join("..", path))
}

// kartaObject reads an example Karta as the API server would return it:
// named name, with a uid, generation 1 and the given creation time.
func kartaObject(t *testing.T, path, name string, created time.Time) *unstructured.Unstructured {
	t.Helper()
	obj := readYAML(t, path)
	obj.SetName(name)
	obj.SetUID(types.UID("uid-" + name))
	obj.SetGeneration(1)
	obj.SetResourceVersion("")
	obj.SetCreationTimestamp(metav1.NewTime(created))
	return obj
}

// fakeCluster is a fake dynamic client that counts status writes.
type fakeCluster struct {
	*dynamicfake.FakeDynamicClient
	statusWrites atomic.Int64
}

func newFakeCluster(objs ...runtime.Object) *fakeCluster {
	listKinds := map[schema.GroupVersionResource]string{
		KartaResource:  "KartaList",
		LegacyResource: "ResourceInterfaceList",
	}
	f := &fakeCluster{FakeDynamicClient: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)}
	f.PrependReactor("update", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			f.statusWrites.Add(1)
		}
		return false, nil, nil // the tracker does the update
	})
	return f
}

// kartas is the client of the kartas resource.
func (f *fakeCluster) get(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := f.Resource(KartaResource).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return obj
}

func (f *fakeCluster) create(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	_, err := f.Resource(KartaResource).Create(context.Background(), obj, metav1.CreateOptions{})
	require.NoError(t, err)
}

// update replaces a Karta's spec with obj's, as an edit would: the
// generation goes up (the fake does not do it).
func (f *fakeCluster) updateSpec(t *testing.T, name string, from *unstructured.Unstructured) {
	t.Helper()
	cur := f.get(t, name)
	cur.Object["spec"] = from.Object["spec"]
	cur.SetGeneration(cur.GetGeneration() + 1)
	_, err := f.Resource(KartaResource).Update(context.Background(), cur, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func (f *fakeCluster) delete(t *testing.T, name string) {
	t.Helper()
	require.NoError(t, f.Resource(KartaResource).Delete(context.Background(), name, metav1.DeleteOptions{}))
}

// condition returns a Karta's condition of a type, nil when absent.
func (f *fakeCluster) condition(t *testing.T, name, typ string) *metav1.Condition {
	t.Helper()
	return meta.FindStatusCondition(readStatus(f.get(t, name)).Conditions, typ)
}

// waitCondition waits until a Karta's condition has the status and reason
// for its current generation, and returns it.
func (f *fakeCluster) waitCondition(t *testing.T, name, typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	require.Eventually(t, func() bool {
		obj := f.get(t, name)
		c := meta.FindStatusCondition(readStatus(obj).Conditions, typ)
		if c == nil || c.Status != status || c.Reason != reason || c.ObservedGeneration != obj.GetGeneration() {
			return false
		}
		got = *c
		return true
	}, waitFor, tick, "%s: condition %s=%s (%s)", name, typ, status, reason)
	return got
}

// startController runs a controller over f until the test ends and waits
// for it to sync.
func startController(t *testing.T, f *fakeCluster, reg *interpreter.Registry, opts Options) *Controller {
	t.Helper()
	c, err := New(f, reg, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, c.Run(ctx)) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	require.Eventually(t, c.HasSynced, waitFor, tick)
	return c
}

// programName is the name of the Program registered for a kind, "" when
// none.
func programName(reg *interpreter.Registry, gvk schema.GroupVersionKind) string {
	p, ok := reg.Get(gvk)
	if !ok {
		return ""
	}
	return p.Name()
}
