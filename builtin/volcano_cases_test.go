package builtin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

// TestVolcanoJobControllerCases holds the volcano-job built-in's gang to
// what Volcano's job controller writes in the job's PodGroup
// (volcano-sh/volcano pkg/controllers/job/job_controller_actions.go
// createOrUpdatePodGroup, getMinTaskMember): minMember the job's
// minAvailable, which the webhook defaults to the tasks' sum
// (mutate_job.go patchDefaultMinAvailable), and minTaskMember per task its
// minAvailable, else its replicas. (Volcano v1.14's partitionPolicy, which
// job_controller_actions_test.go's partition cases exercise, is not in the
// v1.12.1 API the built-in reads.)
func TestVolcanoJobControllerCases(t *testing.T) {
	cases := []struct {
		name, jobMin, task string
		// min is the group's minimum, tasks each task subgroup's.
		min   int64
		tasks map[string]int64
	}{
		{name: "no minimums: the replicas", min: 6, tasks: map[string]int64{"task-task1": 6}},
		{name: "the task's minAvailable", task: "    minAvailable: 4\n", min: 4, tasks: map[string]int64{"task-task1": 4}},
		{name: "the job's minAvailable above the tasks' sum", jobMin: "  minAvailable: 5\n", task: "    minAvailable: 2\n",
			min: 5, tasks: map[string]int64{"task-task1": 2}},
	}
	b, ok, err := builtin.Get("volcano-job")
	require.NoError(t, err)
	require.True(t, ok)
	p, err := b.Compile(interpreter.Options{})
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := object.Decode([]byte(`apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job1, namespace: default, uid: u}
spec:
  schedulerName: volcano
`+tc.jobMin+`  tasks:
  - name: task1
    replicas: 6
`+tc.task+`    template:
      spec:
        containers: [{name: c, image: busybox:1.36}]
`), "job.yaml")
			require.NoError(t, err)
			require.Len(t, docs, 1)
			obj := &unstructured.Unstructured{Object: docs[0].Object}
			res, err := p.GetGangGroups(context.Background(), obj, nil)
			require.NoError(t, err)
			require.Len(t, res.Groups, 1)
			g := res.Groups[0]
			assert.Equal(t, tc.min, g.MinMember)
			got := map[string]int64{}
			for _, s := range g.SubGroups {
				got[s.Name] = s.MinMember
			}
			assert.Equal(t, tc.tasks, got)
		})
	}
}
