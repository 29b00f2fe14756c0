package builtin_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
	"github.com/kartalua/karta/podgroups"
)

// TestVolcanoJobControllerCases holds the volcano-job built-in's gang to
// what Volcano's job controller writes in the job's PodGroup
// (volcano-sh/volcano pkg/controllers/job/job_controller_actions.go
// createOrUpdatePodGroup, getMinTaskMember): minMember the job's
// minAvailable, which the webhook defaults, when unset or 0, to the tasks'
// sum (mutate_job.go patchDefaultMinAvailable), and minTaskMember per task
// its minAvailable — 0 included —, else minPartitions × partitionSize of
// its partitionPolicy (v1.14; job_controller_actions_test.go's partition
// cases), else its replicas.
func TestVolcanoJobControllerCases(t *testing.T) {
	task := func(name string, replicas int, extra string) string {
		return fmt.Sprintf(`  - name: %s
    replicas: %d
%s    template:
      spec:
        containers: [{name: c, image: busybox:1.36}]
`, name, replicas, extra)
	}
	cases := []struct {
		name, jobMin, spec string
		// spec lists the tasks; min is the group's minimum, tasks each
		// task subgroup's.
		min   int64
		tasks map[string]int64
	}{
		{name: "no minimums: the replicas", spec: task("task1", 6, ""), min: 6, tasks: map[string]int64{"task-task1": 6}},
		{name: "the task's minAvailable", spec: task("task1", 6, "    minAvailable: 4\n"), min: 4, tasks: map[string]int64{"task-task1": 4}},
		{name: "the job's minAvailable above the tasks' sum", jobMin: "  minAvailable: 5\n", spec: task("task1", 6, "    minAvailable: 2\n"),
			min: 5, tasks: map[string]int64{"task-task1": 2}},
		{name: "a task with minAvailable 0 is optional", spec: task("master", 1, "") + task("worker", 4, "    minAvailable: 0\n"),
			min: 1, tasks: map[string]int64{"task-master": 1, "task-worker": 0}},
		{name: "a task with minAvailable 0 under a larger job minimum", jobMin: "  minAvailable: 3\n",
			spec: task("master", 1, "") + task("worker", 4, "    minAvailable: 0\n"),
			min:  3, tasks: map[string]int64{"task-master": 1, "task-worker": 0}},
		{name: "a job minAvailable of 0 is unset", jobMin: "  minAvailable: 0\n",
			spec: task("ps", 2, "") + task("worker", 4, "    minAvailable: 3\n"),
			min:  5, tasks: map[string]int64{"task-ps": 2, "task-worker": 3}},
		{name: "every task optional: a gang of at least one", spec: task("worker", 4, "    minAvailable: 0\n"),
			min: 1, tasks: map[string]int64{"task-worker": 0}},
		{name: "a partition policy's minimum", spec: task("worker", 8, "    partitionPolicy: {totalPartitions: 4, partitionSize: 2, minPartitions: 3}\n"),
			min: 6, tasks: map[string]int64{"task-worker": 6}},
		{name: "a partition policy without minPartitions: the replicas", spec: task("worker", 8, "    partitionPolicy: {totalPartitions: 4, partitionSize: 2}\n"),
			min: 8, tasks: map[string]int64{"task-worker": 8}},
		{name: "minAvailable over a partition policy", spec: task("worker", 8, "    minAvailable: 2\n    partitionPolicy: {totalPartitions: 4, partitionSize: 2, minPartitions: 3}\n"),
			min: 2, tasks: map[string]int64{"task-worker": 2}},
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
`+tc.spec), "job.yaml")
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

			// Volcano's PodGroup as karta writes it: a task per task
			// subgroup of a minimum above 0, and no subGroupPolicy: a
			// task's partitions are not karta's subgroups
			// (docs/catalog.md).
			pgs, err := podgroups.ForProgram(context.Background(), p, obj, nil, podgroups.Volcano, podgroups.Options{})
			require.NoError(t, err)
			require.Len(t, pgs.Objects, 1)
			spec := pgs.Objects[0].Object["spec"].(map[string]any)
			required := map[string]any{}
			for name, n := range tc.tasks {
				if n > 0 {
					required[name] = n
				}
			}
			if len(required) == 0 {
				assert.NotContains(t, spec, "minTaskMember", "every task is optional")
			} else {
				assert.Equal(t, required, spec["minTaskMember"])
			}
			assert.NotContains(t, spec, "subGroupPolicy")
		})
	}
}
