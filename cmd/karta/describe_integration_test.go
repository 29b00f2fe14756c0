//go:build integration

package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
	"github.com/kartalua/karta/workload"
)

// On a real API server: karta get without a KIND lists a RayJob and not
// the RayCluster it controls, which get rayclusters lists; describe shows
// a PyTorchJob's pods in their components and gang, a pod the job owns
// that its Karta does not place as unmatched, and leaves out a pod with
// the job's labels that the job does not own.
func TestLiveDescribeAndTopLevel(t *testing.T) {
	kubeconfig, ns, dyn, _ := liveCluster(t, "rayjob", "pytorchjob")
	ctx := t.Context()

	// KubeRay's RayCluster of the RayJob, controlled by it.
	rayJobs := dyn.Resource(schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}).Namespace(ns)
	rayJob, err := rayJobs.Get(ctx, "resnet-train", metav1.GetOptions{})
	require.NoError(t, err)
	spec, _, err := unstructured.NestedMap(rayJob.Object, "spec", "rayClusterSpec")
	require.NoError(t, err)
	rc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster", "spec": spec}}
	rc.SetName("resnet-train-raycluster-7bq8l")
	rc.SetOwnerReferences([]metav1.OwnerReference{clustertest.OwnerRef(rayJob)})
	rayClusters := dyn.Resource(schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}).Namespace(ns)
	created, err := rayClusters.Create(ctx, rc, metav1.CreateOptions{})
	require.NoError(t, err)
	created.Object["status"] = map[string]any{"state": "ready"}
	_, err = rayClusters.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)

	names := func(args ...string) []string {
		t.Helper()
		stdout, stderr, code := runCLI(t, "", append(args, "-n", ns, "-o", "json", "--kubeconfig", kubeconfig)...)
		require.Equal(t, exitOK, code, stderr)
		var list struct {
			Items []cluster.Workload `json:"items"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &list))
		var out []string
		for _, w := range list.Items {
			out = append(out, w.Kind+"/"+w.Name)
		}
		return out
	}
	assert.Equal(t, []string{"PyTorchJob/mistral-7b-sft", "RayJob/resnet-train"}, names("get"))
	assert.Equal(t, []string{"RayCluster/resnet-train-raycluster-7bq8l"}, names("get", "rayclusters"))

	// A pod the job owns without the operator's labels, and one with the
	// labels that nothing owns.
	job, err := dyn.Resource(schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}).Namespace(ns).Get(ctx, "mistral-7b-sft", metav1.GetOptions{})
	require.NoError(t, err)
	deployed, err := dyn.Resource(cluster.PodResource).Namespace(ns).Get(ctx, "mistral-7b-sft-master-0", metav1.GetOptions{})
	require.NoError(t, err)
	node, _, _ := unstructured.NestedString(deployed.Object, "spec", "nodeName")
	example := clustertest.Read(t, "../../examples/pytorchjob/pods.yaml")[1]
	unlabelled := example.DeepCopy()
	unlabelled.SetName("mistral-7b-sft-debug")
	unlabelled.SetLabels(nil)
	clustertest.CreatePod(t, dyn, unlabelled, job, ns, node)
	stray := example.DeepCopy()
	stray.SetName("hand-made-worker")
	clustertest.CreatePod(t, dyn, stray, job, ns, node)
	_, err = dyn.Resource(cluster.PodResource).Namespace(ns).Patch(ctx, "hand-made-worker", types.JSONPatchType,
		[]byte(`[{"op": "remove", "path": "/metadata/ownerReferences"}]`), metav1.PatchOptions{})
	require.NoError(t, err)

	stdout, stderr, code := runCLI(t, "", "describe", "pytorchjob/mistral-7b-sft", "-n", ns, "-o", "json", "--kubeconfig", kubeconfig)
	require.Equal(t, exitOK, code, stderr)
	var tree workload.Node
	require.NoError(t, json.Unmarshal([]byte(stdout), &tree))
	placedPods := map[string]string{}
	unmatched := map[string]string{}
	workload.Walk(&tree, func(n *workload.Node, depth int) bool {
		if n.Kind != workload.KindPod {
			return true
		}
		if depth == 1 {
			unmatched[n.Name] = n.Fields.Reason
		} else {
			placedPods[n.Name] = n.Fields.Group
		}
		return true
	})
	assert.Len(t, placedPods, 4)
	for name, group := range placedPods {
		assert.Regexp(t, `^pg-.+-job$`, group, name)
	}
	// clustertest.Deploy gives the job the example's evaluation pod too
	// (its owner is named after the job): owned, and placed nowhere.
	assert.Equal(t, map[string]string{
		"mistral-7b-sft-debug":      "no component selector matches",
		"mistral-7b-sft-eval-5vglx": "no component selector matches",
	}, unmatched, "the hand-made worker is not the job's")

	stdout, stderr, code = runCLI(t, "", "describe", "rayjob/resnet-train", "-n", ns, "-o", "table", "--kubeconfig", kubeconfig)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Kind:         RayJob\n")
	// The Ray cluster's pods are the cluster component's (RayJob's other
	// component is the submitter Job).
	assert.Regexp(t, `(?m)^      Instance gpu-workers:\n(.*\n)*?        Existing:  4$`, stdout)

	_, stderr, code = runCLI(t, "", "describe", "pytorchjob/nope", "-n", ns, "--kubeconfig", kubeconfig)
	assert.Equal(t, exitInvalid, code)
	assert.Equal(t, `karta: pytorchjobs.kubeflow.org "nope" not found in namespace "`+ns+`"`+"\n", stderr)
}
