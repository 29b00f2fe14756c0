// Package clustertest is a fake cluster for the tests of karta's cluster
// commands: client-go's fake dynamic client and fake discovery serving the
// kinds of the built-in Kartas (and any others a test names), filled with
// objects read from files such as examples/*/running.yaml and pods.yaml.
package clustertest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/object"
)

// Server is the URL the fake cluster's Client names.
const Server = "https://fake.cluster.test"

// Resource is a kind the fake cluster serves.
type Resource struct {
	GVK        schema.GroupVersionKind
	Plural     string // default: kubectl's guess from the kind
	Namespaced bool
	ShortNames []string
}

// Core are the kinds of pods and of the owners between the built-in
// workloads and their pods (Jobs, ReplicaSets, StatefulSets, Grove's
// PodCliques), plus the Karta kind (cluster-scoped).
func Core() []Resource {
	return []Resource{
		{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true, ShortNames: []string{"po"}},
		{GVK: schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, Namespaced: true},
		{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, Namespaced: true, ShortNames: []string{"rs"}},
		{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespaced: true, ShortNames: []string{"deploy"}},
		{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, Namespaced: true, ShortNames: []string{"sts"}},
		{GVK: schema.GroupVersionKind{Group: "grove.io", Version: "v1alpha1", Kind: "PodClique"}, Namespaced: true},
		{GVK: cluster.KartaKind, ShortNames: []string{"kt"}},
	}
}

// shortNames are those of the real CRDs of the built-in kinds that have
// some, and of the API server's own kinds.
var shortNames = map[string][]string{
	"InferenceService": {"isvc"},
	"Service":          {"kservice", "ksvc"},
	"LeaderWorkerSet":  {"lws"},
	"RayCluster":       {"rc"},
	// KServe v0.17, Dynamo and Grove.
	"LLMInferenceService":   {"llmisvc"},
	"DynamoGraphDeployment": {"dgd"},
	"PodCliqueSet":          {"pcs"},
	"DaemonSet":             {"ds"},
	"CronJob":               {"cj"},
	// CodeFlare, Flink, Argo.
	"AppWrapper":      {"aw"},
	"FlinkDeployment": {"flinkdep"},
	"Workflow":        {"wf"},
}

// Builtins are the root kinds of the built-in Kartas, all namespaced, but
// those Core serves already (Pod, Job, ReplicaSet, Deployment, StatefulSet),
// and the kinds their references read (the Trainer's runtimes), which
// Examples fills from examples/NAME/refs.
func Builtins(t testing.TB) []Resource {
	t.Helper()
	all, err := builtin.All()
	require.NoError(t, err)
	core := map[schema.GroupVersionKind]bool{}
	for _, r := range Core() {
		core[r.GVK] = true
	}
	var out []Resource
	for _, b := range all {
		gvk := b.Karta.Spec.StructureDefinition.RootComponent.Kind.GVK()
		if core[gvk] {
			continue
		}
		out = append(out, Resource{GVK: gvk, Namespaced: true, ShortNames: shortNames[gvk.Kind]})
		core[gvk] = true
	}
	for _, b := range all {
		for i := range b.Karta.Spec.References {
			r := &b.Karta.Spec.References[i]
			if gvk := r.Kind.GVK(); !core[gvk] {
				out = append(out, Resource{GVK: gvk, Namespaced: !r.IsCluster()})
				core[gvk] = true
			}
		}
	}
	return out
}

// New returns a Client of a fake cluster that serves resources and holds
// objects, and the fake dynamic client behind it, to add reactors to and
// read the actions from.
func New(t testing.TB, resources []Resource, objects ...*unstructured.Unstructured) (*cluster.Client, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{}
	byGV := map[string]*metav1.APIResourceList{}
	var order []string
	for _, r := range resources {
		gvr := r.gvr()
		listKinds[gvr] = r.GVK.Kind + "List"
		gv := r.GVK.GroupVersion().String()
		if byGV[gv] == nil {
			byGV[gv] = &metav1.APIResourceList{GroupVersion: gv}
			order = append(order, gv)
		}
		_, singular := meta.UnsafeGuessKindToResource(r.GVK)
		byGV[gv].APIResources = append(byGV[gv].APIResources, metav1.APIResource{
			Name: gvr.Resource, SingularName: singular.Resource, Namespaced: r.Namespaced, Kind: r.GVK.Kind,
			ShortNames: r.ShortNames, Verbs: metav1.Verbs{"get", "list", "watch", "create", "update", "patch", "delete"},
		})
	}
	// Groups in name order; within a group the version the API server
	// prefers first (GA before beta before alpha, then the higher number),
	// since fake discovery takes a group's first version as its preferred one.
	slices.SortFunc(order, func(a, b string) int {
		ga, _ := schema.ParseGroupVersion(a)
		gb, _ := schema.ParseGroupVersion(b)
		if c := strings.Compare(ga.Group, gb.Group); c != 0 {
			return c
		}
		return -version.CompareKubeAwareVersionStrings(ga.Version, gb.Version)
	})
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	for _, gv := range order {
		disc.Resources = append(disc.Resources, byGV[gv])
	}
	objs := make([]runtime.Object, len(objects))
	for i, o := range objects {
		objs[i] = o
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)
	return cluster.NewClientFrom(dyn, orderedDiscovery{disc}, Server), dyn
}

// orderedDiscovery serves the fake's groups in a fixed order, as an API
// server does: FakeDiscovery builds its group list from a map, and the
// RESTMapper ranks a name several groups serve (jobs: batch's and
// Volcano's) by that order.
type orderedDiscovery struct{ *fakediscovery.FakeDiscovery }

func (d orderedDiscovery) ServerGroups() (*metav1.APIGroupList, error) {
	return d.ServerGroupsWithContext(context.Background())
}

func (d orderedDiscovery) ServerGroupsWithContext(ctx context.Context) (*metav1.APIGroupList, error) {
	list, err := d.FakeDiscovery.ServerGroupsWithContext(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(list.Groups, func(a, b metav1.APIGroup) int { return strings.Compare(a.Name, b.Name) })
	return list, nil
}

func (d orderedDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	return d.ServerGroupsAndResourcesWithContext(context.Background())
}

func (d orderedDiscovery) ServerGroupsAndResourcesWithContext(ctx context.Context) ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	list, err := d.ServerGroupsWithContext(ctx)
	if err != nil {
		return nil, nil, err
	}
	groups := make([]*metav1.APIGroup, len(list.Groups))
	for i := range list.Groups {
		groups[i] = &list.Groups[i]
	}
	return groups, d.Resources, nil
}

func (r Resource) gvr() schema.GroupVersionResource {
	if r.Plural != "" {
		return r.GVK.GroupVersion().WithResource(r.Plural)
	}
	plural, _ := meta.UnsafeGuessKindToResource(r.GVK)
	return plural
}

// Read reads the objects of YAML files: documents, and the items of Lists.
func Read(t testing.TB, files ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		docs, err := object.Decode(data, f)
		require.NoError(t, err)
		for _, item := range object.Items(docs) {
			// Through JSON, so that numbers are the int64 and float64 of
			// objects a real client decodes.
			js, err := json.Marshal(item)
			require.NoError(t, err)
			u := &unstructured.Unstructured{}
			require.NoError(t, u.UnmarshalJSON(js), f)
			out = append(out, u)
		}
	}
	return out
}

// Examples reads examples/NAME/running.yaml, examples/NAME/pods.yaml and
// the objects their references read, examples/NAME/refs/*.yaml, under root
// (the repository's root) for each name, and adds the owners
// between the workloads and their pods that the pods name: the Jobs,
// ReplicaSets and StatefulSets an operator creates, each owned by the
// workload of its namespace whose name it is or starts with (operators
// name what they create after the workload), the RayCluster of a RayJob or
// a RayService, made of its rayClusterSpec or rayClusterConfig as KubeRay
// makes it, and the objects an AppWrapper wraps, made of its components'
// templates. Owners that belong to no workload of the examples exist too,
// owned by nobody.
func Examples(t testing.TB, root string, names ...string) []*unstructured.Unstructured {
	t.Helper()
	var objs, pods []*unstructured.Unstructured
	for _, n := range names {
		objs = append(objs, Read(t, filepath.Join(root, "examples", n, "running.yaml"))...)
		pods = append(pods, Read(t, filepath.Join(root, "examples", n, "pods.yaml"))...)
		refs, err := filepath.Glob(filepath.Join(root, "examples", n, "refs", "*.yaml"))
		require.NoError(t, err)
		objs = append(objs, Read(t, refs...)...)
	}
	seen := map[types.UID]bool{}
	for _, o := range objs {
		seen[o.GetUID()] = true
	}
	out := append([]*unstructured.Unstructured{}, objs...)
	for _, p := range pods {
		if !seen[p.GetUID()] {
			out = append(out, p)
		}
	}
	return append(out, owners(t, pods, objs)...)
}

// owners makes the owners the pods name that objs do not hold. Objects of
// a built-in's root kind (by group and kind: a Volcano Job is one, and so
// is a batch/v1 Job) are made up only between a workload of the examples
// and its pods (a Deployment's ReplicaSet, a JobSet's or a CronJob's Jobs,
// a LeaderWorkerSet's StatefulSets, the RayCluster of a RayJob or a
// RayService, the objects an AppWrapper wraps): anywhere else they would
// be workloads of their own. Pods that own pods (a Spark driver, its
// executors) need no made-up owner.
func owners(t testing.TB, pods, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	all, err := builtin.All()
	require.NoError(t, err)
	workloadKinds := map[schema.GroupKind]bool{}
	for _, b := range all {
		workloadKinds[b.Karta.Spec.StructureDefinition.RootComponent.Kind.GVK().GroupKind()] = true
	}
	known := map[types.UID]bool{}
	for _, o := range objs {
		known[o.GetUID()] = true
	}
	// A pod owned by another pod of the examples (a Spark executor by its
	// driver) needs no made-up owner: the owner is there.
	for _, p := range pods {
		known[p.GetUID()] = true
	}
	var out []*unstructured.Unstructured
	for _, pod := range pods {
		for _, ref := range pod.GetOwnerReferences() {
			if known[ref.UID] {
				continue
			}
			known[ref.UID] = true
			w := workloadOf(objs, pod.GetNamespace(), ref.Name)
			owner := &unstructured.Unstructured{Object: map[string]any{}}
			if workloadKinds[schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()] {
				if w == nil || w.GetKind() == ref.Kind {
					continue
				}
				if spec := madeUpWorkloadSpec(t, ref, w); spec != nil {
					owner.Object["spec"] = spec
					owner.Object["status"] = map[string]any{"state": "ready"}
				} else if ref.Kind == "RayCluster" || w.GetKind() == "AppWrapper" {
					continue
				}
			}
			owner.SetAPIVersion(ref.APIVersion)
			owner.SetKind(ref.Kind)
			owner.SetNamespace(pod.GetNamespace())
			owner.SetName(ref.Name)
			owner.SetUID(ref.UID)
			owner.SetCreationTimestamp(pod.GetCreationTimestamp())
			if w != nil {
				owner.SetOwnerReferences([]metav1.OwnerReference{OwnerRef(w)})
			}
			out = append(out, owner)
		}
	}
	return out
}

// madeUpWorkloadSpec is the spec of a workload that another workload w
// creates and its pods name as their owner: a RayJob's or a RayService's
// RayCluster, an object an AppWrapper wraps. It is nil for any other.
func madeUpWorkloadSpec(t testing.TB, ref metav1.OwnerReference, w *unstructured.Unstructured) map[string]any {
	t.Helper()
	if w == nil {
		return nil
	}
	switch {
	case ref.Kind == "RayCluster" && w.GetKind() == "RayJob":
		spec, _, err := unstructured.NestedMap(w.Object, "spec", "rayClusterSpec")
		require.NoError(t, err)
		return spec
	case ref.Kind == "RayCluster" && w.GetKind() == "RayService":
		spec, _, err := unstructured.NestedMap(w.Object, "spec", "rayClusterConfig")
		require.NoError(t, err)
		return spec
	case w.GetKind() == "AppWrapper":
		components, _, err := unstructured.NestedSlice(w.Object, "spec", "components")
		require.NoError(t, err)
		for _, c := range components {
			tmpl, _, _ := unstructured.NestedMap(c.(map[string]any), "template")
			if tmpl["kind"] == ref.Kind && tmpl["apiVersion"] == ref.APIVersion {
				if name, _, _ := unstructured.NestedString(tmpl, "metadata", "name"); name == ref.Name {
					spec, _, _ := unstructured.NestedMap(tmpl, "spec")
					return spec
				}
			}
		}
	}
	return nil
}

// workloadOf is the object of namespace ns whose name the owner's name is
// or starts with, if any.
func workloadOf(objs []*unstructured.Unstructured, ns, owner string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetNamespace() == ns && (owner == o.GetName() || strings.HasPrefix(owner, o.GetName()+"-")) {
			return o
		}
	}
	return nil
}

// OwnerRef is the controller reference to obj an operator puts on what it
// creates.
func OwnerRef(obj *unstructured.Unstructured) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}
}
