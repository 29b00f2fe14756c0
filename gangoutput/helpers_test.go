package gangoutput

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
	"github.com/kartalua/karta/podgroups"
)

// waitFor is how long the tests wait for the controller: generous, the
// machine is shared.
const waitFor = 30 * time.Second

const tick = 10 * time.Millisecond

// The kinds of the fixtures.
var (
	jobSetGVK         = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}
	pyTorchJobGVK     = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}
	lwsGVK            = schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"}
	rayJobGVK         = schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayJob"}
	rayClusterGVK     = schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayCluster"}
	trainJobGVK       = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "TrainJob"}
	jobGVK            = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	statefulSetGVK    = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	replicaSetGVK     = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	deploymentGVK     = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	clusterRuntimeGVK = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"}
	configMapGVK      = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}                    // an owner kind nobody watches
	brokenGVK         = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Broken"} // webhook_test.go's brokenKarta
	volcanoPGGVK      = podgroups.Kinds(podgroups.Volcano)[0]
	kaiPGGVK          = podgroups.Kinds(podgroups.KAI)[0]
	coschedPGGVK      = podgroups.Kinds(podgroups.Coscheduling)[0]
	workloadGVK       = podgroups.Kinds(podgroups.WorkloadAPI)[0]
	workloadPGGVK     = podgroups.Kinds(podgroups.WorkloadAPI)[1]
)

// env is a fake cluster: a dynamic client (workloads, pods, the target's
// objects; server-side apply as the API server does it for one field
// manager), a metadata client (owners), a REST mapper that serves the
// built-ins' kinds, their owners and every target's, and a registry with
// the built-ins and examples/kartas/trainjob.yaml.
type env struct {
	t       testing.TB
	dyn     *dynamicfake.FakeDynamicClient
	meta    *metadatafake.FakeMetadataClient
	mapper  *meta.DefaultRESTMapper
	reg     *interpreter.Registry
	rec     *record.FakeRecorder
	metrics *prometheus.Registry
	ctrl    *Controller

	mu      sync.Mutex
	applies map[string]int // kind/namespace/name → applies
	// failApply, when set, fails every apply with it.
	failApply error
	// refuse, when set, refuses an apply over an existing object with
	// Invalid when it returns true (an immutable field changed).
	refuse func(old, next *unstructured.Unstructured) bool
}

func resourceOf(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	return gvr
}

func newEnv(t testing.TB) *env {
	t.Helper()
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	ks, err := karta.LoadFile("../examples/kartas/trainjob.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	reg.Put(p)
	reg.Put(alphaJobSet(t, reg))

	// The MPIJob CRD serves v2beta1 (its storage version) and v1.
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "kubeflow.org", Version: "v2beta1"}})
	listKinds := map[schema.GroupVersionResource]string{}
	add := func(gvk schema.GroupVersionKind) {
		mapper.Add(gvk, meta.RESTScopeNamespace)
		listKinds[resourceOf(gvk)] = gvk.Kind + "List"
	}
	for _, e := range reg.Entries() {
		add(e.GVK)
	}
	for _, gvk := range []schema.GroupVersionKind{podGVK, jobGVK, statefulSetGVK, replicaSetGVK, deploymentGVK, configMapGVK, brokenGVK} {
		add(gvk)
	}
	for _, target := range podgroups.Targets() {
		for _, gvk := range (podgroups.Options{CompositePodGroup: true}).Kinds(target) {
			add(gvk)
		}
	}
	// The owner kinds the built-ins name.
	for _, p := range reg.List() {
		for _, c := range p.Karta().Spec.StructureDefinition.Components() {
			if c.Kind != nil {
				add(c.Kind.GVK())
			}
		}
		for _, g := range p.Karta().Spec.StructureDefinition.AdditionalChildKinds {
			add(g.GVK())
		}
	}
	// The runtime examples/kartas/trainjob-runtime.yaml references
	// (references_test.go).
	mapper.Add(clusterRuntimeGVK, meta.RESTScopeRoot)
	listKinds[resourceOf(clusterRuntimeGVK)] = clusterRuntimeGVK.Kind + "List"
	scheme := runtime.NewScheme()
	e := &env{t: t, mapper: mapper, reg: reg, rec: record.NewFakeRecorder(1000), metrics: prometheus.NewRegistry(), applies: map[string]int{}}
	e.dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds)
	e.dyn.PrependReactor("patch", "*", e.apply)
	mscheme := metadatafake.NewTestScheme()
	require.NoError(t, metav1.AddMetaToScheme(mscheme))
	e.meta = metadatafake.NewSimpleMetadataClient(mscheme)
	return e
}

// apply does a server-side apply of one field manager: the object becomes
// what was applied, keeping its uid; a new object is created.
func (e *env) apply(a clienttesting.Action) (bool, runtime.Object, error) {
	pa := a.(clienttesting.PatchAction)
	if pa.GetPatchType() != types.ApplyPatchType {
		return false, nil, nil
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(pa.GetPatch()); err != nil {
		return true, nil, err
	}
	e.mu.Lock()
	failApply, refuse := e.failApply, e.refuse
	e.applies[obj.GetKind()+"/"+pa.GetNamespace()+"/"+pa.GetName()]++
	e.mu.Unlock()
	if failApply != nil {
		return true, nil, failApply
	}
	tracker := e.dyn.Tracker()
	old, err := tracker.Get(pa.GetResource(), pa.GetNamespace(), pa.GetName())
	if apierrors.IsNotFound(err) {
		obj.SetUID(types.UID(fmt.Sprintf("uid-%s-%d", pa.GetName(), time.Now().UnixNano())))
		return true, obj, tracker.Create(pa.GetResource(), obj, pa.GetNamespace())
	}
	if err != nil {
		return true, nil, err
	}
	oldU := old.(*unstructured.Unstructured)
	if refuse != nil && refuse(oldU, obj) {
		return true, nil, apierrors.NewInvalid(obj.GroupVersionKind().GroupKind(), obj.GetName(), nil)
	}
	obj.SetUID(oldU.GetUID())
	return true, obj, tracker.Update(pa.GetResource(), obj, pa.GetNamespace())
}

func (e *env) appliesOf(kind, ns, name string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.applies[kind+"/"+ns+"/"+name]
}

// start runs a controller for target until the test ends and waits for
// its caches.
func (e *env) start(target podgroups.Target, opts Options) *Controller {
	e.t.Helper()
	opts.Target = target
	opts.Recorder = e.rec
	opts.Registerer = e.metrics
	if opts.ResyncPeriod == 0 {
		opts.ResyncPeriod = -1
	}
	if opts.RediscoverPeriod == 0 {
		opts.RediscoverPeriod = -1
	}
	c, err := New(e.dyn, e.meta, e.mapper, e.reg, opts)
	require.NoError(e.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		require.NoError(e.t, <-done)
	})
	require.Eventually(e.t, c.HasSynced, waitFor, tick, "caches synced")
	e.ctrl = c
	return c
}

// create adds a workload or a pod (dynamic client).
func (e *env) create(obj *unstructured.Unstructured) {
	e.t.Helper()
	_, err := e.dyn.Resource(resourceOf(obj.GroupVersionKind())).Namespace(obj.GetNamespace()).Create(context.Background(), obj, metav1.CreateOptions{})
	require.NoError(e.t, err)
}

func (e *env) update(obj *unstructured.Unstructured) {
	e.t.Helper()
	_, err := e.dyn.Resource(resourceOf(obj.GroupVersionKind())).Namespace(obj.GetNamespace()).Update(context.Background(), obj, metav1.UpdateOptions{})
	require.NoError(e.t, err)
}

func (e *env) remove(obj *unstructured.Unstructured) {
	e.t.Helper()
	err := e.dyn.Resource(resourceOf(obj.GroupVersionKind())).Namespace(obj.GetNamespace()).Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{})
	require.NoError(e.t, err)
}

// owner adds an owner object (metadata client): gvk ns/name uid, controlled by
// ctl (nil: none).
func (e *env) owner(gvk schema.GroupVersionKind, ns, name, uid string, ctl metav1.Object, ctlGVK schema.GroupVersionKind) {
	e.t.Helper()
	m := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)},
	}
	if ctl != nil {
		m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(ctl, ctlGVK)}
	}
	_, err := e.meta.Resource(resourceOf(gvk)).Namespace(ns).(metadatafake.MetadataClient).CreateFake(m, metav1.CreateOptions{})
	require.NoError(e.t, err)
}

// objects lists the objects of gvk in ns, by name.
func (e *env) objects(gvk schema.GroupVersionKind, ns string) map[string]*unstructured.Unstructured {
	e.t.Helper()
	list, err := e.dyn.Resource(resourceOf(gvk)).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(e.t, err)
	out := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		out[list.Items[i].GetName()] = &list.Items[i]
	}
	return out
}

// nestedInt64 reads an integer field of an object that may be missing (nil):
// a poll can fall between the delete and the create of a recreate.
func nestedInt64(o *unstructured.Unstructured, path ...string) int64 {
	if o == nil {
		return 0
	}
	n, _, _ := unstructured.NestedInt64(o.Object, path...)
	return n
}

func names(objs map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for n := range objs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// waitObjects waits until ns holds exactly the named objects of gvk.
func (e *env) waitObjects(gvk schema.GroupVersionKind, ns string, want ...string) map[string]*unstructured.Unstructured {
	e.t.Helper()
	sort.Strings(want)
	if want == nil {
		want = []string{}
	}
	var got map[string]*unstructured.Unstructured
	require.Eventually(e.t, func() bool {
		got = e.objects(gvk, ns)
		return strings.Join(names(got), ",") == strings.Join(want, ",")
	}, waitFor, tick, "want %s %v", gvk.Kind, want)
	return got
}

// events drains the recorded events.
func (e *env) events() []string {
	var out []string
	for {
		select {
		case ev := <-e.rec.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// waitEvent waits for an event that starts with prefix and returns it.
func (e *env) waitEvent(prefix string) string {
	e.t.Helper()
	deadline := time.After(waitFor)
	var seen []string
	for {
		select {
		case ev := <-e.rec.Events:
			if strings.HasPrefix(ev, prefix) {
				return ev
			}
			seen = append(seen, ev)
		case <-deadline:
			e.t.Fatalf("no event %q; saw %q", prefix, seen)
		}
	}
}

// example reads examples/NAME/FILE: its objects.
func example(t testing.TB, name, file string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join("..", "examples", name, file)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	docs, err := object.Decode(data, path)
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, it := range object.Items(docs) {
		u := &unstructured.Unstructured{Object: it}
		u.SetResourceVersion("")
		out = append(out, u)
	}
	return out
}

// podsOwnedBy are the example's pods whose controller has one of uids.
func podsOwnedBy(pods []*unstructured.Unstructured, uids ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, p := range pods {
		if ref := controllerOf(p.GetOwnerReferences()); ref != nil {
			for _, u := range uids {
				if string(ref.UID) == u {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// alphaJobSet is the built-in JobSet Karta with the alpha form of the gang
// (a group per replicated job, keyed by the JobSet and replicated job
// names), so that the controller's handling of alpha groups, which come
// and go with their pods, is tested on the JobSet example; the built-in
// uses the v2 form (one group per JobSet).
func alphaJobSet(t testing.TB, reg *interpreter.Registry) *interpreter.Program {
	t.Helper()
	p, ok := reg.Get(jobSetGVK)
	require.True(t, ok)
	k := p.Karta().DeepCopy()
	k.Spec.Instructions = &karta.Instructions{GangScheduling: &karta.GangScheduling{PodGroups: []karta.PodGroup{{
		Name: "replicatedjob",
		Members: []karta.PodGroupMember{{ComponentName: "replicatedjob", GroupByKeyPaths: []string{
			`.metadata.labels["jobset.sigs.k8s.io/jobset-name"]`,
			`.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]`,
		}}},
	}}}}
	ap, err := interpreter.Compile(k, interpreter.Options{})
	require.NoError(t, err)
	return ap
}
