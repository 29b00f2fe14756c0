package podgroups_test

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/podgroups"
)

// nestedTrainJob is the tutorial TrainJob's gang made hierarchical, as a
// JobSet's replicated job with a leaf per replica: the launcher (1) and
// the workers (4), which nest two leaves of two workers each; the gang
// needs all five pods.
func nestedTrainJob(t *testing.T) podgroups.Input {
	t.Helper()
	var ex example
	for _, e := range examples(t) {
		if e.name == "tutorial-trainjob" {
			ex = e
		}
	}
	require.NotNil(t, ex.p)
	gangs, err := ex.p.GetGangGroups(ex.ctx(), ex.obj, ex.pods)
	require.NoError(t, err)
	specs, err := ex.p.GetPodSpecs(ex.ctx(), ex.obj)
	require.NoError(t, err)
	require.Len(t, gangs.Groups, 1)
	g := &gangs.Groups[0]
	require.Len(t, g.SubGroups, 2)
	launcher, worker := g.SubGroups[0], g.SubGroups[1]
	require.Equal(t, "worker", worker.Name)
	require.Len(t, worker.Pods, 4)
	worker.MinMember = 4
	g.MinMember = 5
	g.SubGroups = []interpreter.SubGroup{launcher, worker,
		{Name: "worker-a", Parent: "worker", MinMember: 2, Pods: worker.Pods[:2]},
		{Name: "worker-b", Parent: "worker", MinMember: 2, Pods: worker.Pods[2:]},
	}
	return podgroups.Input{Object: ex.obj, Karta: ex.p.Karta(), Gangs: gangs, PodSpecs: specs, Pods: ex.pods}
}

func specOf(t *testing.T, o *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, found, err := unstructured.NestedFieldNoCopy(o.Object, append([]string{"spec"}, path...)...)
	require.NoError(t, err)
	require.True(t, found, "%s %s has spec.%v", o.GetKind(), o.GetName(), path)
	return v
}

func roles(res *podgroups.Result) map[string]string {
	out := map[string]string{}
	for _, l := range res.Links {
		out[l.Pod] = l.Role
	}
	return out
}

func objects(res *podgroups.Result) map[string]string {
	out := map[string]string{}
	for _, l := range res.Links {
		out[l.Pod] = l.Object
	}
	return out
}

// Every target carries the nested subgroups as far as its API says them
// (docs/podgroups.md, "Subgroups and hierarchies"), each object valid for
// its API, and the pod webhook's LinkInGroups gives every pod the link
// Build gives it.
func TestBuildNestedSubgroups(t *testing.T) {
	const group = "pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang"
	leafRoles := map[string]string{"ml/llm-finetune-launcher": "launcher", "ml/llm-finetune-worker-0": "worker-a",
		"ml/llm-finetune-worker-1": "worker-a", "ml/llm-finetune-worker-2": "worker-b", "ml/llm-finetune-worker-3": "worker-b"}
	cases := []struct {
		name   string
		target podgroups.Target
		opts   podgroups.Options
		check  func(t *testing.T, res *podgroups.Result)
	}{
		{"kai: the tree, pods in leaves", podgroups.KAI, podgroups.Options{Queue: "research"}, func(t *testing.T, res *podgroups.Result) {
			require.Len(t, res.Objects, 1)
			pg := res.Objects[0]
			assert.Equal(t, int64(5), specOf(t, pg, "minMember"))
			subs := specOf(t, pg, "subGroups").([]any)
			require.Len(t, subs, 4)
			assert.Equal(t, map[string]any{"name": "launcher", "minMember": int64(1)}, subs[0])
			assert.Equal(t, "worker", subs[1].(map[string]any)["name"])
			assert.Equal(t, int64(4), subs[1].(map[string]any)["minMember"])
			assert.Equal(t, map[string]any{"name": "worker-a", "minMember": int64(2), "parent": "worker"}, subs[2])
			assert.Equal(t, map[string]any{"name": "worker-b", "minMember": int64(2), "parent": "worker"}, subs[3])
			assert.Equal(t, leafRoles, roles(res))
		}},
		{"volcano: a task per leaf, the nesting flattened", podgroups.Volcano, podgroups.Options{}, func(t *testing.T, res *podgroups.Result) {
			require.Len(t, res.Objects, 1)
			pg := res.Objects[0]
			assert.Equal(t, int64(5), specOf(t, pg, "minMember"))
			assert.Equal(t, map[string]any{"launcher": int64(1), "worker-a": int64(2), "worker-b": int64(2)}, specOf(t, pg, "minTaskMember"))
			assert.NotContains(t, pg.Object["spec"], "subGroupPolicy")
			assert.Equal(t, leafRoles, roles(res))
			assert.Contains(t, res.Warnings, "group "+group+": Volcano's tasks are flat: the nested subgroups (worker-a in worker, worker-b in worker) are flattened to a minTaskMember per leaf subgroup, and a parent's minimum is kept only as the sum of its leaves' (the VolcanoSubGroupPolicy option, podgroups --volcano-subgroup-policy, writes them as subGroupPolicy for Volcano v1.14.1 and later)")
		}},
		{"volcano with VolcanoSubGroupPolicy: the workers' leaves a subGroupPolicy, the launcher a task", podgroups.Volcano, podgroups.Options{VolcanoSubGroupPolicy: true}, func(t *testing.T, res *podgroups.Result) {
			require.Len(t, res.Objects, 1)
			pg := res.Objects[0]
			assert.Equal(t, int64(5), specOf(t, pg, "minMember"))
			assert.Equal(t, map[string]any{"launcher": int64(1)}, specOf(t, pg, "minTaskMember"))
			assert.Equal(t, []any{map[string]any{
				"name": "worker", "subGroupSize": int64(2), "minSubGroups": int64(2),
				"labelSelector":  map[string]any{"matchLabels": map[string]any{"karta.run.ai/parent-subgroup": "worker"}},
				"matchLabelKeys": []any{"volcano.sh/task-spec"},
			}}, specOf(t, pg, "subGroupPolicy"))
			assert.Equal(t, leafRoles, roles(res))
			assert.Empty(t, res.Warnings, "the tree is said exactly")
		}},
		{"coscheduling: one flat group with the total", podgroups.Coscheduling, podgroups.Options{}, func(t *testing.T, res *podgroups.Result) {
			require.Len(t, res.Objects, 1)
			assert.Equal(t, int64(5), specOf(t, res.Objects[0], "minMember"))
			assert.Contains(t, res.Warnings, "group "+group+": a coscheduling PodGroup has no subgroups: its minMember 5 is the whole group's, and its subgroups' own minimums (launcher 1, worker 4, worker-a 2, worker-b 2) are not kept")
		}},
		{"workload-api without CompositePodGroup: one PodGroup, what is lost said", podgroups.WorkloadAPI, podgroups.Options{}, func(t *testing.T, res *podgroups.Result) {
			require.Len(t, res.Objects, 2)
			assert.Equal(t, int64(5), specOf(t, res.Objects[1], "schedulingPolicy", "gang", "minCount"))
			assert.Contains(t, res.Warnings, "group "+group+": a Workload API PodGroup has no subgroups: its minCount 5 is the whole group's, and its subgroups' own minimums (launcher 1, worker 4, worker-a 2, worker-b 2) are not kept (the CompositePodGroup option, podgroups --composite-pod-group, keeps them as CompositePodGroups where the cluster serves them)")
			for _, obj := range objects(res) {
				assert.Equal(t, group, obj)
			}
		}},
		{"workload-api with CompositePodGroup: the tree", podgroups.WorkloadAPI, podgroups.Options{CompositePodGroup: true}, func(t *testing.T, res *podgroups.Result) {
			var kinds, names []string
			for _, o := range res.Objects {
				kinds = append(kinds, o.GetKind())
				names = append(names, o.GetName())
			}
			assert.Equal(t, []string{"Workload", "CompositePodGroup", "CompositePodGroup", "PodGroup", "PodGroup", "PodGroup"}, kinds)
			assert.Equal(t, []string{"llm-finetune", group, group + "-worker", group + "-launcher", group + "-worker-a", group + "-worker-b"}, names)
			assert.Equal(t, []any{map[string]any{
				"name": "gang", "schedulingPolicy": map[string]any{"gang": map[string]any{"minGroupCount": int64(2)}},
				"podGroupTemplates": []any{map[string]any{"name": "gang-level1-pods", "schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": int64(1)}}}},
				"compositePodGroupTemplates": []any{map[string]any{
					"name": "gang-level1", "schedulingPolicy": map[string]any{"gang": map[string]any{"minGroupCount": int64(2)}},
					"podGroupTemplates": []any{map[string]any{"name": "gang-level2-pods", "schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": int64(2)}}}},
				}},
			}}, specOf(t, res.Objects[0], "compositePodGroupTemplates"))
			root, workers := res.Objects[1], res.Objects[2]
			assert.Equal(t, int64(2), specOf(t, root, "schedulingPolicy", "gang", "minGroupCount"))
			assert.NotContains(t, root.Object["spec"], "parentCompositePodGroupName")
			assert.Equal(t, group, specOf(t, workers, "parentCompositePodGroupName"))
			assert.Equal(t, "gang-level1", specOf(t, workers, "workloadRef", "templateName"))
			for i, want := range []struct {
				parent string
				min    int64
			}{{group, 1}, {group + "-worker", 2}, {group + "-worker", 2}} {
				pg := res.Objects[3+i]
				assert.Equal(t, want.parent, specOf(t, pg, "parentCompositePodGroupName"), pg.GetName())
				assert.Equal(t, want.min, specOf(t, pg, "schedulingPolicy", "gang", "minCount"), pg.GetName())
			}
			want := map[string]string{}
			for pod, leaf := range leafRoles {
				want[pod] = group + "-" + leaf
			}
			assert.Equal(t, want, objects(res))
			assert.Empty(t, roles(res)["ml/llm-finetune-launcher"], "the Workload API has no roles")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := nestedTrainJob(t)
			res, err := podgroups.Build(in, c.target, c.opts)
			require.NoError(t, err)
			for _, o := range res.Objects {
				checkObject(t, c.target, o)
			}
			c.check(t, res)
			require.Len(t, res.Links, 5)
			for _, l := range res.Links {
				pod := podNamed(t, in.Pods, l.Pod)
				got, err := podgroups.LinkInGroups(c.target, c.opts, pod, in.Gangs)
				require.NoError(t, err)
				assert.Equal(t, l, *got, "the webhook's link of %s", l.Pod)
			}
			assert.Equal(t, podgroups.NeedsGroups(in.Karta, c.target, c.opts), c.target != podgroups.Coscheduling && (c.target != podgroups.WorkloadAPI || c.opts.CompositePodGroup))
			data, err := json.Marshal(res)
			require.NoError(t, err)
			got, err := yaml.JSONToYAML(data)
			require.NoError(t, err)
			file := string(c.target)
			if c.opts.CompositePodGroup {
				file += "-composite"
			}
			if c.opts.VolcanoSubGroupPolicy {
				file += "-subgroup-policy"
			}
			checkGolden(t, filepath.Join("testdata", "golden", "nested-trainjob", file+".yaml"), got)
		})
	}
}

func podNamed(t *testing.T, pods []*unstructured.Unstructured, key string) *unstructured.Unstructured {
	t.Helper()
	for _, p := range pods {
		if p.GetNamespace()+"/"+p.GetName() == key {
			return p
		}
	}
	t.Fatalf("no pod %s", key)
	return nil
}

// A tree the Workload API cannot hold is written flat, saying why; a
// subgroup whose parent is not before it is put at the top, with a
// warning, and no target loops on it.
func TestBuildNestedSubgroupsUnfit(t *testing.T) {
	const group = "pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang"
	cases := []struct {
		name   string
		edit   func(g *interpreter.Group)
		target podgroups.Target
		want   string
	}{
		{"a parent with pods of its own", func(g *interpreter.Group) {
			g.SubGroups[1].MinMember = 5
			g.MinMember = 6
		}, podgroups.WorkloadAPI, "the groups are written without CompositePodGroups: group " + group + ": subgroup worker has 1 pods of its own besides its subgroups', and only a leaf PodGroup holds pods"},
		{"a leaf of minimum 0", func(g *interpreter.Group) {
			g.SubGroups[0].MinMember = 0
			g.MinMember = 4
		}, podgroups.WorkloadAPI, "the groups are written without CompositePodGroups: group " + group + ": leaf subgroup launcher has minimum 0, and a gang PodGroup's minCount is at least 1"},
		{"too deep", func(g *interpreter.Group) {
			g.SubGroups = append(g.SubGroups,
				interpreter.SubGroup{Name: "worker-a-x", Parent: "worker-a", MinMember: 2, Pods: g.SubGroups[2].Pods},
				interpreter.SubGroup{Name: "worker-a-x-y", Parent: "worker-a-x", MinMember: 2, Pods: g.SubGroups[2].Pods})
		}, podgroups.WorkloadAPI, "the groups are written without CompositePodGroups: group " + group + ": subgroup worker-a-x-y is deeper than the API's tree of 4 levels"},
		{"a parent after its child", func(g *interpreter.Group) {
			g.SubGroups[1].Parent = "worker-b"
		}, podgroups.KAI, "group " + group + ": subgroup worker names parent \"worker-b\", which is no subgroup before it: it is put directly under the group"},
		{"KAI: a parent with pods of its own", func(g *interpreter.Group) {
			g.SubGroups[1].MinMember = 5
			g.MinMember = 6
		}, podgroups.KAI, "group " + group + ": subgroup worker has 1 pods of its own besides its subgroups': KAI places pods in leaf subgroups only, so they count in no subgroup's minimum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := nestedTrainJob(t)
			c.edit(&in.Gangs.Groups[0])
			res, err := podgroups.Build(in, c.target, podgroups.Options{CompositePodGroup: true, Queue: "research"})
			require.NoError(t, err)
			assert.Contains(t, res.Warnings, c.want)
			for _, o := range res.Objects {
				checkObject(t, c.target, o)
				assert.NotEqual(t, "CompositePodGroup", o.GetKind())
			}
			for _, l := range res.Links {
				got, err := podgroups.LinkInGroups(c.target, podgroups.Options{CompositePodGroup: true}, podNamed(t, in.Pods, l.Pod), in.Gangs)
				require.NoError(t, err)
				assert.Equal(t, l.Object, got.Object, "the webhook links %s as Build does", l.Pod)
			}
		})
	}
}

// The webhook's call with one pod: GetGangGroups names a pod created with
// generateName as it does, and a pod it leaves unmatched is an
// UnmatchedError.
func TestLinkInGroupsOnePod(t *testing.T) {
	in := nestedTrainJob(t)
	g := in.Gangs.Groups[0]
	pod := podNamed(t, in.Pods, "ml/llm-finetune-worker-2").DeepCopy()
	pod.SetName("")
	pod.SetGenerateName("llm-finetune-worker-")
	one := &interpreter.GangResult{Groups: []interpreter.Group{g},
		Placements: []interpreter.Placement{{Pod: "ml/llm-finetune-worker-2", Component: "worker", Group: g.Name}}}
	link, err := podgroups.LinkInGroups(podgroups.KAI, podgroups.Options{}, pod, one)
	require.NoError(t, err)
	assert.Equal(t, "worker-b", link.Role)
	assert.Equal(t, g.Name, link.Object)

	unmatched := &interpreter.GangResult{Unmatched: []interpreter.Unmatched{{Pod: "ml/(unnamed)", Reason: "no component's selector matches"}}}
	_, err = podgroups.LinkInGroups(podgroups.KAI, podgroups.Options{}, pod, unmatched)
	var ue *interpreter.UnmatchedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "no component's selector matches", ue.Reason)
}

// A subgroup that needs only some of its leaves (its minSubGroups, a
// Volcano task's minPartitions) is said by each target as far as its API
// can: KAI's minSubGroup, Volcano's subGroupPolicy minSubGroups (tasks,
// the first leaves required, without the option), a CompositePodGroup's
// minGroupCount; coscheduling lists it in its warning. What a target
// cannot say is warned. The nested TrainJob's workers need need of their
// two leaves of 2, and workerMin pods in all.
func TestBuildSubgroupNeedsSomeLeaves(t *testing.T) {
	const group = "pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang"
	workerSub := func(t *testing.T, res *podgroups.Result) map[string]any {
		subs := specOf(t, res.Objects[0], "subGroups").([]any)
		require.Len(t, subs, 4)
		sub := maps.Clone(subs[1].(map[string]any))
		delete(sub, "topologyConstraint") // the tutorial's, as without minSubGroups
		return sub
	}
	// warnings are res's but the topology's, which the tutorial's
	// subgroup has whatever it needs.
	warnings := func(res *podgroups.Result) []string {
		var out []string
		for _, w := range res.Warnings {
			if !strings.Contains(w, "topology") {
				out = append(out, w)
			}
		}
		return out
	}
	policy := func(need int64) []any {
		return []any{map[string]any{
			"name": "worker", "subGroupSize": int64(2), "minSubGroups": need,
			"labelSelector":  map[string]any{"matchLabels": map[string]any{"karta.run.ai/parent-subgroup": "worker"}},
			"matchLabelKeys": []any{"volcano.sh/task-spec"},
		}}
	}
	workersComposite := func(t *testing.T, res *podgroups.Result) any {
		for _, o := range res.Objects {
			if o.GetKind() == "CompositePodGroup" && o.GetName() == group+"-worker" {
				return specOf(t, o, "schedulingPolicy", "gang", "minGroupCount")
			}
		}
		t.Fatal("no workers' CompositePodGroup")
		return nil
	}
	cases := []struct {
		name            string
		need, workerMin int64
		target          podgroups.Target
		opts            podgroups.Options
		check           func(t *testing.T, res *podgroups.Result)
	}{
		{"kai: minSubGroup instead of minMember", 1, 2, podgroups.KAI, podgroups.Options{Queue: "research"}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, map[string]any{"name": "worker", "minSubGroup": int64(1)}, workerSub(t, res))
			assert.Empty(t, warnings(res))
		}},
		{"kai: none of them", 0, 0, podgroups.KAI, podgroups.Options{Queue: "research"}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, map[string]any{"name": "worker", "minSubGroup": int64(0)}, workerSub(t, res))
		}},
		{"kai: pods beyond the leaves needed are warned", 1, 3, podgroups.KAI, podgroups.Options{Queue: "research"}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, map[string]any{"name": "worker", "minSubGroup": int64(1)}, workerSub(t, res))
			assert.Equal(t, []string{"group " + group + ": subgroup worker needs 1 of its subgroups and 3 pods in all, and KAI's minSubGroup is exclusive with minMember: the 1 pods beyond those subgroups' are not kept"}, warnings(res))
		}},
		{"volcano: the first leaves are tasks, the rest optional", 1, 2, podgroups.Volcano, podgroups.Options{}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, map[string]any{"launcher": int64(1), "worker-a": int64(2)}, specOf(t, res.Objects[0], "minTaskMember"))
			assert.Contains(t, res.Warnings, "group "+group+": subgroup worker needs 1 of its 2 subgroups, which Volcano's tasks cannot say: the first 1 are tasks of their minimums and the rest optional (--volcano-subgroup-policy says it as a subGroupPolicy's minSubGroups)")
		}},
		{"volcano with VolcanoSubGroupPolicy: the policy's minSubGroups", 1, 2, podgroups.Volcano, podgroups.Options{VolcanoSubGroupPolicy: true}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, map[string]any{"launcher": int64(1)}, specOf(t, res.Objects[0], "minTaskMember"))
			assert.Equal(t, policy(1), specOf(t, res.Objects[0], "subGroupPolicy"))
			assert.Empty(t, warnings(res))
		}},
		{"volcano with VolcanoSubGroupPolicy: none of them", 0, 0, podgroups.Volcano, podgroups.Options{VolcanoSubGroupPolicy: true}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, policy(0), specOf(t, res.Objects[0], "subGroupPolicy"))
		}},
		{"volcano with VolcanoSubGroupPolicy: pods beyond the leaves needed are warned", 1, 3, podgroups.Volcano, podgroups.Options{VolcanoSubGroupPolicy: true}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, policy(1), specOf(t, res.Objects[0], "subGroupPolicy"))
			assert.Equal(t, []string{"group " + group + ": subgroup worker needs 1 of its subgroups and 3 pods in all, and its subGroupPolicy counts subgroups only: the 1 pods beyond them are not kept"}, warnings(res))
		}},
		{"workload-api with CompositePodGroup: minGroupCount", 1, 2, podgroups.WorkloadAPI, podgroups.Options{CompositePodGroup: true}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, int64(1), workersComposite(t, res))
			assert.Empty(t, warnings(res))
		}},
		{"workload-api with CompositePodGroup: none of them is no minGroupCount", 0, 2, podgroups.WorkloadAPI, podgroups.Options{CompositePodGroup: true}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, int64(1), workersComposite(t, res))
			assert.Equal(t, []string{"group " + group + ": subgroup worker needs none of its subgroups, and a CompositePodGroup's minGroupCount is at least 1: it needs 1, as many as its minimum 2 takes"}, warnings(res))
		}},
		{"workload-api with CompositePodGroup: pods beyond the leaves needed are warned", 1, 3, podgroups.WorkloadAPI, podgroups.Options{CompositePodGroup: true}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, int64(1), workersComposite(t, res))
			assert.Equal(t, []string{"group " + group + ": subgroup worker needs 1 of its subgroups and 3 pods in all, and a CompositePodGroup counts subgroups only: the 1 pods beyond them are not kept"}, warnings(res))
		}},
		{"coscheduling: listed in its warning", 1, 2, podgroups.Coscheduling, podgroups.Options{}, func(t *testing.T, res *podgroups.Result) {
			assert.Equal(t, []string{"group " + group + ": a coscheduling PodGroup has no subgroups: its minMember 3 is the whole group's, and its subgroups' own minimums (launcher 1, worker 2 (1 of its 2 subgroups), worker-a 2, worker-b 2) are not kept"}, warnings(res))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := nestedTrainJob(t)
			g := &in.Gangs.Groups[0]
			g.SubGroups[1].MinMember = c.workerMin
			g.SubGroups[1].MinSubGroups = &c.need
			g.MinMember = 1 + c.workerMin
			res, err := podgroups.Build(in, c.target, c.opts)
			require.NoError(t, err)
			for _, o := range res.Objects {
				checkObject(t, c.target, o)
			}
			c.check(t, res)
			for _, l := range res.Links {
				got, err := podgroups.LinkInGroups(c.target, c.opts, podNamed(t, in.Pods, l.Pod), in.Gangs)
				require.NoError(t, err)
				assert.Equal(t, l, *got, "the webhook's link of %s", l.Pod)
			}
		})
	}
}
