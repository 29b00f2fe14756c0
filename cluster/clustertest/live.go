package clustertest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kartalua/karta/cluster"
)

// Deploy plays an example's operator on a real cluster: it creates
// examples/NAME/running.yaml's object in namespace ns, sets its status
// through the status subresource, and creates on node (a kwok fake node)
// the example's pods that belong to it (see Examples), with the labels and
// annotations the operator gave them, owned by the object. It returns the
// object as created and the pods.
func Deploy(t testing.TB, dyn dynamic.Interface, mapper meta.RESTMapper, root, name, ns, node string) (*unstructured.Unstructured, []*unstructured.Unstructured) {
	t.Helper()
	objs := Read(t, filepath.Join(root, "examples", name, "running.yaml"))
	require.Len(t, objs, 1)
	obj := CreateWithStatus(t, dyn, mapper, objs[0], ns)
	var pods []*unstructured.Unstructured
	for _, example := range Read(t, filepath.Join(root, "examples", name, "pods.yaml")) {
		if example.GetNamespace() != objs[0].GetNamespace() || !ownedByName(example, objs[0]) {
			continue
		}
		pods = append(pods, CreatePod(t, dyn, example, obj, ns, node))
	}
	return obj, pods
}

// ownedByName reports a pod of the example whose owner is the workload or
// something named after it (its Jobs, ReplicaSets, StatefulSets).
func ownedByName(pod, workload *unstructured.Unstructured) bool {
	for _, ref := range pod.GetOwnerReferences() {
		if ref.UID == workload.GetUID() || ref.Name == workload.GetName() || strings.HasPrefix(ref.Name, workload.GetName()+"-") {
			return true
		}
	}
	return false
}

// CreateWithStatus creates what a user submits of example (name, labels,
// annotations, spec) in namespace ns, then sets the example's status
// through the status subresource, as the operator would.
func CreateWithStatus(t testing.TB, dyn dynamic.Interface, mapper meta.RESTMapper, example *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	t.Helper()
	ctx := t.Context()
	gvk := example.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	require.NoError(t, err, gvk.String())
	r := dyn.Resource(m.Resource).Namespace(ns)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": example.GetAPIVersion(), "kind": example.GetKind(), "spec": example.Object["spec"],
	}}
	u.SetName(example.GetName())
	u.SetLabels(example.GetLabels())
	u.SetAnnotations(example.GetAnnotations())
	created, err := r.Create(ctx, u, metav1.CreateOptions{})
	require.NoError(t, err, "creating %s %s", gvk.Kind, example.GetName())
	if status, ok := example.Object["status"]; ok {
		created.Object["status"] = status
		created, err = r.UpdateStatus(ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err, "setting the status of %s %s", gvk.Kind, example.GetName())
	}
	return created
}

// CreatePod creates a pod like example in namespace ns, bound to node,
// owned by owner: its name, labels and annotations (which the Kartas read),
// and containers of the same names and images.
func CreatePod(t testing.TB, dyn dynamic.Interface, example, owner *unstructured.Unstructured, ns, node string) *unstructured.Unstructured {
	t.Helper()
	examples, _, err := unstructured.NestedSlice(example.Object, "spec", "containers")
	require.NoError(t, err)
	var containers []any
	for _, c := range examples {
		c := c.(map[string]any)
		containers = append(containers, map[string]any{"name": c["name"], "image": c["image"]})
	}
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"spec": map[string]any{"nodeName": node, "containers": containers},
	}}
	pod.SetName(example.GetName())
	pod.SetLabels(example.GetLabels())
	pod.SetAnnotations(example.GetAnnotations())
	pod.SetOwnerReferences([]metav1.OwnerReference{OwnerRef(owner)})
	created, err := dyn.Resource(cluster.PodResource).Namespace(ns).Create(t.Context(), pod, metav1.CreateOptions{})
	require.NoError(t, err, "creating pod %s", example.GetName())
	return created
}
