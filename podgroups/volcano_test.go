package podgroups_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/podgroups"
)

// volcanoSubGroups is how Volcano's scheduler v1.14.0 sorts pods into
// subgroups (pkg/scheduler/api job_info.go getOrCreateSubJob,
// sub_job_info.go getSubJobMatchValues and getSubJobID): a pod joins the
// first policy whose labelSelector matches its labels and for which it has
// every matchLabelKeys label, non-empty; the labels' values name its
// subgroup. The key is "policy/value-value…", "" for the job's default
// subgroup; the values are pod keys.
func volcanoSubGroups(t *testing.T, pg *volcanov1beta1.PodGroup, pods []*unstructured.Unstructured) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, pod := range pods {
		key := ""
		for _, pol := range pg.Spec.SubGroupPolicy {
			podLabels := pod.GetLabels()
			if pol.LabelSelector != nil {
				sel, err := metav1.LabelSelectorAsSelector(pol.LabelSelector)
				require.NoError(t, err)
				if !sel.Matches(labels.Set(podLabels)) {
					continue
				}
			}
			var values []string
			for _, k := range pol.MatchLabelKeys {
				if podLabels[k] == "" {
					values = nil
					break
				}
				values = append(values, podLabels[k])
			}
			if len(values) == 0 {
				continue // the scheduler's len(matchValues) > 0
			}
			key = pol.Name + "/" + strings.Join(values, "-")
			break
		}
		out[key] = append(out[key], interpreter.PodKey(pod.Object))
	}
	return out
}

// volcanoPodGroup is res's one PodGroup, typed.
func volcanoPodGroup(t *testing.T, res *podgroups.Result) *volcanov1beta1.PodGroup {
	t.Helper()
	require.Len(t, res.Objects, 1)
	var pg volcanov1beta1.PodGroup
	strictDecode(t, res.Objects[0].Object, &pg)
	return &pg
}

// nestedLeaderWorkerSet is the LeaderWorkerSet example with the built-in
// Karta's gang made one group with subgroups [group, worker], the tree of
// docs/karta.md's examples: the group subgroup (the leaders, its own pods)
// holds the worker subgroup (all the workers).
func nestedLeaderWorkerSet(t *testing.T) podgroups.Input {
	t.Helper()
	src, err := os.ReadFile("../builtin/kartas/leaderworkerset.yaml")
	require.NoError(t, err)
	const flat = `      podGroup:
        name: group
        componentName: group
        minMemberPath: 'if .spec.startupPolicy == "LeaderReady" then 1 else null end'
        subGroups:
        - {componentName: leader}
        - {componentName: worker}`
	require.Contains(t, string(src), flat)
	nested := strings.Replace(string(src), flat, `      podGroup:
        name: lws
        subGroups:
        - {componentName: group}
        - {componentName: worker}`, 1)
	file := filepath.Join(t.TempDir(), "lws.yaml")
	require.NoError(t, os.WriteFile(file, []byte(nested), 0o644))
	ks, err := karta.LoadFile(file)
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	obj := loadOne(t, "../examples/leaderworkerset/running.yaml")
	pods := loadAll(t, "../examples/leaderworkerset/pods.yaml")
	gangs, err := p.GetGangGroups(t.Context(), obj, pods)
	require.NoError(t, err)
	specs, err := p.GetPodSpecs(t.Context(), obj)
	require.NoError(t, err)
	return podgroups.Input{Object: obj, Karta: ks[0], Gangs: gangs, PodSpecs: specs, Pods: pods}
}

// jobSetInput is the JobSet example with the built-in Karta: a subgroup
// per replicated job, a leaf per Job.
func jobSetInput(t *testing.T) podgroups.Input {
	t.Helper()
	for _, ex := range examples(t) {
		if ex.name != "jobset" {
			continue
		}
		gangs, err := ex.p.GetGangGroups(ex.ctx(), ex.obj, ex.pods)
		require.NoError(t, err)
		specs, err := ex.p.GetPodSpecs(ex.ctx(), ex.obj)
		require.NoError(t, err)
		return podgroups.Input{Object: ex.obj, Karta: ex.p.Karta(), Gangs: gangs, PodSpecs: specs, Pods: ex.pods}
	}
	t.Fatal("no jobset example")
	return podgroups.Input{}
}

// nestedEdited is nestedTrainJob (launcher 1; worker 4 over worker-a 2
// and worker-b 2) with its group edited.
func nestedEdited(edit func(g *interpreter.Group)) func(t *testing.T) podgroups.Input {
	return func(t *testing.T) podgroups.Input {
		in := nestedTrainJob(t)
		edit(&in.Gangs.Groups[0])
		return in
	}
}

// policy is a subGroupPolicy in short: its leaves' size and how many it
// needs.
type policy struct {
	size, need int32
}

// For the volcano target with the VolcanoSubGroupPolicy option, a parent
// whose children are leaves of one size is a subGroupPolicy, every other
// subgroup with pods of its own a task, and what Volcano cannot say a
// warning; the pods carry the labels the policies select on, so that
// Volcano's scheduler puts each leaf's pods, and only them, in one
// subgroup of their parent's policy; and the webhook's LinkInGroups links
// each pod as Build does. Without the option (the default, for Volcano
// before v1.14.1) there is no policy and no label.
func TestVolcanoSubGroupPolicies(t *testing.T) {
	const gang = "pg-3f6b2a90-7c1d-4e8f-a2b3-c4d5e6f7a8b9-gang"
	cases := []struct {
		name     string
		input    func(t *testing.T) podgroups.Input
		policies map[string]policy
		tasks    map[string]int32
		warnings []string
	}{
		{"JobSet: a policy per replicated job, a Volcano subgroup per Job", jobSetInput,
			map[string]policy{"replicatedjob-driver": {1, 1}, "replicatedjob-workers": {4, 2}}, nil, nil},
		{"LeaderWorkerSet [group, worker]: the leaders a task, the workers their parent's policy", nestedLeaderWorkerSet,
			map[string]policy{"group": {6, 1}}, map[string]int32{"group": 2}, nil},
		{"TrainJob: workers in two leaves of two, the launcher a task", nestedTrainJob,
			map[string]policy{"worker": {2, 2}}, map[string]int32{"launcher": 1}, nil},
		{"a parent that needs one of its two leaves", nestedEdited(func(g *interpreter.Group) {
			g.SubGroups[1].MinMember = 2
			g.MinMember = 3
		}), map[string]policy{"worker": {2, 1}}, map[string]int32{"launcher": 1}, nil},
		{"a parent with pods of its own", nestedEdited(func(g *interpreter.Group) {
			g.SubGroups[1].MinMember = 5
			g.MinMember = 6
		}), map[string]policy{"worker": {2, 2}}, map[string]int32{"launcher": 1, "worker": 1}, nil},
		{"leaves of different sizes, all required: tasks, nothing lost", nestedEdited(func(g *interpreter.Group) {
			g.SubGroups[2].MinMember = 1
			g.SubGroups[1].MinMember = 3
			g.MinMember = 4
		}), nil, map[string]int32{"launcher": 1, "worker-a": 1, "worker-b": 2}, []string{
			"group " + gang + ": subgroup worker is no Volcano subGroupPolicy (its subgroups' minimums differ (1, 2), and a policy's subgroups are of one size): its leaves are tasks, each with its minTaskMember",
		}},
		{"a parent minimum that is no whole number of leaves", nestedEdited(func(g *interpreter.Group) {
			g.SubGroups[1].MinMember = 3
			g.MinMember = 4
		}), nil, map[string]int32{"launcher": 1, "worker-a": 2, "worker-b": 2}, []string{
			"group " + gang + ": subgroup worker is no Volcano subGroupPolicy (its minimum 3 is no whole number of its subgroups of 2): its leaves are tasks, each with its minTaskMember, all of them required, so its minimum 3 (of their 4) is not kept",
			"group " + gang + ": its tasks' minimums add up to 5, more than its minMember 4, and then Volcano's scheduler checks no task's minimum (job_info.go CheckTaskReady)",
		}},
		{"a leaf nesting a leaf: the lower parent a policy, the upper one not", nestedEdited(func(g *interpreter.Group) {
			a := g.SubGroups[2]
			g.SubGroups[2].Pods = nil
			g.SubGroups = append(g.SubGroups, interpreter.SubGroup{Name: "worker-a-x", Parent: "worker-a", MinMember: 2, Pods: a.Pods})
		}), map[string]policy{"worker-a": {2, 1}}, map[string]int32{"launcher": 1, "worker-b": 2}, []string{
			"group " + gang + ": subgroup worker is no Volcano subGroupPolicy (its subgroup worker-a has subgroups of its own, and Volcano's subgroups do not nest): its children keep their own policies and tasks",
		}},
		{"leaves of minimum 0", nestedEdited(func(g *interpreter.Group) {
			g.SubGroups[1].MinMember, g.SubGroups[2].MinMember, g.SubGroups[3].MinMember = 0, 0, 0
			g.MinMember = 1
		}), nil, map[string]int32{"launcher": 1}, []string{
			"group " + gang + ": subgroup worker is no Volcano subGroupPolicy (its subgroups' minimum is 0, and a policy's subGroupSize is at least 1): its leaves are tasks, each with its minTaskMember",
		}},
		{"a group that needs fewer top subgroups than it has", nestedEdited(func(g *interpreter.Group) {
			one := int64(1)
			g.MinSubGroups = &one
		}), map[string]policy{"worker": {2, 2}}, map[string]int32{"launcher": 1}, []string{
			"group " + gang + ": it needs 1 of its 2 top subgroups, which Volcano cannot say (a policy's subgroups are leaves of one parent): each top subgroup keeps its own minimum",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.input(t)
			opts := podgroups.Options{VolcanoSubGroupPolicy: true}
			res, err := podgroups.Build(in, podgroups.Volcano, opts)
			require.NoError(t, err)
			for _, o := range res.Objects {
				checkObject(t, podgroups.Volcano, o)
			}
			pg := volcanoPodGroup(t, res)
			got := map[string]policy{}
			for _, pol := range pg.Spec.SubGroupPolicy {
				got[pol.Name] = policy{*pol.SubGroupSize, *pol.MinSubGroups}
				assert.Equal(t, &metav1.LabelSelector{MatchLabels: map[string]string{podgroups.VolcanoParentLabel: pol.Name}}, pol.LabelSelector)
				assert.Equal(t, []string{podgroups.VolcanoTaskAnnotation}, pol.MatchLabelKeys)
			}
			if c.policies == nil {
				c.policies = map[string]policy{}
			}
			assert.Equal(t, c.policies, got)
			assert.Equal(t, c.tasks, pg.Spec.MinTaskMember)
			var notes []string
			for _, w := range res.Warnings {
				if !strings.Contains(w, "no queue") {
					notes = append(notes, w)
				}
			}
			assert.Equal(t, c.warnings, notes)

			// Each pod linked as the webhook links it, as Volcano sorts it.
			g := &in.Gangs.Groups[0]
			var linked []*unstructured.Unstructured
			for _, l := range res.Links {
				pod := podNamed(t, in.Pods, l.Pod)
				one, err := podgroups.LinkInGroups(podgroups.Volcano, opts, pod, in.Gangs)
				require.NoError(t, err)
				assert.Equal(t, l, *one, "the webhook's link of %s", l.Pod)
				linked = append(linked, applied(t, pod, l.Patch))
			}
			want := map[string][]string{}
			leafOf := map[string]string{}
			for _, sg := range g.SubGroups {
				for _, pod := range sg.Pods {
					leafOf[pod] = sg.Name // the deepest: parents come first
				}
			}
			parents := map[string]string{}
			for _, sg := range g.SubGroups {
				parents[sg.Name] = sg.Parent
			}
			for _, l := range res.Links {
				key := ""
				if parent := parents[leafOf[l.Pod]]; c.policies[parent] != (policy{}) {
					key = parent + "/" + leafOf[l.Pod]
				}
				want[key] = append(want[key], l.Pod)
			}
			assert.Equal(t, want, volcanoSubGroups(t, pg, linked), "Volcano's subgroups are the policies' leaves")
			for _, pod := range linked {
				assert.Equal(t, pod.GetAnnotations()[podgroups.VolcanoTaskAnnotation], leafOf[interpreter.PodKey(pod.Object)], "the task is the leaf")
			}

			flat, err := podgroups.Build(in, podgroups.Volcano, podgroups.Options{})
			require.NoError(t, err)
			assert.Empty(t, volcanoPodGroup(t, flat).Spec.SubGroupPolicy, "no policy without the option")
			for _, l := range flat.Links {
				for _, op := range l.Patch {
					assert.NotContains(t, op.Path, "/metadata/labels", "no label without the option: %s", l.Pod)
				}
			}
		})
	}
}
