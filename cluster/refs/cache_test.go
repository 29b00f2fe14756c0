package refs

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/testobj"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

var (
	runtimeGVK = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"}
	localGVK   = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainingRuntime"}
	trainJob   = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainJob"}
	podGVK     = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	widgetGVK  = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"} // not served
)

// env is a fake cluster serving the runtimes (the cluster-scoped one and
// the namespaced one), TrainJobs and pods.
type env struct {
	dyn    *dynamicfake.FakeDynamicClient
	mapper *meta.DefaultRESTMapper
	cache  *Cache
}

func resourceOf(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	return gvr
}

func newEnv(t *testing.T, objs ...*unstructured.Unstructured) *env {
	t.Helper()
	return newEnvWith(t, Options{}, objs...)
}

// newEnvWith is newEnv with the Cache's options.
func newEnvWith(t *testing.T, opts Options, objs ...*unstructured.Unstructured) *env {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	listKinds := map[schema.GroupVersionResource]string{}
	for gvk, scope := range map[schema.GroupVersionKind]meta.RESTScope{
		runtimeGVK: meta.RESTScopeRoot, localGVK: meta.RESTScopeNamespace, trainJob: meta.RESTScopeNamespace, podGVK: meta.RESTScopeNamespace,
	} {
		mapper.Add(gvk, scope)
		listKinds[resourceOf(gvk)] = gvk.Kind + "List"
	}
	rts := make([]runtime.Object, len(objs))
	for i, o := range objs {
		rts[i] = o
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, rts...)
	c, err := New(dyn, mapper, opts)
	require.NoError(t, err)
	return &env{dyn: dyn, mapper: mapper, cache: c}
}

// start starts the cache for the test's life and waits for its lists.
func (e *env) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e.cache.Start(ctx)
	wait, done := context.WithTimeout(ctx, 30*time.Second)
	defer done()
	require.True(t, e.cache.WaitForSync(wait), "the cache syncs")
}

func object(gvk schema.GroupVersionKind, ns, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID("uid-" + ns + "-" + name))
	u.SetLabels(lbls)
	return u
}

func controlled(u *unstructured.Unstructured, owner types.UID) *unstructured.Unstructured {
	yes := true
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: trainJob.GroupVersion().String(), Kind: trainJob.Kind, Name: "owner", UID: owner, Controller: &yes}})
	return u
}

func names(objs []*unstructured.Unstructured) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

func TestResolve(t *testing.T) {
	e := newEnv(t,
		object(runtimeGVK, "", "torch", nil),
		object(localGVK, "team-a", "local", nil),
		object(localGVK, "team-b", "local", nil),
		object(podGVK, "team-a", "b", map[string]string{"app": "x"}),
		object(podGVK, "team-a", "a", map[string]string{"app": "x"}),
		object(podGVK, "team-a", "c", map[string]string{"app": "y"}),
		object(podGVK, "team-b", "d", map[string]string{"app": "x"}),
		controlled(object(podGVK, "team-a", "owned-2", map[string]string{"app": "x"}), "job-uid"),
		controlled(object(podGVK, "team-a", "owned-1", map[string]string{"app": "z"}), "job-uid"),
		controlled(object(podGVK, "team-b", "owned-elsewhere", map[string]string{"app": "x"}), "job-uid"),
	)
	e.cache.Watch([]schema.GroupVersionKind{runtimeGVK, localGVK, podGVK})
	e.start(t)

	sel := labels.SelectorFromSet(labels.Set{"app": "x"})
	tests := []struct {
		name string
		q    interpreter.ReferenceQuery
		want []string
	}{
		{"cluster-scoped lookup", interpreter.ReferenceQuery{GVK: runtimeGVK, Shape: "lookup", Name: "torch"}, []string{"/torch"}},
		{"cluster-scoped lookup ignores a namespace", interpreter.ReferenceQuery{GVK: runtimeGVK, Shape: "lookup", Namespace: "team-a", Name: "torch"}, []string{"/torch"}},
		{"namespaced lookup", interpreter.ReferenceQuery{GVK: localGVK, Shape: "lookup", Namespace: "team-b", Name: "local"}, []string{"team-b/local"}},
		{"missing object", interpreter.ReferenceQuery{GVK: runtimeGVK, Shape: "lookup", Name: "absent"}, []string{}},
		{"another namespace's object is not found", interpreter.ReferenceQuery{GVK: localGVK, Shape: "lookup", Namespace: "team-c", Name: "local"}, []string{}},
		{"list by selector, sorted, in the namespace", interpreter.ReferenceQuery{GVK: podGVK, Shape: "list", Namespace: "team-a", Selector: sel},
			[]string{"team-a/a", "team-a/b", "team-a/owned-2"}},
		{"list by owner, in the namespace", interpreter.ReferenceQuery{GVK: podGVK, Shape: "list", Namespace: "team-a", OwnerUID: "job-uid"},
			[]string{"team-a/owned-1", "team-a/owned-2"}},
		{"list by both", interpreter.ReferenceQuery{GVK: podGVK, Shape: "list", Namespace: "team-a", Selector: sel, OwnerUID: "job-uid"},
			[]string{"team-a/owned-2"}},
		{"empty list", interpreter.ReferenceQuery{GVK: podGVK, Shape: "list", Namespace: "team-z", Selector: sel}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.cache.Resolve(context.Background(), tc.q, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, names(got))
		})
	}
}

func TestResolveUnwatchedUnservedUnsynced(t *testing.T) {
	e := newEnv(t, object(runtimeGVK, "", "torch", nil))
	e.cache.Watch([]schema.GroupVersionKind{runtimeGVK, widgetGVK})

	// Before Start: watched, nothing listed yet.
	_, err := e.cache.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: runtimeGVK, Shape: "lookup", Name: "torch"}, nil)
	var notSynced *NotSyncedError
	require.ErrorAs(t, err, &notSynced)
	assert.EqualError(t, err, "the cache of trainer.kubeflow.org/v1alpha1, Kind=ClusterTrainingRuntime has not synced yet")

	e.start(t) // an unserved kind does not hold the sync back

	_, err = e.cache.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: widgetGVK, Shape: "lookup", Name: "w"}, nil)
	assert.EqualError(t, err, "the cluster does not serve example.com/v1, Kind=Widget")

	_, err = e.cache.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: localGVK, Shape: "lookup", Name: "w"}, nil)
	var notWatched *NotWatchedError
	require.ErrorAs(t, err, &notWatched)
	assert.EqualError(t, err, "trainer.kubeflow.org/v1alpha1, Kind=TrainingRuntime is not watched (no registered Karta referenced it)")
}

// A kind the server refuses to list (RBAC) is absent, with its error, and
// does not hold the other kinds' sync back.
func TestResolveForbidden(t *testing.T) {
	e := newEnv(t, object(runtimeGVK, "", "torch", nil))
	e.dyn.PrependReactor("list", resourceOf(localGVK).Resource, func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(resourceOf(localGVK).GroupResource(), "", fmt.Errorf("user %q cannot list it", "karta"))
	})
	e.cache.Watch([]schema.GroupVersionKind{runtimeGVK, localGVK})
	e.start(t)

	got, err := e.cache.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: runtimeGVK, Shape: "lookup", Name: "torch"}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"/torch"}, names(got))
	_, err = e.cache.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: localGVK, Shape: "lookup", Namespace: "a", Name: "x"}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot be listed")
	assert.Contains(t, err.Error(), "forbidden")
}

// Watch follows the registry: a kind no Karta references any more is no
// longer watched.
func TestWatchFollowsTheKartas(t *testing.T) {
	e := newEnv(t, object(runtimeGVK, "", "torch", nil), object(localGVK, "a", "local", nil))
	e.start(t)
	reg := interpreter.NewRegistry()
	reg.Put(trainJobProgram(t))
	e.cache.WatchRegistry(reg)
	assert.Equal(t, []schema.GroupVersionKind{runtimeGVK, localGVK}, e.cache.Kinds())
	wait, done := context.WithTimeout(context.Background(), 30*time.Second)
	defer done()
	require.True(t, e.cache.WaitForSync(wait))
	got, err := e.cache.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: localGVK, Shape: "lookup", Namespace: "a", Name: "local"}, nil)
	require.NoError(t, err)
	assert.Len(t, got, 1)

	reg.Delete(trainJob)
	e.cache.WatchRegistry(reg)
	assert.Empty(t, e.cache.Kinds())
	_, err = e.cache.Resolve(context.Background(), interpreter.ReferenceQuery{GVK: localGVK, Shape: "lookup", Namespace: "a", Name: "local"}, nil)
	var notWatched *NotWatchedError
	assert.ErrorAs(t, err, &notWatched)
}

func trainJobProgram(t *testing.T) *interpreter.Program {
	t.Helper()
	ks, err := karta.LoadFile("../../examples/kartas/trainjob-runtime.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	return p
}

func readObject(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &u.Object))
	return u
}

// The TrainJob's pod templates come from the runtime in the cache, and
// follow it when it changes; OnChange tells of the change.
func TestHooksReadTheCache(t *testing.T) {
	rt := readObject(t, "../../examples/trainjob/refs/torchtune-llama3.2-3b.yaml")
	e := newEnv(t, rt)
	var mu sync.Mutex
	changed := map[string]int{}
	e.cache.OnChange(func(gvk schema.GroupVersionKind, u *unstructured.Unstructured) {
		mu.Lock()
		defer mu.Unlock()
		changed[gvk.Kind+"/"+u.GetName()]++
	})
	p := trainJobProgram(t)
	reg := interpreter.NewRegistry()
	reg.Put(p)
	e.cache.WatchRegistry(reg)
	e.start(t)

	tj := readObject(t, "../../examples/trainjob/running.yaml")
	var warnings []string
	ctx := interpreter.WithResolver(context.Background(), e.cache, func(w interpreter.ReferenceWarning) { warnings = append(warnings, w.String()) })
	specs, err := p.GetPodSpecs(ctx, tj)
	require.NoError(t, err)
	jobs := map[string]any{}
	for _, it := range specs.Items {
		jobs[it.Instance] = it.PodTemplateSpec["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]
	}
	assert.Equal(t, map[string]any{
		"dataset-initializer": "ghcr.io/kubeflow/trainer/dataset-initializer",
		"model-initializer":   "ghcr.io/kubeflow/trainer/model-initializer",
		"node":                "ghcr.io/kubeflow/trainer/torchtune-trainer",
	}, jobs)
	assert.Empty(t, warnings, "the cluster runtime is found; the namespaced one is null without a name")

	// The runtime gains a job: the next call sees it.
	_, err = e.dyn.Resource(resourceOf(runtimeGVK)).Update(context.Background(), testobj.WithReplicatedJob(t, rt, "evaluator"), metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		specs, err := p.GetPodSpecs(ctx, tj)
		return err == nil && len(specs.Items) == 4
	}, 30*time.Second, 20*time.Millisecond)
	// The informer updates its store before it calls the handlers, so a
	// call may see the new runtime a moment before OnChange is told.
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return changed["ClusterTrainingRuntime/"+rt.GetName()] >= 2
	}, 30*time.Second, 20*time.Millisecond, "OnChange tells of the add, then the update")

	// Deleted: the reference is null, with a warning, and the call goes on.
	require.NoError(t, e.dyn.Resource(resourceOf(runtimeGVK)).Delete(context.Background(), rt.GetName(), metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		specs, err := p.GetPodSpecs(ctx, tj)
		return err == nil && len(specs.Items) == 0
	}, 30*time.Second, 20*time.Millisecond)
	assert.Contains(t, warnings, `karta "trainjob-runtime": reference "cluster": ClusterTrainingRuntime torchtune-llama3.2-3b not found: null`)
}

// A list reference is bounded as the static resolver's: the call holds at
// most interpreter.MaxReferencedObjects objects, and says it cut the list.
func TestListBound(t *testing.T) {
	var objs []*unstructured.Unstructured
	n := interpreter.MaxReferencedObjects + 44
	for i := range n {
		objs = append(objs, controlled(object(podGVK, "ns", fmt.Sprintf("pod-%03d", i), nil), "uid-ns-tj"))
	}
	e := newEnv(t, objs...)
	ks, err := karta.Load([]byte(`apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: counted}
spec:
  references:
  - name: pods
    kind: {version: v1, kind: Pod}
    list: {owner: true}
  structureDefinition:
    rootComponent:
      name: tj
      kind: {group: trainer.kubeflow.org, version: v1alpha1, kind: TrainJob}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: '$pods | length', expectedResult: "256"}
`), "counted.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	reg := interpreter.NewRegistry()
	reg.Put(p)
	e.cache.WatchRegistry(reg)
	e.start(t)

	var warnings []string
	ctx := interpreter.WithResolver(context.Background(), e.cache, func(w interpreter.ReferenceWarning) { warnings = append(warnings, w.Message) })
	st, err := p.InterpretStatus(ctx, object(trainJob, "ns", "tj", nil))
	require.NoError(t, err)
	assert.Equal(t, "Running", string(st.Status))
	assert.Equal(t, []string{fmt.Sprintf("%d objects, cut to 256 (at most 256 in all per call)", n)}, warnings)
}
