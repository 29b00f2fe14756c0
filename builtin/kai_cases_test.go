package builtin_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/object"
)

// kaiSub is one subgroup with its parent and minimum, by karta's name
// (KAI's names differ by policy: docs/catalog.md, "Subgroup names"), and
// the pods it holds when the case has pods.
type kaiSub struct {
	name, parent string
	min          int64
	pods         []string
}

// kaiGroup is one gang: its minimum and its subgroups.
type kaiGroup struct {
	min  int64
	subs []kaiSub
}

// sub and leaf make a case's subgroups: a top-level one, and one under a
// parent with the pods it holds.
func sub(name string, min int64, pods ...string) kaiSub {
	return kaiSub{name: name, min: min, pods: pods}
}

func leaf(name, parent string, min int64, pods ...string) kaiSub {
	return kaiSub{name: name, parent: parent, min: min, pods: pods}
}

// TestKAIGrouperCases holds the built-ins' hierarchical gangs to the
// expected values of KAI-Scheduler's own pod-grouper tests
// (kai-scheduler/KAI-Scheduler, formerly NVIDIA/KAI-Scheduler,
// pkg/podgrouper/podgrouper/plugins/…, the test named in each case), their inputs re-stated as realistic objects. Where karta
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
			kai:     []kaiGroup{{6, []kaiSub{sub("master", 2), sub("worker", 4)}}},
		},
		{
			name: "PyTorchJob with schedulingPolicy.minAvailable 5", builtin: "pytorchjob",
			kaiTest: "kubeflow/pytorch/pytorch_grouper_test.go TestGetPodGroupMetadata_OnlyMinAvailable (buildSubGroups: worker = minAvailable - master)",
			object:  pytorchJob("  runPolicy: {schedulingPolicy: {minAvailable: 5}}\n"),
			kai:     []kaiGroup{{5, []kaiSub{sub("master", 2), sub("worker", 3)}}},
		},
		{
			name: "PyTorchJob with elasticPolicy.minReplicas 3", builtin: "pytorchjob",
			kaiTest: "kubeflow/pytorch/pytorch_grouper_test.go TestGetPodGroupMetadata_OnlyMinReplicas",
			object:  pytorchJob("  elasticPolicy: {minReplicas: 3, maxReplicas: 4}\n"),
			kai:     []kaiGroup{{3, []kaiSub{sub("master", 2), sub("worker", 1)}}},
			karta:   []kaiGroup{{5, []kaiSub{sub("master", 2), sub("worker", 3)}}},
			policy: "KAI takes elasticPolicy.minReplicas as the whole job's minimum; the training operator's elastic " +
				"policy bounds the workers, so karta counts the masters plus minReplicas workers",
		},
		{
			name: "RayCluster: head and two worker groups by minReplicas", builtin: "raycluster",
			kaiTest: "ray/ray_grouper_test.go (MinAvailable: 1 (head) + 2 (group0 minReplicas) + 1 (group1 minReplicas) = 4)",
			object:  rayCluster(1, 1),
			kai:     []kaiGroup{{4, []kaiSub{sub("head", 1), sub("worker-group0", 2), sub("worker-group1", 1)}}},
		},
		{
			name: "RayCluster: numOfHosts multiplies a group's minimum", builtin: "raycluster",
			kaiTest: "ray/ray_grouper_test.go (numOfHosts 2 and 3: MinAvailable 8)",
			object:  rayCluster(2, 3),
			kai:     []kaiGroup{{8, []kaiSub{sub("head", 1), sub("worker-group0", 4), sub("worker-group1", 3)}}},
		},
		{
			name: "RayService: its cluster's head and worker groups, from rayClusterConfig", builtin: "rayservice",
			kaiTest: "ray/ray_grouper_test.go TestGetPodGroupMetadata_RayService (the active cluster's MinAvailable 1 + 2 + 1 = 4)",
			object:  rayService(), pods: rayServiceHead,
			kai: []kaiGroup{{4, []kaiSub{sub("head", 1, "default/test-service-x7k2q-head"), sub("worker-group0", 2),
				sub("worker-group1", 1)}}},
		},
		{
			name: "LeaderWorkerSet of size 3, LeaderCreated", builtin: "leaderworkerset",
			kaiTest: "leaderworkerset/lws_grouper_test.go TestGetPodGroupMetadata_LeaderCreated",
			object:  lws("LeaderCreated"), pods: lwsLeader,
			kai: []kaiGroup{{3, []kaiSub{sub("leader", 1, "default/lws-test-0"), sub("worker", 2)}}},
		},
		{
			name: "LeaderWorkerSet of size 3, LeaderReady, leader not yet scheduled", builtin: "leaderworkerset",
			kaiTest: "leaderworkerset/lws_grouper_test.go TestGetPodGroupMetadata_LeaderReady_LeaderPod",
			object:  lws("LeaderReady"), pods: lwsLeader,
			kai:    []kaiGroup{{1, []kaiSub{sub("leader", 1, "default/lws-test-0")}}},
			karta:  []kaiGroup{{1, []kaiSub{sub("leader", 1, "default/lws-test-0"), sub("worker", 0)}}},
			policy: "KAI leaves out the workers' subgroup while the leader is unscheduled; karta keeps it with minimum 0",
		},
		// KAI's JobSet grouper (kai-scheduler/KAI-Scheduler, the
		// hierarchical one) states its root and parents as minSubGroup:
		// every replicated job (1 under InOrder), every replica; its leaves
		// as minAvailable, the Job's parallelism. In pods, which is how
		// karta states every level, that is each leaf's pods and their sums.
		{
			name: "JobSet, one replicated job of 3 replicas", builtin: "jobset",
			kaiTest: "jobset/jobset_grouper_test.go TestSingleReplicatedJobMultipleReplicas (parent minSubGroup 3, leaves minAvailable 4)",
			object:  jobSet("", rj{"worker", 3, 4, 0}),
			pods:    jobSetPod("worker", 2),
			kai: []kaiGroup{{12, []kaiSub{sub("replicatedjob-worker", 12), leaf("replicatedjob-worker-replica-0", "replicatedjob-worker", 4),
				leaf("replicatedjob-worker-replica-1", "replicatedjob-worker", 4),
				leaf("replicatedjob-worker-replica-2", "replicatedjob-worker", 4, "default/js-worker-2-0")}}},
		},
		{
			name: "JobSet, replicas default to 1", builtin: "jobset",
			kaiTest: "jobset/jobset_grouper_test.go TestReplicasDefaultsToOne (parent minSubGroup 1)",
			object:  jobSet("", rj{"worker", -1, 2, 0}),
			kai:     []kaiGroup{{2, []kaiSub{sub("replicatedjob-worker", 2), leaf("replicatedjob-worker-replica-0", "replicatedjob-worker", 2)}}},
		},
		{
			name: "JobSet AnyOrder: leader and workers, a pod in its Job's leaf", builtin: "jobset",
			kaiTest: "jobset/jobset_grouper_test.go TestMultipleReplicatedJobsAnyOrder (root minSubGroup 2), TestPodRoutingFindsCorrectLeaf",
			object:  jobSet("AnyOrder", rj{"leader", 1, 1, 0}, rj{"worker", 2, 4, 0}),
			pods:    jobSetPod("worker", 1),
			kai: []kaiGroup{{9, []kaiSub{sub("replicatedjob-leader", 1), leaf("replicatedjob-leader-replica-0", "replicatedjob-leader", 1),
				sub("replicatedjob-worker", 8), leaf("replicatedjob-worker-replica-0", "replicatedjob-worker", 4),
				leaf("replicatedjob-worker-replica-1", "replicatedjob-worker", 4, "default/js-worker-1-0")}}},
		},
		{
			name: "JobSet InOrder: the first replicated job", builtin: "jobset",
			kaiTest: "jobset/jobset_grouper_test.go TestStartupPolicyInOrderRootMinSubGroup (root minSubGroup 1)",
			object:  jobSet("InOrder", rj{"leader", 1, 1, 0}, rj{"worker", 2, 4, 0}),
			kai: []kaiGroup{{1, []kaiSub{sub("replicatedjob-leader", 1), leaf("replicatedjob-leader-replica-0", "replicatedjob-leader", 1),
				sub("replicatedjob-worker", 8), leaf("replicatedjob-worker-replica-0", "replicatedjob-worker", 4),
				leaf("replicatedjob-worker-replica-1", "replicatedjob-worker", 4)}}},
			karta: []kaiGroup{{1, []kaiSub{sub("replicatedjob-leader", 1), leaf("replicatedjob-leader-replica-0", "replicatedjob-leader", 1),
				sub("replicatedjob-worker", 0), leaf("replicatedjob-worker-replica-0", "replicatedjob-worker", 0),
				leaf("replicatedjob-worker-replica-1", "replicatedjob-worker", 0)}}},
			policy: "KAI's minSubGroup 1 lets the first replicated job start alone while the workers' subgroup keeps its " +
				"minimum for when it starts; karta states the group's minimum as the first replicated job's pods, taken " +
				"from the last subgroups first, so the later ones ask for none (the controller creates them once it is ready)",
		},
		{
			name: "JobSet, completions below parallelism", builtin: "jobset",
			kaiTest: "jobset/jobset_grouper_test.go singleReplicaSubGroupMinMember (a leaf's minAvailable is parallelism)",
			object:  jobSet("AnyOrder", rj{"worker", 2, 4, 2}),
			kai: []kaiGroup{{8, []kaiSub{sub("replicatedjob-worker", 8), leaf("replicatedjob-worker-replica-0", "replicatedjob-worker", 4),
				leaf("replicatedjob-worker-replica-1", "replicatedjob-worker", 4)}}},
			karta: []kaiGroup{{4, []kaiSub{sub("replicatedjob-worker", 4), leaf("replicatedjob-worker-replica-0", "replicatedjob-worker", 2),
				leaf("replicatedjob-worker-replica-1", "replicatedjob-worker", 2)}}},
			policy: "the Job controller runs at most min(parallelism, completions) pods of a Job at once, as Kueue counts " +
				"them; KAI's leaf asks for parallelism, which such a Job never runs",
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
					ks := kaiSub{name: s.Name, parent: s.Parent, min: s.MinMember}
					if len(s.Pods) > 0 {
						ks.pods = s.Pods
					}
					kg.subs = append(kg.subs, ks)
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

// rayService is KAI's test RayService: its active cluster is KAI's test
// cluster, which a RayService states in spec.rayClusterConfig.
func rayService() string {
	cluster := rayCluster(1, 1)
	spec := cluster[strings.Index(cluster, "spec:\n")+len("spec:\n"):]
	return `apiVersion: ray.io/v1
kind: RayService
metadata: {name: test-service, namespace: default, uid: u}
spec:
  serveConfigV2: |
    applications: [{name: app, import_path: app:build}]
  rayClusterConfig:
` + "  " + strings.ReplaceAll(strings.TrimSuffix(spec, "\n"), "\n", "\n  ") + "\n"
}

// rayServiceHead is the head pod of the service's cluster, as KubeRay
// labels it.
const rayServiceHead = `apiVersion: v1
kind: Pod
metadata:
  name: test-service-x7k2q-head
  namespace: default
  labels:
    ray.io/cluster: test-service-x7k2q
    ray.io/node-type: head
    ray.io/group: headgroup
spec:
  containers: [{name: ray-head, image: rayproject/ray:2.41.0}]
`

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

// rj is one replicated job of a test JobSet: replicas (-1 leaves the
// field out, for the CRD default), parallelism and completions (0 leaves
// it out).
type rj struct {
	name                               string
	replicas, parallelism, completions int
}

// jobSet is KAI's test JobSet with the startup policy order (none when
// empty) and the replicated jobs, as realistic objects.
func jobSet(order string, jobs ...rj) string {
	var b strings.Builder
	b.WriteString("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js, namespace: default, uid: u}\nspec:\n")
	if order != "" {
		b.WriteString("  startupPolicy: {startupPolicyOrder: " + order + "}\n")
	}
	b.WriteString("  replicatedJobs:\n")
	for _, j := range jobs {
		b.WriteString("  - name: " + j.name + "\n")
		if j.replicas >= 0 {
			b.WriteString("    replicas: " + itoa(j.replicas) + "\n")
		}
		b.WriteString("    template:\n      spec:\n        parallelism: " + itoa(j.parallelism) + "\n")
		if j.completions > 0 {
			b.WriteString("        completions: " + itoa(j.completions) + "\n")
		}
		b.WriteString("        template:\n          spec:\n            restartPolicy: Never\n" +
			"            containers: [{name: " + j.name + ", image: python:3.12-slim}]\n")
	}
	return b.String()
}

// jobSetPod is the first pod of Job index of replicated job name, as the
// JobSet and Job controllers label it.
func jobSetPod(name string, index int) string {
	job := "js-" + name + "-" + itoa(index)
	return `apiVersion: v1
kind: Pod
metadata:
  name: ` + job + `-0
  namespace: default
  labels:
    jobset.sigs.k8s.io/jobset-name: js
    jobset.sigs.k8s.io/replicatedjob-name: ` + name + `
    jobset.sigs.k8s.io/job-index: "` + itoa(index) + `"
    batch.kubernetes.io/job-name: ` + job + `
    batch.kubernetes.io/job-completion-index: "0"
spec:
  restartPolicy: Never
  containers: [{name: ` + name + `, image: python:3.12-slim}]
`
}
