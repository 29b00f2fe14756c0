package builtin_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

// kaiSub is one subgroup with its minimum, by karta's name (KAI's names
// differ by policy: docs/catalog.md, "Subgroup names").
type kaiSub struct {
	name string
	min  int64
}

// kaiGroup is one gang: its minimum and its subgroups.
type kaiGroup struct {
	min  int64
	subs []kaiSub
}

// TestKAIGrouperCases holds the built-ins' hierarchical gangs to the
// expected values of KAI-Scheduler's own pod-grouper tests
// (NVIDIA/KAI-Scheduler pkg/podgrouper/podgrouper/plugins/…, the test named
// in each case), their inputs re-stated as realistic objects. Where karta
// answers otherwise, karta's answer is given with the reason, which
// docs/catalog.md states as KAI's policy.
func TestKAIGrouperCases(t *testing.T) {
	cases := []struct {
		name, builtin, kaiTest string
		object, pods           string
		// kai is what KAI's test expects of its one PodGroup; karta is
		// karta's answer when it differs, with policy saying why.
		kai    []kaiGroup
		karta  []kaiGroup
		policy string
	}{
		{
			name: "PyTorchJob master 2, workers 4", builtin: "pytorchjob",
			kaiTest: "kubeflow/pytorch/pytorch_grouper_test.go TestGetPodGroupMetadata_OnlyReplicas, _SubGroups_MasterAndWorker",
			object:  pytorchJob(""),
			kai:     []kaiGroup{{6, []kaiSub{{"master", 2}, {"worker", 4}}}},
		},
		{
			name: "PyTorchJob with schedulingPolicy.minAvailable 5", builtin: "pytorchjob",
			kaiTest: "kubeflow/pytorch/pytorch_grouper_test.go TestGetPodGroupMetadata_OnlyMinAvailable (buildSubGroups: worker = minAvailable - master)",
			object:  pytorchJob("  runPolicy: {schedulingPolicy: {minAvailable: 5}}\n"),
			kai:     []kaiGroup{{5, []kaiSub{{"master", 2}, {"worker", 3}}}},
		},
		{
			name: "PyTorchJob with elasticPolicy.minReplicas 3", builtin: "pytorchjob",
			kaiTest: "kubeflow/pytorch/pytorch_grouper_test.go TestGetPodGroupMetadata_OnlyMinReplicas",
			object:  pytorchJob("  elasticPolicy: {minReplicas: 3, maxReplicas: 4}\n"),
			kai:     []kaiGroup{{3, []kaiSub{{"master", 2}, {"worker", 1}}}},
			karta:   []kaiGroup{{5, []kaiSub{{"master", 2}, {"worker", 3}}}},
			policy: "KAI takes elasticPolicy.minReplicas as the whole job's minimum; the training operator's elastic " +
				"policy bounds the workers, so karta counts the masters plus minReplicas workers",
		},
		{
			name: "RayCluster: head and two worker groups by minReplicas", builtin: "raycluster",
			kaiTest: "ray/ray_grouper_test.go (MinAvailable: 1 (head) + 2 (group0 minReplicas) + 1 (group1 minReplicas) = 4)",
			object:  rayCluster(1, 1),
			kai:     []kaiGroup{{4, []kaiSub{{"head", 1}, {"worker-group0", 2}, {"worker-group1", 1}}}},
		},
		{
			name: "RayCluster: numOfHosts multiplies a group's minimum", builtin: "raycluster",
			kaiTest: "ray/ray_grouper_test.go (numOfHosts 2 and 3: MinAvailable 8)",
			object:  rayCluster(2, 3),
			kai:     []kaiGroup{{8, []kaiSub{{"head", 1}, {"worker-group0", 4}, {"worker-group1", 3}}}},
		},
		{
			name: "LeaderWorkerSet of size 3, LeaderCreated", builtin: "leaderworkerset",
			kaiTest: "leaderworkerset/lws_grouper_test.go TestGetPodGroupMetadata_LeaderCreated",
			object:  lws("LeaderCreated"), pods: lwsLeader,
			kai: []kaiGroup{{3, []kaiSub{{"leader", 1}, {"worker", 2}}}},
		},
		{
			name: "LeaderWorkerSet of size 3, LeaderReady, leader not yet scheduled", builtin: "leaderworkerset",
			kaiTest: "leaderworkerset/lws_grouper_test.go TestGetPodGroupMetadata_LeaderReady_LeaderPod",
			object:  lws("LeaderReady"), pods: lwsLeader,
			kai:    []kaiGroup{{1, []kaiSub{{"leader", 1}}}},
			karta:  []kaiGroup{{1, []kaiSub{{"leader", 1}, {"worker", 0}}}},
			policy: "KAI leaves out the workers' subgroup while the leader is unscheduled; karta keeps it with minimum 0",
		},
		{
			name: "JobSet AnyOrder: one gang of every replicated job", builtin: "jobset",
			kaiTest: "jobset/jobset_grouper_test.go (AnyOrder: getJobSetMinAvailable, Σ replicas × min(parallelism, completions))",
			object:  jobSet("AnyOrder"),
			kai:     []kaiGroup{{9, nil}},
			karta:   []kaiGroup{{9, []kaiSub{{"replicatedjob-driver", 1}, {"replicatedjob-workers", 8}}}},
			policy:  "the same minimum; karta adds a subgroup per replicated job, which KAI's JobSet grouper does not make",
		},
		{
			name: "JobSet InOrder", builtin: "jobset",
			kaiTest: "jobset/jobset_grouper_test.go (InOrder: a PodGroup per replicated job, getReplicatedJobMinAvailable)",
			object:  jobSet("InOrder"),
			kai:     []kaiGroup{{1, nil}, {8, nil}},
			karta:   []kaiGroup{{1, []kaiSub{{"replicatedjob-driver", 1}, {"replicatedjob-workers", 0}}}},
			policy: "KAI makes a PodGroup per replicated job; karta one gang whose minimum is the first replicated job " +
				"(the controller creates the next only once it is ready) and whose later subgroups ask for none",
		},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, ok, err := builtin.Get(tc.builtin)
			require.NoError(t, err)
			require.True(t, ok)
			p, err := b.Compile(interpreter.Options{})
			require.NoError(t, err)
			obj := decodeOne(t, tc.object)
			var pods []*unstructured.Unstructured
			if tc.pods != "" {
				pods = append(pods, decodeOne(t, tc.pods))
			}
			res, err := p.GetGangGroups(ctx, obj, pods)
			require.NoError(t, err)
			var got []kaiGroup
			for _, g := range res.Groups {
				kg := kaiGroup{min: g.MinMember}
				for _, s := range g.SubGroups {
					kg.subs = append(kg.subs, kaiSub{s.Name, s.MinMember})
				}
				got = append(got, kg)
			}
			want := tc.kai
			if tc.karta != nil {
				require.NotEmpty(t, tc.policy, "a difference from KAI needs its reason")
				assert.NotEqual(t, tc.kai, tc.karta)
				want = tc.karta
			}
			assert.Equal(t, want, got, "%s (%s)", tc.kaiTest, tc.policy)
		})
	}
}

func decodeOne(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	docs, err := object.Decode([]byte(text), "case.yaml")
	require.NoError(t, err)
	require.Len(t, docs, 1)
	return &unstructured.Unstructured{Object: docs[0].Object}
}

// pytorchJob is KAI's test job: 2 masters and 4 workers, plus extra spec
// lines.
func pytorchJob(extra string) string {
	return `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: test-job, namespace: default, uid: u}
spec:
` + extra + `  pytorchReplicaSpecs:
    Master:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime}]
    Worker:
      replicas: 4
      template:
        spec:
          containers: [{name: pytorch, image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime}]
`
}

// rayCluster is KAI's test cluster: a head and two worker groups of
// replicas 3 with minReplicas 2 and 1, on hosts0 and hosts1 hosts each.
func rayCluster(hosts0, hosts1 int) string {
	return `apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: test-cluster, namespace: default, uid: u}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-head, image: rayproject/ray:2.41.0}]
  workerGroupSpecs:
  - groupName: group0
    replicas: 3
    minReplicas: 2
    maxReplicas: 3
    numOfHosts: ` + itoa(hosts0) + `
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-worker, image: rayproject/ray:2.41.0}]
  - groupName: group1
    replicas: 3
    minReplicas: 1
    maxReplicas: 3
    numOfHosts: ` + itoa(hosts1) + `
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-worker, image: rayproject/ray:2.41.0}]
`
}

func itoa(n int) string { return strconv.Itoa(n) }

// lws is KAI's test LeaderWorkerSet: one group of size 3.
func lws(startup string) string {
	return `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws-test, namespace: default, uid: u}
spec:
  replicas: 1
  startupPolicy: ` + startup + `
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      spec:
        containers: [{name: vllm, image: vllm/vllm-openai:v0.8.5}]
`
}

// lwsLeader is the group's leader pod, as the LWS controller labels it.
const lwsLeader = `apiVersion: v1
kind: Pod
metadata:
  name: lws-test-0
  namespace: default
  labels:
    leaderworkerset.sigs.k8s.io/name: lws-test
    leaderworkerset.sigs.k8s.io/group-index: "0"
    leaderworkerset.sigs.k8s.io/worker-index: "0"
  annotations:
    leaderworkerset.sigs.k8s.io/size: "3"
spec:
  containers: [{name: vllm, image: vllm/vllm-openai:v0.8.5}]
`

// jobSet is a driver (1 Job of 1 pod) and workers (2 Jobs of parallelism
// 4), as KAI's tests sum replicas × min(parallelism, completions).
func jobSet(order string) string {
	return `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: default, uid: u}
spec:
  startupPolicy: {startupPolicyOrder: ` + order + `}
  replicatedJobs:
  - name: driver
    replicas: 1
    template:
      spec:
        parallelism: 1
        completions: 1
        template:
          spec:
            restartPolicy: Never
            containers: [{name: driver, image: python:3.12-slim}]
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 4
        completions: 4
        template:
          spec:
            restartPolicy: Never
            containers: [{name: worker, image: python:3.12-slim}]
`
}
