// Package testobj reads the repository's example files as objects for
// tests: one decoder (object.Decode, which refuses duplicate keys and
// oversized input as every input path of karta does), so a test reads an
// example the way the CLI and the webhook do.
package testobj

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/object"
)

// Read returns the one object of the YAML or JSON file at path; the test
// fails when the file cannot be read or holds anything but one object.
func Read(t testing.TB, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	docs, err := object.Decode(data, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(docs) != 1 {
		t.Fatalf("%s: %d documents, want one object", path, len(docs))
	}
	return &unstructured.Unstructured{Object: docs[0].Object}
}

// WithReplicatedJob returns a copy of rt, a Kubeflow Trainer runtime
// (ClusterTrainingRuntime or TrainingRuntime), with one more replicated
// job, name, of one container: the change of a referenced object that the
// references' tests make.
func WithReplicatedJob(t testing.TB, rt *unstructured.Unstructured, name string) *unstructured.Unstructured {
	t.Helper()
	out := rt.DeepCopy()
	jobs, _, err := unstructured.NestedSlice(out.Object, "spec", "template", "spec", "replicatedJobs")
	require.NoError(t, err)
	job := map[string]any{"name": name, "template": map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{"name": name, "image": name + ":1"}}}}}}}
	require.NoError(t, unstructured.SetNestedSlice(out.Object, append(jobs, job), "spec", "template", "spec", "replicatedJobs"))
	return out
}
