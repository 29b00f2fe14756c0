package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	pgJobSet     = "../../examples/jobset/running.yaml"
	pgJobSetPods = "../../examples/jobset/pods.yaml"
	lwsRunning   = "../../examples/leaderworkerset/running.yaml"
	lwsPods      = "../../examples/leaderworkerset/pods.yaml"
	rayRunning   = "../../examples/raycluster/running.yaml"
	rayPods      = "../../examples/raycluster/pods.yaml"
	examplePods  = "../../examples/pytorchjob/pods.yaml"
)

// TestGoldenPodGroups pins podgroups' output and exit code for every
// target and output, and its errors. Regenerate with:
// go test ./cmd/karta -run TestGoldenPodGroups -update
func TestGoldenPodGroups(t *testing.T) {
	cases := []struct {
		name  string
		stdin []string
		args  []string
	}{
		{"podgroups-workload-api-yaml", nil, []string{"podgroups", "-f", pgJobSet, "--pods", pgJobSetPods, "--for", "workload-api", "-o", "yaml"}},
		{"podgroups-workload-api-patch", nil, []string{"podgroups", "-f", pgJobSet, "--pods", pgJobSetPods, "--for", "workload-api", "-o", "patch"}},
		{"podgroups-workload-api-table", nil, []string{"podgroups", "-f", lwsRunning, "--pods", lwsPods, "--for", "workload-api", "-o", "table"}},
		{"podgroups-kai-json", nil, []string{"podgroups", "-k", trainKarta, "-f", trainJob, "--pods", trainPods, "--for", "kai", "-o", "json"}},
		{"podgroups-kai-queue", nil, []string{"podgroups", "-f", pytorchRunning, "--pods", examplePods, "--for", "kai", "--queue", "research", "-o", "yaml"}},
		{"podgroups-kai-patch", nil, []string{"podgroups", "-k", trainKarta, "-f", trainJob, "--pods", trainPods, "--for", "kai", "-o", "patch"}},
		{"podgroups-volcano-table", nil, []string{"podgroups", "-f", rayRunning, "--pods", rayPods, "--for", "volcano", "-o", "table"}},
		{"podgroups-volcano-yaml", nil, []string{"podgroups", "-f", pytorchRunning, "--pods", examplePods, "--for", "volcano", "-o", "yaml"}},
		{"podgroups-coscheduling-yaml", nil, []string{"podgroups", "-f", lwsRunning, "--pods", lwsPods, "--for", "coscheduling", "-o", "yaml"}},
		{"podgroups-coscheduling-patch", nil, []string{"podgroups", "-f", lwsRunning, "--pods", lwsPods, "--for", "coscheduling", "-o", "patch"}},
		{"podgroups-v2-without-pods", nil, []string{"podgroups", "-k", trainKarta, "-f", trainJob, "--for", "volcano", "-o", "yaml"}},
		{"podgroups-pods-stdin", []string{trainPods}, []string{"podgroups", "-k", trainKarta, "-f", trainJob, "--pods", "-", "--for", "coscheduling", "-o", "table"}},
		{"podgroups-several-documents", nil, []string{"podgroups", "-k", pytorchKarta, "-f", "testdata/in/pytorchjob-list.yaml", "--pods", pytorchPods, "--for", "coscheduling", "-o", "yaml"}},

		// A LeaderWorkerSet's groups are per group index, named by the pods;
		// a PyTorchJob's v2 group is one per object and exists without them.
		{"podgroups-without-pods", nil, []string{"podgroups", "-f", lwsRunning, "--for", "kai"}},
		{"podgroups-no-pod-in-a-group", nil, []string{"podgroups", "-f", lwsRunning, "--pods", trainPods, "--for", "kai"}},
		{"podgroups-pytorchjob-without-pods", nil, []string{"podgroups", "-f", pytorchRunning, "--for", "kai", "-o", "yaml"}},
		{"podgroups-no-instructions", nil, []string{"podgroups", "-k", "testdata/in/pytorchjob-no-gang.yaml", "-f", pytorchRunning, "--pods", examplePods, "--for", "volcano"}},
		{"podgroups-unknown-target", nil, []string{"podgroups", "-f", pytorchRunning, "--pods", examplePods, "--for", "slurm"}},
		{"podgroups-no-target", nil, []string{"podgroups", "-f", pytorchRunning, "--pods", examplePods}},
		{"podgroups-patch-without-pods", nil, []string{"podgroups", "-f", pytorchRunning, "--for", "kai", "-o", "patch"}},
		{"podgroups-bad-output", nil, []string{"podgroups", "-f", pytorchRunning, "--for", "kai", "-o", "xml"}},
		{"podgroups-kind-mismatch", nil, []string{"podgroups", "-k", "jobset", "-f", pytorchRunning, "--pods", examplePods, "--for", "kai"}},
		{"podgroups-both-stdin", nil, []string{"podgroups", "-f", "-", "--pods", "-", "--for", "kai"}},
		{"podgroups-missing-pods", nil, []string{"podgroups", "-f", pytorchRunning, "--pods", "testdata/in/no-such-file.yaml", "--for", "kai"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, joinDocuments(t, tc.stdin), tc.args...)
			checkGolden(t, tc.name, tc.args, stdout, stderr, code)
			assert.NotContains(t, stderr, "goroutine ", "no Go stack traces, ever")
			if code != exitOK {
				assert.Empty(t, stdout, "a failed command prints nothing on standard output")
				assert.NotEmpty(t, stderr, "a failed command says why")
			}
		})
	}
}

// -o json is a v1 List of the objects, what kubectl apply -f - takes.
func TestPodGroupsJSONIsAList(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "podgroups", "-f", pgJobSet, "--pods", pgJobSetPods, "--for", "workload-api", "-o", "json")
	require.Equal(t, exitOK, code, stderr)
	var list struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &list))
	assert.Equal(t, "v1", list.APIVersion)
	assert.Equal(t, "List", list.Kind)
	kinds := []string{}
	for _, it := range list.Items {
		kinds = append(kinds, it.Kind)
	}
	assert.Equal(t, []string{"Workload", "PodGroup"}, kinds, "the Workload, then the JobSet's PodGroup")
	assert.Equal(t, "llama3-pretrain", list.Items[0].Metadata.Name, "the Workload is named after the JobSet")
}
