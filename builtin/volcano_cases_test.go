package builtin_test

import (
	"context"
	"fmt"
	"slices"
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
// cases), else its replicas. A partitioned task is a subgroup of a leaf
// per partition, needing minPartitions of them (getSubGroupPolicy), and
// its minAvailable where that is more (Volcano's scheduler checks both).
func TestVolcanoJobControllerCases(t *testing.T) {
	task := func(name string, replicas int, extra string) string {
		return fmt.Sprintf(`  - name: %s
    replicas: %d
%s    template:
      spec:
        containers: [{name: c, image: busybox:1.36}]
`, name, replicas, extra)
	}
	policy := "    partitionPolicy: {totalPartitions: 4, partitionSize: 2, minPartitions: 3}\n"
	cases := []struct {
		name, jobMin, spec string
		// min is the group's minimum, tasks each task subgroup's.
		min   int64
		tasks map[string]int64
		// need is the partitioned worker task's minSubGroups (nil: all
		// its leaves), leaves its leaves' minimums, none without a
		// policy.
		need   *int64
		leaves []int64
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
		{name: "a partition policy: minPartitions whole partitions", spec: task("worker", 8, policy),
			min: 6, tasks: map[string]int64{"task-worker": 6}, need: ptr(int64(3)), leaves: []int64{2, 2, 2, 2}},
		{name: "a partition policy as the webhook leaves it: minAvailable its partitions'", spec: task("worker", 8, "    minAvailable: 6\n"+policy),
			min: 6, tasks: map[string]int64{"task-worker": 6}, need: ptr(int64(3)), leaves: []int64{2, 2, 2, 2}},
		{name: "a partition policy without minPartitions: every partition", spec: task("worker", 8, "    partitionPolicy: {totalPartitions: 4, partitionSize: 2}\n"),
			min: 8, tasks: map[string]int64{"task-worker": 8}, leaves: []int64{2, 2, 2, 2}},
		{name: "minAvailable without minPartitions: that many pods, no whole partition",
			spec: task("worker", 8, "    minAvailable: 5\n    partitionPolicy: {totalPartitions: 4, partitionSize: 2}\n"),
			min:  5, tasks: map[string]int64{"task-worker": 5}, need: ptr(int64(0)), leaves: []int64{2, 2, 2, 2}},
		{name: "minAvailable below the partitions' (the webhook refuses it): both hold", spec: task("worker", 8, "    minAvailable: 2\n"+policy),
			min: 6, tasks: map[string]int64{"task-worker": 6}, need: ptr(int64(3)), leaves: []int64{2, 2, 2, 2}},
		{name: "minAvailable above the partitions': both hold", spec: task("worker", 8, "    minAvailable: 7\n"+policy),
			min: 7, tasks: map[string]int64{"task-worker": 7}, need: ptr(int64(3)), leaves: []int64{2, 2, 2, 2}},
		{name: "a partitioned task beside a plain one", spec: task("master", 1, "") + task("worker", 8, policy),
			min: 7, tasks: map[string]int64{"task-master": 1, "task-worker": 6}, need: ptr(int64(3)), leaves: []int64{2, 2, 2, 2}},
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
			var leaves []int64
			for _, s := range g.SubGroups {
				if s.Parent == "" {
					got[s.Name] = s.MinMember
				} else {
					assert.Equal(t, "task-worker", s.Parent, "only a partitioned task has leaves")
					leaves = append(leaves, s.MinMember)
				}
				if s.Name == "task-worker" {
					assert.Equal(t, tc.need, s.MinSubGroups)
				} else {
					assert.Nil(t, s.MinSubGroups, s.Name)
				}
			}
			assert.Equal(t, tc.tasks, got)
			assert.Equal(t, tc.leaves, leaves)

			// Volcano's PodGroup as karta writes it: a task per task
			// subgroup of a minimum above 0, and the partitions a
			// subGroupPolicy under the option, with the numbers Volcano's
			// getSubGroupPolicy writes (without the option, each needed
			// partition is a task: podgroups' golden
			// volcano-job-partitioned/volcano.yaml).
			pgs, err := podgroups.ForProgram(context.Background(), p, obj, nil, podgroups.Volcano, podgroups.Options{VolcanoSubGroupPolicy: true})
			require.NoError(t, err)
			require.Len(t, pgs.Objects, 1)
			spec := pgs.Objects[0].Object["spec"].(map[string]any)
			required := map[string]any{}
			for name, n := range tc.tasks {
				if n > 0 && (tc.leaves == nil || name != "task-worker") {
					required[name] = n
				}
			}
			if len(required) == 0 {
				assert.NotContains(t, spec, "minTaskMember", "every task is optional or partitioned")
			} else {
				assert.Equal(t, required, spec["minTaskMember"])
			}
			if tc.leaves == nil {
				assert.NotContains(t, spec, "subGroupPolicy")
				return
			}
			want := int64(len(tc.leaves))
			if tc.need != nil {
				want = *tc.need
			}
			require.Len(t, spec["subGroupPolicy"], 1)
			pol := spec["subGroupPolicy"].([]any)[0].(map[string]any)
			assert.Equal(t, "task-worker", pol["name"])
			assert.Equal(t, int64(2), pol["subGroupSize"], "partitionSize")
			assert.Equal(t, want, pol["minSubGroups"])
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestVolcanoJobPartitionPods places the pods Volcano's job controller
// makes for a partitioned task (job_controller_util.go createJobPod: pod
// <job>-<task>-<index>, labelled volcano.sh/task-spec and
// volcano.sh/partition-id = index / partitionSize) in the leaf of their
// partition, and unmatches a pod whose partition is not one of the task's.
func TestVolcanoJobPartitionPods(t *testing.T) {
	b, ok, err := builtin.Get("volcano-job")
	require.NoError(t, err)
	require.True(t, ok)
	p, err := b.Compile(interpreter.Options{})
	require.NoError(t, err)
	for _, tc := range []struct{ total, size int }{{4, 2}, {2, 4}, {3, 1}, {1, 5}} {
		t.Run(fmt.Sprintf("%d partitions of %d", tc.total, tc.size), func(t *testing.T) {
			docs, err := object.Decode([]byte(fmt.Sprintf(`apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job1, namespace: default, uid: u}
spec:
  tasks:
  - name: worker
    replicas: %d
    partitionPolicy: {totalPartitions: %d, partitionSize: %d}
    template: {spec: {containers: [{name: c, image: busybox:1.36}]}}
`, tc.total*tc.size, tc.total, tc.size)), "job.yaml")
			require.NoError(t, err)
			obj := &unstructured.Unstructured{Object: docs[0].Object}
			var pods []*unstructured.Unstructured
			want := map[string][]string{}
			for ix := range tc.total*tc.size + 1 {
				name := fmt.Sprintf("job1-worker-%d", ix)
				pods = append(pods, &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "v1", "kind": "Pod",
					"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{
						"volcano.sh/job-name": "job1", "volcano.sh/task-spec": "worker",
						"volcano.sh/partition-id": fmt.Sprint(ix / tc.size)}},
				}})
				if ix < tc.total*tc.size {
					leaf := fmt.Sprintf("task-worker-replica-%d", ix/tc.size)
					want[leaf] = append(want[leaf], "default/"+name)
				}
			}
			res, err := p.GetGangGroups(context.Background(), obj, pods)
			require.NoError(t, err)
			require.Len(t, res.Groups, 1)
			got := map[string][]string{}
			for _, s := range res.Groups[0].SubGroups {
				if s.Parent != "" {
					assert.Equal(t, int64(tc.size), s.MinMember, "a leaf is one whole partition")
					got[s.Name] = s.Pods
				}
			}
			for _, pods := range want {
				slices.Sort(pods)
			}
			assert.Equal(t, want, got)
			last := fmt.Sprintf("default/job1-worker-%d", tc.total*tc.size)
			assert.Equal(t, []interpreter.Unmatched{{Pod: last,
				Reason: fmt.Sprintf("replica %q not found among the %d replicas of subgroup task", fmt.Sprint(tc.total), tc.total)}}, res.Unmatched)
		})
	}
}
