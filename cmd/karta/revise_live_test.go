package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kartalua/karta/cluster/clustertest"
)

const pytorchRevisions = "../../examples/pytorchjob/revisions.yaml"

// TestGoldenReviseLive pins revise --live against a fake cluster holding
// the PyTorchJob example. Regenerate with:
// go test ./cmd/karta -run TestGoldenReviseLive -update
func TestGoldenReviseLive(t *testing.T) {
	cases := []struct {
		name string
		args []string
		objs func(t *testing.T) []*unstructured.Unstructured
		more []clustertest.Resource
	}{
		{name: "revise-live-patch", args: []string{"revise", "--live", "pytorchjob/mistral-7b-sft", "-r", pytorchRevisions, "-o", "patch"}},
		{name: "revise-live-yaml", args: []string{"revise", "--live", "pytorchjobs/mistral-7b-sft", "-n", "nlp", "-r", pytorchRevisions}},
		{name: "revise-live-karta-file", args: []string{"revise", "--live", "trainjob.example.com/llm-finetune", "-n", "ml", "-k", trainKarta, "-r", trainRevs, "-o", "patch"},
			objs: func(t *testing.T) []*unstructured.Unstructured { return trainJobObjects(t)[1:] }, more: []clustertest.Resource{trainJobResource}},
		{name: "revise-live-unknown-component", args: []string{"revise", "--live", "pytorchjob/mistral-7b-sft", "-r", "testdata/in/revisions-unknown.yaml"}},
		{name: "revise-live-not-found", args: []string{"revise", "--live", "pytorchjob/nope", "-r", pytorchRevisions}},
		{name: "revise-live-unknown-kind", args: []string{"revise", "--live", "configmap/web", "-r", pytorchRevisions}},
		{name: "revise-live-and-filename", args: []string{"revise", "--live", "pytorchjob/mistral-7b-sft", "-f", pytorchJob, "-r", pytorchRevisions}},
		{name: "revise-live-no-name", args: []string{"revise", "--live", "pytorchjob", "-r", pytorchRevisions}},
		{name: "revise-live-client-dry-run", args: []string{"revise", "--live", "pytorchjob/mistral-7b-sft", "--dry-run=client", "-r", pytorchRevisions}},
		{name: "revise-dry-run-without-live", args: []string{"revise", "-f", pytorchJob, "--dry-run=server", "-r", pytorchRevisions}},
		{name: "revise-no-filename", args: []string{"revise", "-r", pytorchRevisions}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := clustertest.Examples(t, "../..", "pytorchjob")
			if tc.objs != nil {
				objs = tc.objs(t)
			}
			useFakeCluster(t, tc.more, objs...)
			stdout, stderr, code := runCLI(t, "", tc.args...)
			checkGolden(t, tc.name, tc.args, stdout, stderr, code)
			assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
			if code != exitOK {
				assert.Empty(t, stdout, "a failed command prints nothing on standard output")
				assert.NotEmpty(t, stderr, "a failed command says why")
			}
		})
	}
}

// --dry-run=server sends the patch with dryRun=All; the object printed is
// the one the server returned.
func TestReviseLiveDryRun(t *testing.T) {
	dyn := useFakeCluster(t, nil, clustertest.Examples(t, "../..", "pytorchjob")...)
	stdout, stderr, code := runCLI(t, "", "revise", "--live", "pytorchjob/mistral-7b-sft", "--dry-run=server", "-r", pytorchRevisions, "-o", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"schedulerName": "kai-scheduler"`)
	var patched int
	for _, a := range dyn.Actions() {
		if p, ok := a.(clienttesting.PatchActionImpl); ok {
			patched++
			assert.Equal(t, []string{metav1.DryRunAll}, p.PatchOptions.DryRun)
		}
	}
	assert.Equal(t, 1, patched)
}
