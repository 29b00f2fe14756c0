package kindwatch

import (
	"context"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kartalua/karta/karta"
)

// Referencing names the workloads a referenced object's change concerns:
// by a list of owned objects, the one that controls it; by any other
// reference, those of its namespace, or every one for a cluster-scoped
// object; none for a kind the Karta does not reference.
func TestReferencing(t *testing.T) {
	c := newFakeCluster(t)
	for _, d := range []struct{ ns, name string }{{"ml", "web"}, {"ml", "api"}, {"ops", "web"}} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": d.name, "namespace": d.ns, "uid": d.ns + "-" + d.name}}}
		_, err := c.dyn.Resource(deployments.GVR).Namespace(d.ns).Create(context.Background(), obj, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	w := c.inf.Watch(deployments, true, 0, newRecorder().handler())
	require.Eventually(t, func() bool { return w.Synced() && len(w.Keys()) == 3 }, waitFor, tick)

	runtimeGVK := schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"}
	configGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	ref := func(gvk schema.GroupVersionKind, r karta.Reference) karta.Reference {
		r.Name, r.Kind = "r", karta.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
		return r
	}
	owned := ref(replicaSets.GVK, karta.Reference{List: &karta.ReferenceList{Owner: true}})
	byLabel := ref(replicaSets.GVK, karta.Reference{List: &karta.ReferenceList{LabelSelector: "{matchLabels: {a: b}}"}})
	runtime := ref(runtimeGVK, karta.Reference{Scope: karta.ReferenceCluster, Lookup: &karta.ReferenceLookup{Name: ".spec.runtime"}})
	config := ref(configGVK, karta.Reference{Lookup: &karta.ReferenceLookup{Name: ".spec.config"}})

	object := func(kind, ns, name string, controller *metav1.OwnerReference) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		if controller != nil {
			u.SetOwnerReferences([]metav1.OwnerReference{*controller})
		}
		return u
	}
	controlledBy := func(apiVersion, kind, name string) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "x", Controller: ptr.To(true)}
	}
	for _, c := range []struct {
		name string
		refs []karta.Reference
		gvk  schema.GroupVersionKind
		obj  *unstructured.Unstructured
		want []string
	}{
		{"owned: its controller", []karta.Reference{owned}, replicaSets.GVK,
			object("ReplicaSet", "ml", "web-1", controlledBy("apps/v1", "Deployment", "web")), []string{"ml/web"}},
		{"owned: a controller of another kind", []karta.Reference{owned}, replicaSets.GVK,
			object("ReplicaSet", "ml", "web-1", controlledBy("batch/v1", "Job", "web")), nil},
		{"owned: no controller", []karta.Reference{owned}, replicaSets.GVK, object("ReplicaSet", "ml", "web-1", nil), nil},
		{"owned and by label: its namespace", []karta.Reference{owned, byLabel}, replicaSets.GVK,
			object("ReplicaSet", "ml", "web-1", nil), []string{"ml/api", "ml/web"}},
		{"cluster-scoped lookup: all", []karta.Reference{runtime}, runtimeGVK,
			object("ClusterTrainingRuntime", "", "torch", nil), []string{"ml/api", "ml/web", "ops/web"}},
		{"namespaced lookup: its namespace", []karta.Reference{config}, configGVK,
			object("ConfigMap", "ops", "settings", nil), []string{"ops/web"}},
		{"a kind not referenced", []karta.Reference{config}, runtimeGVK, object("ClusterTrainingRuntime", "", "torch", nil), nil},
		{"no references", nil, configGVK, object("ConfigMap", "ops", "settings", nil), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := &karta.Karta{Spec: karta.KartaSpec{References: c.refs}}
			var got []string
			Referencing(k, w, c.gvk, c.obj, func(ns, name string) { got = append(got, ns+"/"+name) })
			sort.Strings(got)
			assert.Equal(t, c.want, got)
		})
	}
}
