package cluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/cluster"
)

func names(ws []cluster.Workload) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Kind+" "+w.Namespace+"/"+w.Name)
	}
	return out
}

// TopLevel lists each workload once, through the object a user made: the
// RayCluster a RayJob controls is left out; named by its kind it is
// listed. An owner that is not a controller, or a controller that is not
// among the objects listed, does not hide an object.
func TestListTopLevel(t *testing.T) {
	objs := examples(t, "rayjob", "raycluster", "jobset")
	rayjob := find(t, objs, "RayJob", "resnet-train")
	owned := find(t, objs, "RayCluster", "resnet-train-raycluster-7bq8l")
	require.Equal(t, rayjob.GetUID(), metav1.GetControllerOf(owned).UID, "the fixture's RayCluster is the RayJob's")

	c, _ := fakeCluster(t, objs...)
	assert.Equal(t, []string{
		"JobSet ml-research/llama3-pretrain",
		"RayCluster ml-research/llm-train",
		"RayJob ml-training/resnet-train",
	}, names(list(t, c, "", cluster.ListOptions{TopLevel: true})))
	assert.Equal(t, []string{
		"JobSet ml-research/llama3-pretrain",
		"RayCluster ml-research/llm-train",
		"RayCluster ml-training/resnet-train-raycluster-7bq8l",
		"RayJob ml-training/resnet-train",
	}, names(list(t, c, "", cluster.ListOptions{})), "without TopLevel every object is listed")
	assert.Equal(t, []string{
		"RayCluster ml-research/llm-train",
		"RayCluster ml-training/resnet-train-raycluster-7bq8l",
	}, names(list(t, c, "rayclusters", cluster.ListOptions{TopLevel: true})), "the RayJob is not listed: nothing hides its RayCluster")

	// A JobSet that a TrainJob-like owner (not listed: no Karta for it)
	// controls, and one a RayJob references without controlling it.
	js := find(t, objs, "JobSet", "llama3-pretrain").DeepCopy()
	yes, no := true, false
	js.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "t", UID: types.UID("d0000000-0000-4000-8000-000000000001"), Controller: &yes}})
	other := find(t, objs, "RayCluster", "llm-train").DeepCopy()
	other.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Name: rayjob.GetName(), UID: rayjob.GetUID(), Controller: &no}})
	var rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "JobSet" || (o.GetKind() == "RayCluster" && o.GetName() == "llm-train") {
			continue
		}
		rest = append(rest, o)
	}
	c, _ = fakeCluster(t, append(rest, js, other)...)
	assert.Equal(t, []string{
		"JobSet ml-research/llama3-pretrain",
		"RayCluster ml-research/llm-train",
		"RayJob ml-training/resnet-train",
	}, names(list(t, c, "", cluster.ListOptions{TopLevel: true})))
}

// Watch with TopLevel leaves out the same objects as List.
func TestWatchTopLevel(t *testing.T) {
	c, _ := fakeCluster(t, examples(t, "rayjob")...)
	kinds, err := c.Kinds(builtins(t), "")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	initial := make(chan []cluster.Workload, 1)
	done := make(chan error, 1)
	go func() {
		done <- c.Watch(ctx, kinds, cluster.WatchOptions{Namespace: "ml-training", TopLevel: true},
			func(ws []cluster.Workload) error { initial <- ws; return nil },
			func(cluster.Workload) error { return nil })
	}()
	assert.Equal(t, []string{"RayJob ml-training/resnet-train"}, names(receive(t, initial)))
	cancel()
	assert.NoError(t, receive(t, done))
}

// PodsOf gives the pods a workload owns, through the objects in between,
// whether or not its Karta places them; Get reads one object.
func TestGetAndPodsOf(t *testing.T) {
	objs := examples(t, "jobset")
	// A pod the JobSet owns that no selector matches: a sidecar Job's.
	stray := find(t, objs, "Pod", "llama3-pretrain-driver-0-0-8tfql").DeepCopy()
	stray.SetName("llama3-pretrain-driver-0-0-debug")
	stray.SetUID("e0000000-0000-4000-8000-000000000001")
	stray.SetLabels(map[string]string{"app": "debug"})
	c, _ := fakeCluster(t, append(objs, stray)...)
	kinds, err := c.Kinds(builtins(t), "jobset")
	require.NoError(t, err)
	ctx := context.Background()

	obj, err := c.Get(ctx, kinds[0], "ml-research", "llama3-pretrain")
	require.NoError(t, err)
	assert.Equal(t, "JobSet", obj.GetKind())
	_, err = c.Get(ctx, kinds[0], "ml-research", "nope")
	var nf *cluster.NotFoundError
	require.ErrorAs(t, err, &nf)

	pods, err := c.PodsOf(ctx, obj, nil)
	require.NoError(t, err)
	var got []string
	for _, p := range pods {
		got = append(got, p.GetName())
	}
	assert.ElementsMatch(t, []string{
		"llama3-pretrain-driver-0-0-8tfql", "llama3-pretrain-driver-0-0-debug",
		"llama3-pretrain-workers-0-0-7mrfl", "llama3-pretrain-workers-0-1-2hq8j", "llama3-pretrain-workers-0-2-8r68v", "llama3-pretrain-workers-0-3-zn5sc",
		"llama3-pretrain-workers-1-0-lv79b", "llama3-pretrain-workers-1-1-nqkvp", "llama3-pretrain-workers-1-2-jzfnb", "llama3-pretrain-workers-1-3-j9srp",
	}, got, "the tensorboard pod and the staging copy are not the JobSet's")

	clusterScoped := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "x", "uid": "u"}}}
	pods, err = c.PodsOf(ctx, clusterScoped, nil)
	require.NoError(t, err)
	assert.NotNil(t, pods)
	assert.Empty(t, pods)
}
