package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

var pytorchJobs = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}

// kaiRevisions are examples/pytorchjob/revisions.yaml: KAI takes the job.
func kaiRevisions(t *testing.T) []interpreter.Revision {
	t.Helper()
	data, err := os.ReadFile("../examples/pytorchjob/revisions.yaml")
	require.NoError(t, err)
	v, err := object.DecodeValue(data, "../examples/pytorchjob/revisions.yaml")
	require.NoError(t, err)
	revs, err := interpreter.DecodeRevisions(v)
	require.NoError(t, err)
	return revs
}

// reviseSetup is the PyTorchJob example in a fake cluster, with its kind.
func reviseSetup(t *testing.T) (*cluster.Client, *dynamicfake.FakeDynamicClient, *cluster.Kind) {
	t.Helper()
	c, dyn := fakeCluster(t, examples(t, "pytorchjob")...)
	kinds, err := c.Kinds(builtins(t), "pytorchjob")
	require.NoError(t, err)
	require.Len(t, kinds, 1)
	return c, dyn, kinds[0]
}

func liveJob(t *testing.T, dyn *dynamicfake.FakeDynamicClient) *unstructured.Unstructured {
	t.Helper()
	obj, err := dyn.Resource(pytorchJobs).Namespace("nlp").Get(context.Background(), "mistral-7b-sft", metav1.GetOptions{})
	require.NoError(t, err)
	return obj
}

func patches(dyn *dynamicfake.FakeDynamicClient) []clienttesting.PatchAction {
	var out []clienttesting.PatchAction
	for _, a := range dyn.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && a.GetVerb() == "patch" {
			out = append(out, p)
		}
	}
	return out
}

// The patch sent is the revision's, behind a test of the resourceVersion
// read; the result is the object the server returned.
func TestReviseSendsGuardedPatch(t *testing.T) {
	c, dyn, kind := reviseSetup(t)
	out, err := c.Revise(context.Background(), kind, kind.Program, "nlp", "mistral-7b-sft", kaiRevisions(t), cluster.ReviseOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, out.Attempts)
	require.NotEmpty(t, out.Patch)
	assert.Equal(t, interpreter.PatchOp{Op: "test", Path: "/metadata/resourceVersion", Value: "17733905"}, out.Patch[0])

	sent := patches(dyn)
	require.Len(t, sent, 1)
	var ops []map[string]any
	require.NoError(t, json.Unmarshal(sent[0].GetPatch(), &ops))
	assert.Equal(t, map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": "17733905"}, ops[0])
	assert.Len(t, ops, len(out.Patch))
	assert.Equal(t, "karta", sent[0].(clienttesting.PatchActionImpl).PatchOptions.FieldManager)
	assert.Empty(t, sent[0].(clienttesting.PatchActionImpl).PatchOptions.DryRun)

	got := liveJob(t, dyn)
	for _, typ := range []string{"Master", "Worker"} {
		name, _, _ := unstructured.NestedString(got.Object, "spec", "pytorchReplicaSpecs", typ, "template", "spec", "schedulerName")
		assert.Equal(t, "kai-scheduler", name, typ)
	}
	assert.Equal(t, got.Object, out.Object.Object, "the result is the stored object")
}

// --dry-run=server asks the server not to store the change.
func TestReviseDryRun(t *testing.T) {
	c, dyn, kind := reviseSetup(t)
	_, err := c.Revise(context.Background(), kind, kind.Program, "nlp", "mistral-7b-sft", kaiRevisions(t), cluster.ReviseOptions{DryRun: true})
	require.NoError(t, err)
	sent := patches(dyn)
	require.Len(t, sent, 1)
	assert.Equal(t, []string{metav1.DryRunAll}, sent[0].(clienttesting.PatchActionImpl).PatchOptions.DryRun)
}

// Revisions that change nothing send nothing.
func TestReviseNothingToChange(t *testing.T) {
	c, dyn, kind := reviseSetup(t)
	ctx := context.Background()
	_, err := c.Revise(ctx, kind, kind.Program, "nlp", "mistral-7b-sft", kaiRevisions(t), cluster.ReviseOptions{})
	require.NoError(t, err)
	dyn.ClearActions()

	out, err := c.Revise(ctx, kind, kind.Program, "nlp", "mistral-7b-sft", kaiRevisions(t), cluster.ReviseOptions{})
	require.NoError(t, err)
	assert.Empty(t, out.Patch)
	assert.NotNil(t, out.Patch, "an empty patch prints as []")
	assert.Empty(t, patches(dyn))
}

// A revision the Karta refuses is an error, and nothing is sent.
func TestReviseSpecError(t *testing.T) {
	c, dyn, kind := reviseSetup(t)
	revs := []interpreter.Revision{{Component: "launcher", Instance: "", Patch: map[string]any{"spec": map[string]any{"schedulerName": "x"}}}}
	_, err := c.Revise(context.Background(), kind, kind.Program, "nlp", "mistral-7b-sft", revs, cluster.ReviseOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"launcher"`)
	assert.Empty(t, patches(dyn))

	_, err = c.Revise(context.Background(), kind, kind.Program, "nlp", "nope", revs, cluster.ReviseOptions{})
	var nf *cluster.NotFoundError
	require.ErrorAs(t, err, &nf)
}

// testFailed is the API server's answer to a JSON Patch whose test
// operation fails: 422, with a message that does not say which operation
// failed (json-patch's error stays in the server).
func testFailed() error {
	return apierrors.NewGenericServerResponse(422, "patch", schema.GroupResource{}, "",
		"testing value /metadata/resourceVersion failed: test failed", 0, false)
}

// A patch whose guard fails (the object changed since it was read) is
// recomputed on a fresh read and sent again.
func TestReviseRetriesOnConflict(t *testing.T) {
	for name, fail := range map[string]error{
		"resourceVersion test failed": testFailed(),
		"conflict":                    apierrors.NewConflict(schema.GroupResource{Group: "kubeflow.org", Resource: "pytorchjobs"}, "mistral-7b-sft", fmt.Errorf("the object has been modified")),
	} {
		t.Run(name, func(t *testing.T) {
			c, dyn, kind := reviseSetup(t)
			failures := 1
			dyn.PrependReactor("patch", "pytorchjobs", func(clienttesting.Action) (bool, runtime.Object, error) {
				if failures == 0 {
					return false, nil, nil
				}
				failures--
				// Someone wrote the object since it was read.
				bumpResourceVersion(t, dyn)
				return true, nil, fail
			})
			out, err := c.Revise(context.Background(), kind, kind.Program, "nlp", "mistral-7b-sft", kaiRevisions(t), cluster.ReviseOptions{})
			require.NoError(t, err)
			assert.Equal(t, 2, out.Attempts)
			assert.Len(t, patches(dyn), 2)
			gets := 0
			for _, a := range dyn.Actions() {
				if a.GetVerb() == "get" && a.GetResource() == pytorchJobs {
					gets++
				}
			}
			assert.Equal(t, 2, gets, "each attempt reads the object afresh")
		})
	}
}

// A concurrent writer changes the object between our read and our patch:
// the guard fails, the revision is recomputed on the fresh object, and
// both changes are in the result.
func TestReviseKeepsConcurrentWrite(t *testing.T) {
	c, dyn, kind := reviseSetup(t)
	ctx := context.Background()
	writer := func(ctx context.Context, attempt int) error {
		if attempt > 1 {
			return nil
		}
		obj := liveJob(t, dyn)
		obj.SetLabels(map[string]string{"team": "nlp-research"})
		obj.SetResourceVersion("17733999")
		_, err := dyn.Resource(pytorchJobs).Namespace("nlp").Update(ctx, obj, metav1.UpdateOptions{})
		return err
	}
	out, err := c.Revise(ctx, kind, kind.Program, "nlp", "mistral-7b-sft", kaiRevisions(t), cluster.ReviseOptions{BeforePatch: writer})
	require.NoError(t, err)
	assert.Equal(t, 2, out.Attempts)
	assert.Equal(t, interpreter.PatchOp{Op: "test", Path: "/metadata/resourceVersion", Value: "17733999"}, out.Patch[0])

	got := liveJob(t, dyn)
	assert.Equal(t, map[string]string{"team": "nlp-research"}, got.GetLabels(), "the concurrent write is kept")
	name, _, _ := unstructured.NestedString(got.Object, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "schedulerName")
	assert.Equal(t, "kai-scheduler", name, "and so is the revision")
}

// An object that changes in every round makes Revise give up after the
// attempts it has.
func TestReviseGivesUp(t *testing.T) {
	c, dyn, kind := reviseSetup(t)
	dyn.PrependReactor("patch", "pytorchjobs", func(clienttesting.Action) (bool, runtime.Object, error) {
		bumpResourceVersion(t, dyn)
		return true, nil, testFailed()
	})
	_, err := c.Revise(context.Background(), kind, kind.Program, "nlp", "mistral-7b-sft", kaiRevisions(t), cluster.ReviseOptions{Attempts: 3})
	var ce *cluster.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 3, ce.Attempts)
	assert.Len(t, patches(dyn), 3)
	assert.EqualError(t, err, "the object changed between read and patch 3 times in a row; giving up (last: the server rejected our request due to an error in our request)")

	// A 422 on an object that did not change is the patch's own failure:
	// reported, not retried.
	c, dyn, kind = reviseSetup(t)
	dyn.PrependReactor("patch", "pytorchjobs", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, testFailed()
	})
	_, err = c.Revise(context.Background(), kind, kind.Program, "nlp", "mistral-7b-sft", kaiRevisions(t), cluster.ReviseOptions{})
	assert.EqualError(t, err, "patching pytorchjobs.kubeflow.org mistral-7b-sft: the server rejected our request due to an error in our request")
	assert.Len(t, patches(dyn), 1)

	// Any other failure is not retried.
	c, dyn, kind = reviseSetup(t)
	dyn.PrependReactor("patch", "pytorchjobs", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "kubeflow.org", Resource: "pytorchjobs"}, "mistral-7b-sft", fmt.Errorf("no"))
	})
	_, err = c.Revise(context.Background(), kind, kind.Program, "nlp", "mistral-7b-sft", kaiRevisions(t), cluster.ReviseOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err))
	assert.Len(t, patches(dyn), 1)
}

// bumpResourceVersion is a write by someone else: the object gets a new
// resourceVersion, straight in the fake's store.
func bumpResourceVersion(t *testing.T, dyn *dynamicfake.FakeDynamicClient) {
	t.Helper()
	obj, err := dyn.Tracker().Get(pytorchJobs, "nlp", "mistral-7b-sft")
	require.NoError(t, err)
	u := obj.(*unstructured.Unstructured).DeepCopy()
	rv, err := strconv.Atoi(u.GetResourceVersion())
	require.NoError(t, err)
	u.SetResourceVersion(strconv.Itoa(rv + 1))
	require.NoError(t, dyn.Tracker().Update(pytorchJobs, u, "nlp"))
}
