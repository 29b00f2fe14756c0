package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/cluster"
)

// hangGuard bounds a wait for something the test itself caused; it only
// keeps a broken watch from hanging the run.
const hangGuard = 2 * time.Minute

// Watch passes on the initial list, then a row for each change: a new
// pod counts for its workload, a workload's new status shows, an event
// that changes no row prints nothing, and cancelling ends the watch.
func TestWatch(t *testing.T) {
	objs := examples(t, "pytorchjob")
	var pods []*unstructured.Unstructured
	var rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Pod" && o.GetName() == "mistral-7b-sft-worker-2" {
			pods = append(pods, o)
			continue
		}
		rest = append(rest, o)
	}
	c, dyn := fakeCluster(t, rest...)
	reg := builtins(t)
	kinds, err := c.Kinds(reg, "")
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	initial := make(chan []cluster.Workload, 1)
	changed := make(chan cluster.Workload, 16)
	done := make(chan error, 1)
	go func() {
		done <- c.Watch(ctx, kinds, cluster.WatchOptions{Namespace: "nlp", TopLevel: true},
			func(ws []cluster.Workload) error { initial <- ws; return nil },
			func(w cluster.Workload) error { changed <- w; return nil })
	}()
	first := receive(t, initial)
	require.Len(t, first, 1)
	assert.Equal(t, "PyTorchJob nlp/mistral-7b-sft Running [master 1/1 worker 2/3] [3/4]", row(first[0]))

	// The third worker starts.
	_, err = dyn.Resource(cluster.PodResource).Namespace("nlp").Create(ctx, pods[0], metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "PyTorchJob nlp/mistral-7b-sft Running [master 1/1 worker 3/3] [4/4]", row(receive(t, changed)))

	// A pod that is not the job's changes: no row. Then the job fails.
	notebook, err := dyn.Resource(cluster.PodResource).Namespace("nlp").Get(ctx, "mistral-dev-0", metav1.GetOptions{})
	require.NoError(t, err)
	notebook.SetAnnotations(map[string]string{"touched": "yes"})
	_, err = dyn.Resource(cluster.PodResource).Namespace("nlp").Update(ctx, notebook, metav1.UpdateOptions{})
	require.NoError(t, err)
	job, err := dyn.Resource(pytorchJobs).Namespace("nlp").Get(ctx, "mistral-7b-sft", metav1.GetOptions{})
	require.NoError(t, err)
	conds, _, _ := unstructured.NestedSlice(job.Object, "status", "conditions")
	conds = append(conds, map[string]any{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed"})
	require.NoError(t, unstructured.SetNestedSlice(job.Object, conds, "status", "conditions"))
	_, err = dyn.Resource(pytorchJobs).Namespace("nlp").Update(ctx, job, metav1.UpdateOptions{})
	require.NoError(t, err)
	failed := receive(t, changed)
	assert.Equal(t, "Failed", failed.Status, "the notebook's change printed nothing: the next row is the job's failure")

	cancel()
	assert.NoError(t, receive(t, done), "an interrupted watch is a success")
}

// A named workload that does not exist fails the watch at once.
func TestWatchNameNotFound(t *testing.T) {
	c, _ := fakeCluster(t, examples(t, "pytorchjob")...)
	kinds, err := c.Kinds(builtins(t), "pytorchjob")
	require.NoError(t, err)
	err = c.Watch(context.Background(), kinds, cluster.WatchOptions{Namespace: "nlp", Name: "nope"},
		func([]cluster.Workload) error { return nil }, func(cluster.Workload) error { return nil })
	var nf *cluster.NotFoundError
	require.ErrorAs(t, err, &nf)
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatal("nothing arrived")
		var zero T
		return zero
	}
}
