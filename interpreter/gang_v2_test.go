package interpreter

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/karta"
)

// Hierarchical v2 groups (docs/karta.md, "The v2 podGroup"): a group per
// instance or replica of podGroup.componentName, nested subgroups and
// per-instance subgroups, with their minimums, on the testdata objects.

// setPodGroupV2 replaces the gang instructions of k with a v2 podGroup.
func setPodGroupV2(k *karta.Karta, pg karta.PodGroupV2) {
	k.Spec.Instructions = &karta.Instructions{GangScheduling: &karta.GangScheduling{PodGroup: &pg}}
}

func i64(n int64) *int64 { return &n }

func TestGangV2Hierarchy(t *testing.T) {
	lwsGroup := func(idx string, min int64, subMins [2]int64) Group {
		return Group{Name: "pg-u-lws-" + idx, Definition: "lws", MinMember: min, MinSubGroups: i64(2),
			Pods: []string{"serving/lws-" + idx, "serving/lws-" + idx + "-1", "serving/lws-" + idx + "-2", "serving/lws-" + idx + "-3"},
			SubGroups: []SubGroup{
				{Name: "leader", MinMember: subMins[0], Pods: []string{"serving/lws-" + idx}},
				{Name: "worker", MinMember: subMins[1], Pods: []string{"serving/lws-" + idx + "-1", "serving/lws-" + idx + "-2", "serving/lws-" + idx + "-3"}},
			}}
	}
	cases := []struct {
		name   string
		karta  string
		object string
		pg     karta.PodGroupV2
		// edit changes the object before the call.
		edit func(obj map[string]any)
		want []Group
	}{
		{
			name: "LWS: a group per LWS group with leader and worker subgroups", karta: "leaderworkerset", object: "leaderworkerset",
			pg: karta.PodGroupV2{Name: "lws", ComponentName: "group",
				SubGroups: []karta.SubGroup{{ComponentName: "leader"}, {ComponentName: "worker"}}},
			want: []Group{lwsGroup("0", 4, [2]int64{1, 3}), lwsGroup("1", 4, [2]int64{1, 3})},
		},
		{
			name: "LWS LeaderReady: the stated minimum 1 leaves the workers' subgroup nothing to wait for", karta: "leaderworkerset", object: "leaderworkerset",
			pg: karta.PodGroupV2{Name: "lws", ComponentName: "group",
				MinMemberPath: `if .spec.startupPolicy == "LeaderReady" then 1 else null end`,
				SubGroups:     []karta.SubGroup{{ComponentName: "leader"}, {ComponentName: "worker"}}},
			edit: func(obj map[string]any) { obj["spec"].(map[string]any)["startupPolicy"] = "LeaderReady" },
			want: []Group{lwsGroup("0", 1, [2]int64{1, 0}), lwsGroup("1", 1, [2]int64{1, 0})},
		},
		{
			name: "LWS: a subgroup nests under its ancestor's and counts its pods", karta: "leaderworkerset", object: "leaderworkerset",
			pg: karta.PodGroupV2{Name: "lws",
				SubGroups: []karta.SubGroup{{ComponentName: "group"}, {ComponentName: "worker"}}},
			want: []Group{{Name: "pg-u-lws", Definition: "lws", MinMember: 8, MinSubGroups: i64(1),
				Pods: []string{"serving/lws-0", "serving/lws-0-1", "serving/lws-0-2", "serving/lws-0-3",
					"serving/lws-1", "serving/lws-1-1", "serving/lws-1-2", "serving/lws-1-3"},
				SubGroups: []SubGroup{
					{Name: "group", MinMember: 8, Pods: []string{"serving/lws-0", "serving/lws-1"}},
					{Name: "worker", Parent: "group", MinMember: 6, Pods: []string{"serving/lws-0-1", "serving/lws-0-2", "serving/lws-0-3",
						"serving/lws-1-1", "serving/lws-1-2", "serving/lws-1-3"}},
				}}},
		},
		{
			name: "LWS: a stated minimum takes the child's pods before the parent's own", karta: "leaderworkerset", object: "leaderworkerset",
			pg: karta.PodGroupV2{Name: "lws", MinMemberPath: "3",
				SubGroups: []karta.SubGroup{{ComponentName: "group"}, {ComponentName: "worker"}}},
			want: []Group{{Name: "pg-u-lws", Definition: "lws", MinMember: 3, MinSubGroups: i64(1),
				Pods: []string{"serving/lws-0", "serving/lws-0-1", "serving/lws-0-2", "serving/lws-0-3",
					"serving/lws-1", "serving/lws-1-1", "serving/lws-1-2", "serving/lws-1-3"},
				SubGroups: []SubGroup{
					{Name: "group", MinMember: 3, Pods: []string{"serving/lws-0", "serving/lws-1"}},
					{Name: "worker", Parent: "group", MinMember: 1, Pods: []string{"serving/lws-0-1", "serving/lws-0-2", "serving/lws-0-3",
						"serving/lws-1-1", "serving/lws-1-2", "serving/lws-1-3"}},
				}}},
		},
		{
			name: "RayCluster: head and a subgroup per worker group, from its minReplicas", karta: "raycluster", object: "raycluster",
			pg: karta.PodGroupV2{Name: "cluster",
				SubGroups: []karta.SubGroup{{ComponentName: "head"}, {ComponentName: "worker", PerInstance: true}}},
			want: []Group{{Name: "pg-u-cluster", Definition: "cluster", MinMember: 2, MinSubGroups: i64(2),
				Pods: []string{"ray/rc-head-8kq4w", "ray/rc-small-group-worker-2fj6d", "ray/rc-small-group-worker-b5m9t", "ray/rc-small-group-worker-x7k2q"},
				SubGroups: []SubGroup{
					{Name: "head", MinMember: 1, Pods: []string{"ray/rc-head-8kq4w"}},
					{Name: "worker-small-group", MinMember: 1, Pods: []string{"ray/rc-small-group-worker-2fj6d", "ray/rc-small-group-worker-b5m9t", "ray/rc-small-group-worker-x7k2q"}},
				}}},
		},
		{
			name: "JobSet: a subgroup per replicated job; a stated minimum keeps the first whole", karta: "jobset", object: "jobset",
			pg: karta.PodGroupV2{Name: "jobset", MinMemberPath: "1",
				SubGroups: []karta.SubGroup{{ComponentName: "replicatedjob", PerInstance: true}}},
			want: []Group{{Name: "pg-u-jobset", Definition: "jobset", MinMember: 1, MinSubGroups: i64(2),
				Pods: []string{"research/js-driver-0-0-abcde", "research/js-workers-0-0-q00", "research/js-workers-0-1-q01",
					"research/js-workers-0-2-q02", "research/js-workers-0-3-q03",
					"research/js-workers-1-0-k2x9p", "research/js-workers-1-1-q11", "research/js-workers-1-2-q12", "research/js-workers-1-3-q13"},
				SubGroups: []SubGroup{
					{Name: "replicatedjob-driver", MinMember: 1, Pods: []string{"research/js-driver-0-0-abcde"}},
					{Name: "replicatedjob-workers", MinMember: 0, Pods: []string{"research/js-workers-0-0-q00", "research/js-workers-0-1-q01",
						"research/js-workers-0-2-q02", "research/js-workers-0-3-q03",
						"research/js-workers-1-0-k2x9p", "research/js-workers-1-1-q11", "research/js-workers-1-2-q12", "research/js-workers-1-3-q13"}},
				}}},
		},
		{
			name: "JobSet: a group per replicated job counts that job", karta: "jobset", object: "jobset",
			pg: karta.PodGroupV2{Name: "rj", ComponentName: "replicatedjob",
				SubGroups: []karta.SubGroup{{ComponentName: "replicatedjob"}}},
			want: []Group{
				{Name: "pg-u-rj-driver", Definition: "rj", MinMember: 1, MinSubGroups: i64(1),
					Pods:      []string{"research/js-driver-0-0-abcde"},
					SubGroups: []SubGroup{{Name: "replicatedjob", MinMember: 1, Pods: []string{"research/js-driver-0-0-abcde"}}}},
				{Name: "pg-u-rj-workers", Definition: "rj", MinMember: 8, MinSubGroups: i64(1),
					Pods: []string{"research/js-workers-0-0-q00", "research/js-workers-0-1-q01", "research/js-workers-0-2-q02", "research/js-workers-0-3-q03",
						"research/js-workers-1-0-k2x9p", "research/js-workers-1-1-q11", "research/js-workers-1-2-q12", "research/js-workers-1-3-q13"},
					SubGroups: []SubGroup{{Name: "replicatedjob", MinMember: 8, Pods: []string{"research/js-workers-0-0-q00",
						"research/js-workers-0-1-q01", "research/js-workers-0-2-q02", "research/js-workers-0-3-q03",
						"research/js-workers-1-0-k2x9p", "research/js-workers-1-1-q11", "research/js-workers-1-2-q12", "research/js-workers-1-3-q13"}}}},
			},
		},
		{
			name: "JobSet: a leaf per replica under each replicated job", karta: "jobset", object: "jobset",
			pg:   karta.PodGroupV2{Name: "jobset", SubGroups: []karta.SubGroup{jobSetLeaves(".spec.replicatedJobs[]? | .replicas // 1")}},
			want: []Group{jobSetGroup(9, [6]int64{1, 1, 8, 4, 4})},
		},
		{
			name: "JobSet: a stated minimum empties the last leaves first, and their parents with them", karta: "jobset", object: "jobset",
			pg: karta.PodGroupV2{Name: "jobset", MinMemberPath: "3",
				SubGroups: []karta.SubGroup{jobSetLeaves(".spec.replicatedJobs[]? | .replicas // 1")}},
			want: []Group{jobSetGroup(3, [6]int64{1, 1, 2, 2, 0})},
		},
		{
			name: "JobSet: leaves share their subgroup's pods, the first ones one more", karta: "jobset", object: "jobset",
			pg: karta.PodGroupV2{Name: "jobset",
				SubGroups: []karta.SubGroup{jobSetLeaves(`.spec.replicatedJobs[]? | if .name == "workers" then 3 else 1 end`)}},
			want: []Group{jobSetGroup(9, [6]int64{1, 1, 8, 3, 3, 2})},
		},
		{
			name: "JobSet: a count of 0 or null makes no leaves", karta: "jobset", object: "jobset",
			pg: karta.PodGroupV2{Name: "jobset",
				SubGroups: []karta.SubGroup{jobSetLeaves(`.spec.replicatedJobs[]? | if .name == "workers" then 0 else null end`)}},
			want: []Group{{Name: "pg-u-jobset", Definition: "jobset", MinMember: 9, MinSubGroups: i64(2), Pods: jobSetPods(),
				SubGroups: []SubGroup{
					{Name: "replicatedjob-driver", MinMember: 1, Pods: jobSetPods()[:1]},
					{Name: "replicatedjob-workers", MinMember: 8, Pods: jobSetPods()[1:]},
				}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := gangKarta(t, tc.karta)
			setPodGroupV2(k, tc.pg)
			require.Empty(t, karta.Validate(k).Errors())
			obj := gangObj(t, tc.object)
			if tc.edit != nil {
				tc.edit(obj)
			}
			pods := gangDocs(t, tc.object+".pods")
			g := compileGang(t, k)
			res := runGang(t, g, obj, pods)
			assert.Empty(t, res.Unmatched)
			assert.Equal(t, tc.want, res.Groups)

			// PlacePod reports the minimum of the pod's group.
			for _, pod := range pods {
				pl, reason, err := g.placeOne(context.Background(), gojqEvaluator{}, obj, pod)
				require.NoError(t, err)
				require.Empty(t, reason)
				grp := groupOf(t, res, pl.Group)
				assert.Equal(t, grp.MinMember, pl.MinMember, "PlacePod of %s", PodKey(pod))
				sub := ""
				for _, sg := range grp.SubGroups {
					if slices.Contains(sg.Pods, PodKey(pod)) {
						sub = sg.Name
					}
				}
				assert.Equal(t, sub, pl.SubGroup, "PlacePod's subgroup of %s", PodKey(pod))
			}
			viaHook, err := runProgramGang(t, k, obj, pods)
			require.NoError(t, err)
			assert.Equal(t, res, viaHook, "the hook answers as the model on gojq")
		})
	}
}

// A scoped group places only the pods under its component; a pod whose
// scope key cannot be read is unmatched with the reason.
func TestGangV2ScopeUnmatched(t *testing.T) {
	k := gangKarta(t, "leaderworkerset")
	setPodGroupV2(k, karta.PodGroupV2{Name: "lws", ComponentName: "group", SubGroups: []karta.SubGroup{{ComponentName: "leader"}}})
	g := compileGang(t, k)
	obj := gangObj(t, "leaderworkerset")
	pod := gangPod(t, `
apiVersion: v1
kind: Pod
metadata:
  name: lws-x
  namespace: serving
  labels:
    leaderworkerset.sigs.k8s.io/name: lws
    leaderworkerset.sigs.k8s.io/worker-index: "0"
`)
	res := runGang(t, g, obj, []map[string]any{pod})
	assert.Empty(t, res.Groups)
	assert.Equal(t, []Unmatched{{Pod: "serving/lws-x", Reason: `component "group": replicaSelector yields null, want a non-empty string or a number`}}, res.Unmatched)
}

// A Lua GetGangGroups that returns subgroups with parent (and a
// subgroup's minSubGroups) round-trips through the typed result; a subgroup without pods has an empty list, as
// every list of the result.
func TestGangV2ScriptParentRoundTrips(t *testing.T) {
	k := gangKarta(t, "leaderworkerset")
	k.Spec.LuaScript = `
function GetGangGroups(obj, pods)
  return {groups = {{name = "g", definition = "d", minMember = 2, pods = {},
    subGroups = {{name = "a", minMember = 2, minSubGroups = 1, pods = {}}, {name = "b", parent = "a", minMember = 1}}}}}
end`
	p, err := Compile(k, Options{})
	require.NoError(t, err)
	res, err := p.GetGangGroups(context.Background(), &unstructured.Unstructured{Object: gangObj(t, "leaderworkerset")}, nil)
	require.NoError(t, err)
	require.Len(t, res.Groups, 1)
	assert.Equal(t, []SubGroup{{Name: "a", MinMember: 2, MinSubGroups: i64(1), Pods: []string{}}, {Name: "b", Parent: "a", MinMember: 1, Pods: []string{}}},
		res.Groups[0].SubGroups)
}

// jobSetLeaves is the JobSet's per-instance replicatedjob entry split per
// replica, with countPath as the replica counts.
func jobSetLeaves(countPath string) karta.SubGroup {
	return karta.SubGroup{ComponentName: "replicatedjob", PerInstance: true, PerReplica: &karta.SubGroupReplicas{
		CountPath: countPath, KeyPath: `.metadata.labels["jobset.sigs.k8s.io/job-index"]`}}
}

// jobSetPods are the testdata JobSet's pods, sorted: the driver's, then
// Job 0's and Job 1's of the workers.
func jobSetPods() []string {
	return []string{"research/js-driver-0-0-abcde", "research/js-workers-0-0-q00", "research/js-workers-0-1-q01",
		"research/js-workers-0-2-q02", "research/js-workers-0-3-q03",
		"research/js-workers-1-0-k2x9p", "research/js-workers-1-1-q11", "research/js-workers-1-2-q12", "research/js-workers-1-3-q13"}
}

// jobSetGroup is the testdata JobSet's group with a leaf per replica:
// mins are the driver's subgroup and leaf, the workers' subgroup and its
// leaves (two, or three when mins[5] is set; the pods are in the first two).
func jobSetGroup(min int64, mins [6]int64) Group {
	pods := jobSetPods()
	subs := []SubGroup{
		{Name: "replicatedjob-driver", MinMember: mins[0], Pods: []string{}},
		{Name: "replicatedjob-driver-replica-0", Parent: "replicatedjob-driver", MinMember: mins[1], Pods: pods[:1]},
		{Name: "replicatedjob-workers", MinMember: mins[2], Pods: []string{}},
		{Name: "replicatedjob-workers-replica-0", Parent: "replicatedjob-workers", MinMember: mins[3], Pods: pods[1:5]},
		{Name: "replicatedjob-workers-replica-1", Parent: "replicatedjob-workers", MinMember: mins[4], Pods: pods[5:]},
	}
	if mins[5] > 0 {
		subs = append(subs, SubGroup{Name: "replicatedjob-workers-replica-2", Parent: "replicatedjob-workers", MinMember: mins[5], Pods: []string{}})
	}
	return Group{Name: "pg-u-jobset", Definition: "jobset", MinMember: min, MinSubGroups: i64(2), Pods: pods, SubGroups: subs}
}

// A pod whose replica index is missing or not one of its subgroup's
// replicas is unmatched with the reason; the other pods are grouped.
func TestGangV2PerReplicaUnmatched(t *testing.T) {
	k := gangKarta(t, "jobset")
	setPodGroupV2(k, karta.PodGroupV2{Name: "jobset", SubGroups: []karta.SubGroup{jobSetLeaves(".spec.replicatedJobs[]? | .replicas // 1")}})
	g := compileGang(t, k)
	obj := gangObj(t, "jobset")
	pod := func(name, index string) map[string]any {
		p := gangPod(t, `
apiVersion: v1
kind: Pod
metadata:
  name: `+name+`
  namespace: research
  labels:
    jobset.sigs.k8s.io/jobset-name: js
    jobset.sigs.k8s.io/replicatedjob-name: workers
`)
		if index != "" {
			p["metadata"].(map[string]any)["labels"].(map[string]any)["jobset.sigs.k8s.io/job-index"] = index
		}
		return p
	}
	pods := []map[string]any{pod("no-index", ""), pod("past-the-end", "2"), pod("not-canonical", "01"), pod("negative", "-1"), pod("ok", "1")}
	res := runGang(t, g, obj, pods)
	assert.Equal(t, []Unmatched{
		{Pod: "research/no-index", Reason: "subgroup replicatedjob: perReplica.keyPath yields null, want a non-empty string or a number"},
		{Pod: "research/past-the-end", Reason: `replica "2" not found among the 2 replicas of subgroup replicatedjob`},
		{Pod: "research/not-canonical", Reason: `replica "01" not found among the 2 replicas of subgroup replicatedjob`},
		{Pod: "research/negative", Reason: `replica "-1" not found among the 2 replicas of subgroup replicatedjob`},
	}, res.Unmatched)
	require.Len(t, res.Groups, 1)
	assert.Equal(t, []string{"research/ok"}, res.Groups[0].SubGroups[4].Pods)
}

// A countPath that yields the wrong number of values, a value that is no
// count, or more leaves than the bound fails the call, naming the field.
func TestGangV2PerReplicaCountErrors(t *testing.T) {
	for _, tc := range []struct {
		name, countPath string
		perInstance     bool
		want            string
	}{
		{"one count for two instances", "2", true,
			`podGroup.subGroups[0].perReplica.countPath: component "replicatedjob": perReplica.countPath yields 1 value(s) for 2 id(s) [driver workers]`},
		{"several counts for one subgroup", ".spec.replicatedJobs[]?.replicas", false,
			"podGroup.subGroups[0].perReplica.countPath: yields 2 values, want exactly one"},
		{"a count that is no count", `.spec.replicatedJobs[]? | "many"`, true,
			`podGroup.subGroups[0].perReplica.countPath: instance "driver": `},
		{"a hostile count", "2147483647", false,
			"podGroup.subGroups[0].perReplica.countPath: makes more than 10000 per-replica subgroups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := gangKarta(t, "jobset")
			sg := jobSetLeaves(tc.countPath)
			sg.PerInstance = tc.perInstance
			setPodGroupV2(k, karta.PodGroupV2{Name: "jobset", SubGroups: []karta.SubGroup{sg}})
			g := compileGang(t, k)
			_, err := g.gangGroups(context.Background(), gojqEvaluator{}, gangObj(t, "jobset"), gangDocs(t, "jobset.pods"))
			var oe *GangObjectError
			require.ErrorAs(t, err, &oe)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A subgroup's minMemberPath states its minimum per instance, 0 included
// (a Volcano task with minAvailable: 0), where the scale's minReplicas of
// 0 falls back to replicas; null keeps the computed count; the group's
// minimum is the stated minimums' sum, before its own minMemberPath.
func TestGangV2StatedSubGroupMinimums(t *testing.T) {
	k := gangKarta(t, "jobset")
	run := func(minPath, groupMin string) Group {
		t.Helper()
		sg := karta.SubGroup{ComponentName: "replicatedjob", PerInstance: true, MinMemberPath: minPath}
		setPodGroupV2(k, karta.PodGroupV2{Name: "jobset", MinMemberPath: groupMin, SubGroups: []karta.SubGroup{sg}})
		res := runGang(t, compileGang(t, k), gangObj(t, "jobset"), gangDocs(t, "jobset.pods"))
		require.Len(t, res.Groups, 1)
		return res.Groups[0]
	}
	mins := func(g Group) []int64 {
		var out []int64
		for _, s := range g.SubGroups {
			out = append(out, s.MinMember)
		}
		return out
	}
	g := run("", "")
	assert.Equal(t, []int64{1, 8}, mins(g), "computed")
	assert.Equal(t, int64(9), g.MinMember)

	g = run(`.spec.replicatedJobs[]? | if .name == "workers" then 0 else null end`, "")
	assert.Equal(t, []int64{1, 0}, mins(g), "0 is stated, null keeps the count")
	assert.Equal(t, int64(1), g.MinMember)

	g = run(`.spec.replicatedJobs[]? | if .name == "workers" then "3" else 1 end`, "6")
	assert.Equal(t, []int64{1, 3}, mins(g), "a stated group minimum above the sum leaves the subgroups")
	assert.Equal(t, int64(6), g.MinMember)

	g = run(`.spec.replicatedJobs[]? | 0`, "")
	assert.Equal(t, []int64{0, 0}, mins(g))
	assert.Equal(t, int64(1), g.MinMember, "a gang of no pod is no gang")

	for _, tc := range []struct{ name, path, want string }{
		{"one value for two instances", "2",
			`podGroup.subGroups[0].minMemberPath: component "replicatedjob": minMemberPath yields 1 value(s) for 2 id(s) [driver workers]`},
		{"a value that is no count", `.spec.replicatedJobs[]? | "some"`, `podGroup.subGroups[0].minMemberPath: instance "driver": `},
		{"a negative count", `.spec.replicatedJobs[]? | -1`, `podGroup.subGroups[0].minMemberPath: instance "driver": `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sg := karta.SubGroup{ComponentName: "replicatedjob", PerInstance: true, MinMemberPath: tc.path}
			setPodGroupV2(k, karta.PodGroupV2{Name: "jobset", SubGroups: []karta.SubGroup{sg}})
			_, err := compileGang(t, k).gangGroups(context.Background(), gojqEvaluator{}, gangObj(t, "jobset"), gangDocs(t, "jobset.pods"))
			var oe *GangObjectError
			require.ErrorAs(t, err, &oe)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A per-replica entry's perReplica.minCountPath says how many of its
// leaves each subgroup needs (a Volcano task's partitionPolicy
// minPartitions): the subgroup reports them as minSubGroups and counts
// the first ones, each whole, or its stated minimum when that is more; a
// leaf it does not need gives up nothing to a stated group minimum. Its
// leaves split the pods that exist, whatever the component's
// minReplicas: a Volcano task's partitions are whole at any minAvailable.
// On the testdata JobSet: the driver's one Job of 1 pod, the workers' two
// Jobs of 4.
func TestGangV2NeededLeaves(t *testing.T) {
	workers := func(v string) string {
		return `.spec.replicatedJobs[]? | if .name == "workers" then ` + v + ` else null end`
	}
	cases := []struct {
		name                        string
		minCount, minPath, groupMin string
		// minReplicas is the replicatedjob component's minReplicasPath.
		minReplicas string
		// mins are the subgroups' minimums (driver, its leaf, workers,
		// its two leaves); need the workers' minSubGroups, -1 for none.
		mins  []int64
		need  int64
		total int64
		err   string
	}{
		{name: "no minCountPath: every leaf", mins: []int64{1, 1, 8, 4, 4}, need: -1, total: 9},
		{name: "null: every leaf", minCount: workers("null"), mins: []int64{1, 1, 8, 4, 4}, need: -1, total: 9},
		{name: "one of two leaves, whole", minCount: workers("1"), mins: []int64{1, 1, 4, 4, 4}, need: 1, total: 5},
		{name: "all of them, stated", minCount: workers("2"), mins: []int64{1, 1, 8, 4, 4}, need: 2, total: 9},
		{name: "none of them", minCount: workers("0"), mins: []int64{1, 1, 0, 4, 4}, need: 0, total: 1},
		{name: "a stated minimum above the leaves needed counts", minCount: workers("1"), minPath: workers("6"),
			mins: []int64{1, 1, 6, 4, 4}, need: 1, total: 7},
		{name: "a stated minimum below the leaves needed does not", minCount: workers("2"), minPath: workers("3"),
			mins: []int64{1, 1, 8, 4, 4}, need: 2, total: 9},
		{name: "without minCountPath the leaves share a stated minimum", minPath: workers("5"),
			mins: []int64{1, 1, 5, 3, 2}, need: -1, total: 6},
		{name: "a stated group minimum is taken from the leaves needed, not the others", minCount: workers("1"), groupMin: "3",
			mins: []int64{1, 1, 2, 2, 4}, need: 1, total: 3},
		{name: "leaves split the replicas, not minReplicas", minCount: workers("1"), minReplicas: workers("6"),
			mins: []int64{1, 1, 4, 4, 4}, need: 1, total: 5},
		{name: "with minReplicas, a stated minimum above the leaves needed counts", minCount: workers("1"), minReplicas: workers("6"), minPath: workers("6"),
			mins: []int64{1, 1, 6, 4, 4}, need: 1, total: 7},
		{name: "without minCountPath the leaves share minReplicas", minReplicas: workers("6"),
			mins: []int64{1, 1, 6, 3, 3}, need: -1, total: 7},
		{name: "more leaves than replicas", minCount: workers("3"),
			err: `podGroup.subGroups[0].perReplica.minCountPath: instance "workers": yields 3, more than the 2 replicas of its subgroup`},
		{name: "one value for two instances", minCount: "1",
			err: `podGroup.subGroups[0].perReplica.minCountPath: component "replicatedjob": perReplica.minCountPath yields 1 value(s) for 2 id(s) [driver workers]`},
		{name: "a value that is no count", minCount: workers(`"all"`), err: `podGroup.subGroups[0].perReplica.minCountPath: instance "workers": `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := gangKarta(t, "jobset")
			kartaComponent(k, "replicatedjob").ScaleDefinition.MinReplicasPath = tc.minReplicas
			sg := jobSetLeaves(".spec.replicatedJobs[]? | .replicas // 1")
			sg.PerReplica.MinCountPath, sg.MinMemberPath = tc.minCount, tc.minPath
			setPodGroupV2(k, karta.PodGroupV2{Name: "jobset", MinMemberPath: tc.groupMin, SubGroups: []karta.SubGroup{sg}})
			g := compileGang(t, k)
			if tc.err != "" {
				_, err := g.gangGroups(context.Background(), gojqEvaluator{}, gangObj(t, "jobset"), gangDocs(t, "jobset.pods"))
				var oe *GangObjectError
				require.ErrorAs(t, err, &oe)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			res := runGang(t, g, gangObj(t, "jobset"), gangDocs(t, "jobset.pods"))
			require.Len(t, res.Groups, 1)
			grp := res.Groups[0]
			var mins []int64
			for _, s := range grp.SubGroups {
				mins = append(mins, s.MinMember)
			}
			assert.Equal(t, tc.mins, mins)
			assert.Equal(t, tc.total, grp.MinMember)
			assert.Equal(t, i64(2), grp.MinSubGroups, "the group's own count is unchanged")
			for i, s := range grp.SubGroups {
				if i == 2 && tc.need >= 0 {
					assert.Equal(t, i64(tc.need), s.MinSubGroups, s.Name)
				} else {
					assert.Nil(t, s.MinSubGroups, s.Name)
				}
			}
			// PlacePod reports the same group minimum.
			pods := gangDocs(t, "jobset.pods")
			pl, reason, err := g.placeOne(context.Background(), gojqEvaluator{}, gangObj(t, "jobset"), pods[len(pods)-1])
			require.NoError(t, err)
			require.Empty(t, reason)
			assert.Equal(t, tc.total, pl.MinMember)
		})
	}
}

// TestReplicaIndex holds replicaIndex to what it replaced: strconv.Atoi,
// a bound and strconv.Itoa giving the key back.
func TestReplicaIndex(t *testing.T) {
	old := func(key string, n int64) (int, bool) {
		k, err := strconv.Atoi(key)
		if err != nil || k < 0 || int64(k) >= n || strconv.Itoa(k) != key {
			return 0, false
		}
		return k, true
	}
	for _, tc := range []struct {
		key  string
		n    int64
		want int
		ok   bool
	}{
		{"0", 1, 0, true},
		{"3", 4, 3, true},
		{"4", 4, 0, false},
		{"12", 13, 12, true},
		{"", 4, 0, false},
		{"00", 4, 0, false},
		{"01", 4, 0, false},
		{"-0", 4, 0, false},
		{"-1", 4, 0, false},
		{"+1", 4, 0, false},
		{" 1", 4, 0, false},
		{"1 ", 4, 0, false},
		{"1e1", 40, 0, false},
		{"1.0", 4, 0, false},
		{"0x1", 4, 0, false},
		{"٣", 4, 0, false},
		{"999999999999999999", math.MaxInt64, 999999999999999999, true},
		{"9223372036854775807", math.MaxInt64, 0, false},
		{"99999999999999999999", math.MaxInt64, 0, false},
	} {
		k, ok := replicaIndex(tc.key, tc.n)
		assert.Equal(t, tc.ok, ok, "%q of %d", tc.key, tc.n)
		assert.Equal(t, tc.want, k, "%q of %d", tc.key, tc.n)
		wantK, wantOK := old(tc.key, tc.n)
		assert.Equal(t, wantOK, ok, "%q of %d against Atoi", tc.key, tc.n)
		assert.Equal(t, wantK, k, "%q of %d against Atoi", tc.key, tc.n)
	}
	for i := range 2000 {
		key := strconv.Itoa(i)
		k, ok := replicaIndex(key, 1000)
		wantK, wantOK := old(key, 1000)
		assert.Equal(t, wantOK, ok, key)
		assert.Equal(t, wantK, k, key)
	}
}

// TestGangGroupsPooledIndexStartsEmpty: a call's groups and their index by
// key live in a pooled gangObject; a call after one that indexed other
// groups must not find them. The first call makes 20 LeaderWorkerSet
// groups (indexed past 8), the second 11, the last of which, group 15,
// the first call's index still named at a position past the second
// call's groups.
func TestGangGroupsPooledIndexStartsEmpty(t *testing.T) {
	ctx := context.Background()
	p := progCompile(t, progKartaFile(t, "../builtin/kartas/leaderworkerset.yaml"), Options{})
	dk := directKindOf(t, "leaderworkerset")
	obj := dk.running.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(obj.Object, int64(20), "spec", "replicas"))
	var leader *unstructured.Unstructured
	for _, pod := range dk.pods {
		if pod.GetLabels()["leaderworkerset.sigs.k8s.io/worker-index"] == "0" {
			leader = pod
			break
		}
	}
	require.NotNil(t, leader)
	leaders := func(groups ...int) []*unstructured.Unstructured {
		var pods []*unstructured.Unstructured
		for _, g := range groups {
			pod := leader.DeepCopy()
			pod.SetName(fmt.Sprintf("%s-%d", obj.GetName(), g))
			labels := pod.GetLabels()
			labels["leaderworkerset.sigs.k8s.io/group-index"] = strconv.Itoa(g)
			pod.SetLabels(labels)
			pods = append(pods, pod)
		}
		return pods
	}
	for _, groups := range [][]int{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19},
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15},
		{19, 18, 17, 16, 15, 14, 13, 12, 11, 3, 0},
	} {
		res, err := p.GetGangGroups(ctx, obj, leaders(groups...))
		require.NoError(t, err)
		require.Empty(t, res.Unmatched)
		require.Len(t, res.Placements, len(groups))
		require.Len(t, res.Groups, len(groups))
		for i, pl := range res.Placements {
			assert.Equal(t, strconv.Itoa(groups[i]), pl.Replica, pl.Pod)
			assert.True(t, strings.HasSuffix(pl.Group, "-group-"+pl.Replica), "%s in %s", pl.Pod, pl.Group)
		}
		for _, g := range res.Groups {
			require.Len(t, g.Pods, 1, g.Name)
			assert.True(t, strings.HasSuffix(g.Name, "-group-"+strings.TrimPrefix(g.Pods[0], obj.GetNamespace()+"/"+obj.GetName()+"-")), "%s holds %v", g.Name, g.Pods)
		}
	}
}
