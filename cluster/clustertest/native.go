package clustertest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kartalua/karta/cluster"
)

// NativeExamples are the examples of the built-ins for the API server's
// own kinds: the test cluster serves them without a CRD, and its
// controller-manager (with kwok's fake nodes) runs them for real, so they
// are deployed with DeployNative, not played with Deploy.
var NativeExamples = []string{"cronjob", "daemonset", "deployment", "job", "pod", "replicaset", "statefulset"}

// IsNative reports whether examples/NAME is one of NativeExamples.
func IsNative(name string) bool {
	for _, n := range NativeExamples {
		if n == name {
			return true
		}
	}
	return false
}

// DeployNative creates examples/NAME/running.yaml's object in namespace ns
// as a user submits it (Submit), fitted to the test cluster's fake nodes
// (ForFakeNodes), and returns it as created. The controllers do the rest:
// the pods, the status.
func DeployNative(t testing.TB, dyn dynamic.Interface, mapper meta.RESTMapper, root, name, ns string) *unstructured.Unstructured {
	t.Helper()
	objs := Read(t, filepath.Join(root, "examples", name, "running.yaml"))
	require.Len(t, objs, 1)
	obj := Submit(objs[0])
	ForFakeNodes(obj)
	return Create(t, dyn, mapper, obj, ns, false)
}

// Create creates obj in namespace ns (with dryRun, only as the API server's
// dry run: validated and admitted, not stored).
func Create(t testing.TB, dyn dynamic.Interface, mapper meta.RESTMapper, obj *unstructured.Unstructured, ns string, dryRun bool) *unstructured.Unstructured {
	t.Helper()
	gvk := obj.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	require.NoError(t, err, gvk.String())
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	created, err := dyn.Resource(m.Resource).Namespace(ns).Create(t.Context(), obj, opts)
	require.NoError(t, err, "creating %s %s", gvk.Kind, obj.GetName())
	return created
}

// Submit is what a user submits of an example object of the API server's
// own kinds: its kind, name, labels, annotations and spec, without the
// status, the owners and the server's metadata. What the API server itself
// adds to a Job when it creates it (the selector on controller-uid, and the
// job-name and controller-uid labels of the template, both spellings) is
// left out too: the server refuses a template that names another Job's
// uid.
func Submit(example *unstructured.Unstructured) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": example.GetAPIVersion(), "kind": example.GetKind(),
	}}
	if spec, ok := example.Object["spec"]; ok {
		obj.Object["spec"] = runtimeCopy(spec)
	}
	obj.SetName(example.GetName())
	obj.SetLabels(example.GetLabels())
	obj.SetAnnotations(example.GetAnnotations())
	if example.GetAPIVersion() == "batch/v1" && example.GetKind() == "Job" {
		unstructured.RemoveNestedField(obj.Object, "spec", "selector")
		labels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "template", "metadata", "labels")
		for _, generated := range []string{"batch.kubernetes.io/job-name", "batch.kubernetes.io/controller-uid", "job-name", "controller-uid"} {
			delete(labels, generated)
		}
		_ = unstructured.SetNestedStringMap(obj.Object, labels, "spec", "template", "metadata", "labels")
	}
	return obj
}

// ForFakeNodes takes out of an object's pod specs (a Pod's, or the pod
// template of a workload of the API server's own kinds) what the test
// cluster cannot satisfy: the examples target GPU nodes that do not exist
// there (node names, node selectors and affinities, resource requests that
// other tests' pods may leave no room for), volumes (PersistentVolumeClaims
// nobody provisions, which keep a pod from being scheduled) with their
// mounts, a StatefulSet's volume claim templates, and service accounts the
// test namespace does not have (the API server refuses pods that name
// one). The rest (names, labels, replicas, parallelism, strategies) stays,
// so the controllers run the example as it is.
func ForFakeNodes(obj *unstructured.Unstructured) {
	var spec []string
	switch obj.GetKind() {
	case "Pod":
		spec = []string{"spec"}
	case "CronJob":
		spec = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	default:
		spec = []string{"spec", "template", "spec"}
	}
	podSpec, ok, _ := unstructured.NestedMap(obj.Object, spec...)
	if !ok {
		return
	}
	for _, f := range []string{"nodeName", "nodeSelector", "affinity", "volumes", "serviceAccountName", "serviceAccount"} {
		delete(podSpec, f)
	}
	for _, list := range []string{"initContainers", "containers"} {
		containers, _ := podSpec[list].([]any)
		for _, c := range containers {
			if c, ok := c.(map[string]any); ok {
				for _, f := range []string{"resources", "volumeMounts"} {
					delete(c, f)
				}
			}
		}
	}
	_ = unstructured.SetNestedMap(obj.Object, podSpec, spec...)
	if obj.GetKind() == "StatefulSet" {
		unstructured.RemoveNestedField(obj.Object, "spec", "volumeClaimTemplates")
	}
}

// runtimeCopy deep-copies a JSON value.
func runtimeCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = runtimeCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = runtimeCopy(e)
		}
		return out
	}
	return v
}

// LogPods logs the nodes and the pods of namespace ns, a line each (name,
// phase, node, Ready), for a test that waited for controllers in vain.
func LogPods(t testing.TB, dyn dynamic.Interface, ns string) {
	t.Helper()
	ready := func(u unstructured.Unstructured) string {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok && c["type"] == "Ready" {
				return fmt.Sprint(c["status"])
			}
		}
		return "-"
	}
	nodes, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}).List(context.Background(), metav1.ListOptions{})
	if err == nil {
		for _, n := range nodes.Items {
			taints, _, _ := unstructured.NestedSlice(n.Object, "spec", "taints")
			t.Logf("node %s ready=%s taints=%v", n.GetName(), ready(n), taints)
		}
	}
	pods, err := dyn.Resource(cluster.PodResource).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Logf("listing the pods of %s: %v", ns, err)
		return
	}
	for _, p := range pods.Items {
		phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
		t.Logf("pod %s phase=%s node=%s ready=%s", p.GetName(), phase, node, ready(p))
	}
}
