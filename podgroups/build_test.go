package podgroups_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/podgroups"
)

// pytorchjob is the built-in PyTorchJob's running example (a master and
// three workers of 90 CPUs, 900Gi and 8 GPUs each) and its pods, with
// edit applied to a copy of the object.
func pytorchjob(t *testing.T, edit func(obj map[string]any)) (*interpreter.Program, *unstructured.Unstructured, []*unstructured.Unstructured) {
	t.Helper()
	b, ok, err := builtin.Get("pytorchjob")
	require.NoError(t, err)
	require.True(t, ok)
	p, err := b.Compile(interpreter.Options{})
	require.NoError(t, err)
	obj := loadOne(t, "../examples/pytorchjob/running.yaml").DeepCopy()
	if edit != nil {
		edit(obj.Object)
	}
	return p, obj, loadAll(t, "../examples/pytorchjob/pods.yaml")
}

// alphaPyTorchJob is pytorchjob's program with the alpha form of the gang
// (one group per job name), for the tests of alpha definitions; the
// built-in uses the v2 form.
func alphaPyTorchJob(t *testing.T) (*interpreter.Program, *unstructured.Unstructured, []*unstructured.Unstructured) {
	t.Helper()
	p, obj, pods := pytorchjob(t, nil)
	k := p.Karta().DeepCopy()
	jobName := []string{`.metadata.labels["training.kubeflow.org/job-name"]`}
	k.Spec.Instructions = &karta.Instructions{GangScheduling: &karta.GangScheduling{PodGroups: []karta.PodGroup{{Name: "job",
		Members: []karta.PodGroupMember{{ComponentName: "master", GroupByKeyPaths: jobName}, {ComponentName: "worker", GroupByKeyPaths: jobName}}}}}}
	ap, err := interpreter.Compile(k, interpreter.Options{})
	require.NoError(t, err)
	return ap, obj, pods
}

func set(t *testing.T, obj map[string]any, value any, path ...string) {
	t.Helper()
	require.NoError(t, unstructured.SetNestedField(obj, value, path...))
}

func spec(t *testing.T, o *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(o.Object, append([]string{"spec"}, path...)...)
	require.NoError(t, err)
	return v
}

// What the workload says reaches the objects: its elastic minimum, its
// queue, its pods' priority class; and what it leaves out is warned about.
func TestBuildFromTheWorkload(t *testing.T) {
	master := []string{"spec", "pytorchReplicaSpecs", "Master", "template", "spec", "priorityClassName"}
	worker := []string{"spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "priorityClassName"}
	cases := []struct {
		name   string
		edit   func(t *testing.T, obj map[string]any)
		target podgroups.Target
		opts   podgroups.Options
		check  func(t *testing.T, pg *unstructured.Unstructured, res *podgroups.Result)
	}{
		{"an elastic minimum: the master first, then workers", func(t *testing.T, obj map[string]any) {
			set(t, obj, int64(3), "spec", "runPolicy", "schedulingPolicy", "minAvailable")
		}, podgroups.Volcano, podgroups.Options{}, func(t *testing.T, pg *unstructured.Unstructured, _ *podgroups.Result) {
			assert.Equal(t, int64(3), spec(t, pg, "minMember"))
			assert.Equal(t, map[string]any{"master": int64(1), "worker": int64(2)}, spec(t, pg, "minTaskMember"))
			assert.Equal(t, map[string]any{"cpu": "270", "memory": "2700Gi", "nvidia.com/gpu": "24"}, spec(t, pg, "minResources"))
		}},
		{"the whole job", nil, podgroups.Coscheduling, podgroups.Options{}, func(t *testing.T, pg *unstructured.Unstructured, _ *podgroups.Result) {
			assert.Equal(t, int64(4), spec(t, pg, "minMember"))
			assert.Equal(t, map[string]any{"cpu": "360", "memory": "3600Gi", "nvidia.com/gpu": "32"}, spec(t, pg, "minResources"))
		}},
		{"KAI's queue label on the workload", func(t *testing.T, obj map[string]any) {
			set(t, obj, "research", "metadata", "labels", "kai.scheduler/queue")
		}, podgroups.KAI, podgroups.Options{}, func(t *testing.T, pg *unstructured.Unstructured, res *podgroups.Result) {
			assert.Equal(t, "research", spec(t, pg, "queue"))
			assert.Equal(t, "research", pg.GetLabels()["kai.scheduler/queue"])
			assert.Empty(t, res.Warnings)
		}},
		{"Options.Queue wins", func(t *testing.T, obj map[string]any) {
			set(t, obj, "research", "metadata", "labels", "kai.scheduler/queue")
		}, podgroups.KAI, podgroups.Options{Queue: "batch"}, func(t *testing.T, pg *unstructured.Unstructured, _ *podgroups.Result) {
			assert.Equal(t, "batch", spec(t, pg, "queue"))
		}},
		{"no queue for KAI: a warning", nil, podgroups.KAI, podgroups.Options{}, func(t *testing.T, pg *unstructured.Unstructured, res *podgroups.Result) {
			assert.Nil(t, spec(t, pg, "queue"))
			require.Len(t, res.Warnings, 1)
			assert.Contains(t, res.Warnings[0], "no queue")
		}},
		{"Volcano's queue annotation", func(t *testing.T, obj map[string]any) {
			set(t, obj, "gpu-queue", "metadata", "annotations", "scheduling.volcano.sh/queue-name")
		}, podgroups.Volcano, podgroups.Options{}, func(t *testing.T, pg *unstructured.Unstructured, _ *podgroups.Result) {
			assert.Equal(t, "gpu-queue", spec(t, pg, "queue"))
		}},
		{"a priority class every pod template names", func(t *testing.T, obj map[string]any) {
			set(t, obj, "train", master...)
			set(t, obj, "train", worker...)
		}, podgroups.WorkloadAPI, podgroups.Options{}, func(t *testing.T, pg *unstructured.Unstructured, res *podgroups.Result) {
			assert.Equal(t, "train", spec(t, pg, "priorityClassName"))
			assert.Equal(t, "train", spec(t, res.Objects[0], "podGroupTemplates").([]any)[0].(map[string]any)["priorityClassName"])
		}},
		{"pod templates that disagree: none, and a warning", func(t *testing.T, obj map[string]any) {
			set(t, obj, "train", master...)
		}, podgroups.Volcano, podgroups.Options{}, func(t *testing.T, pg *unstructured.Unstructured, res *podgroups.Result) {
			assert.Nil(t, spec(t, pg, "priorityClassName"))
			require.Len(t, res.Warnings, 1)
			assert.Contains(t, res.Warnings[0], "different priority classes ((none), train)")
		}},
		{"KAI's priorityClassName label on the workload wins", func(t *testing.T, obj map[string]any) {
			set(t, obj, "train", master...)
			set(t, obj, "train", worker...)
			set(t, obj, "inference", "metadata", "labels", "priorityClassName")
		}, podgroups.KAI, podgroups.Options{Queue: "q"}, func(t *testing.T, pg *unstructured.Unstructured, _ *podgroups.Result) {
			assert.Equal(t, "inference", spec(t, pg, "priorityClassName"))
		}},
		{"no uid: no owner reference, and a warning", func(t *testing.T, obj map[string]any) {
			unstructured.RemoveNestedField(obj, "metadata", "uid")
		}, podgroups.Coscheduling, podgroups.Options{}, func(t *testing.T, pg *unstructured.Unstructured, res *podgroups.Result) {
			assert.Empty(t, pg.GetOwnerReferences())
			// The other warning: coscheduling keeps no subgroups.
			require.Len(t, res.Warnings, 2)
			assert.Contains(t, res.Warnings[0], "no metadata.uid")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, obj, pods := pytorchjob(t, func(obj map[string]any) {
				if tc.edit != nil {
					tc.edit(t, obj)
				}
			})
			res, err := podgroups.ForProgram(context.Background(), p, obj, pods, tc.target, tc.opts)
			require.NoError(t, err)
			for _, o := range res.Objects {
				checkObject(t, tc.target, o)
			}
			pg := res.Objects[len(res.Objects)-1]
			require.Equal(t, "PodGroup", pg.GetKind())
			tc.check(t, pg, res)
		})
	}
}

// The v2 TrainJob's group, with the gangs written by hand: what a
// controller or webhook hands Build.
func trainInput(t *testing.T, edit func(g *interpreter.Group)) podgroups.Input {
	t.Helper()
	ks, err := karta.LoadFile("../examples/kartas/trainjob.yaml")
	require.NoError(t, err)
	p, err := interpreter.Compile(ks[0], interpreter.Options{})
	require.NoError(t, err)
	obj := loadOne(t, "../examples/tutorial-trainjob/running.yaml")
	pods := loadAll(t, "../examples/tutorial-trainjob/pods.yaml")
	gangs, err := p.GetGangGroups(context.Background(), obj, pods)
	require.NoError(t, err)
	specs, err := p.GetPodSpecs(context.Background(), obj)
	require.NoError(t, err)
	if edit != nil {
		edit(&gangs.Groups[0])
	}
	return podgroups.Input{Object: obj, Karta: ks[0], Gangs: gangs, PodSpecs: specs, Pods: pods}
}

func TestBuildV2(t *testing.T) {
	t.Run("a required topology level is the Workload API's topology key, behind its feature gate", func(t *testing.T) {
		in := trainInput(t, func(g *interpreter.Group) {
			g.Topology = &karta.Topology{TopologyName: "default", RequiredTopologyLevel: "topology.kubernetes.io/zone"}
		})
		res, err := podgroups.Build(in, podgroups.WorkloadAPI, podgroups.Options{TopologyAwareWorkloadScheduling: true})
		require.NoError(t, err)
		want := map[string]any{"topology": []any{map[string]any{"key": "topology.kubernetes.io/zone"}}}
		assert.Equal(t, want, spec(t, res.Objects[1], "schedulingConstraints"))
		assert.Equal(t, want, spec(t, res.Objects[0], "podGroupTemplates").([]any)[0].(map[string]any)["schedulingConstraints"])

		res, err = podgroups.Build(in, podgroups.WorkloadAPI, podgroups.Options{})
		require.NoError(t, err)
		assert.Nil(t, spec(t, res.Objects[1], "schedulingConstraints"))
		assert.Contains(t, fmt.Sprint(res.Warnings), "needs the TopologyAwareWorkloadScheduling feature gate")
		for _, o := range res.Objects {
			checkObject(t, podgroups.WorkloadAPI, o)
		}
	})
	t.Run("KAI keeps the group's and the subgroups' topology", func(t *testing.T) {
		in := trainInput(t, func(g *interpreter.Group) {
			g.Topology = &karta.Topology{TopologyName: "default", RequiredTopologyLevel: "topology.kubernetes.io/zone"}
		})
		res, err := podgroups.Build(in, podgroups.KAI, podgroups.Options{Queue: "q"})
		require.NoError(t, err)
		pg := res.Objects[0]
		assert.Equal(t, map[string]any{"topology": "default", "requiredTopologyLevel": "topology.kubernetes.io/zone"}, spec(t, pg, "topologyConstraint"))
		subs := spec(t, pg, "subGroups").([]any)
		assert.Equal(t, map[string]any{"topology": "rack-topology", "preferredTopologyLevel": "rack"}, subs[1].(map[string]any)["topologyConstraint"])
	})
	t.Run("a group minimum below its subgroups' (minMemberPath): apportioned in subgroup order", func(t *testing.T) {
		in := trainInput(t, func(g *interpreter.Group) { g.MinMember = 2 })
		res, err := podgroups.Build(in, podgroups.Coscheduling, podgroups.Options{})
		require.NoError(t, err)
		// The launcher requests nothing; one worker is 32 CPUs, 512Gi, 8 GPUs.
		assert.Equal(t, map[string]any{"cpu": "32", "memory": "512Gi", "nvidia.com/gpu": "8"}, spec(t, res.Objects[0], "minResources"))
	})
}

func TestBuildErrors(t *testing.T) {
	t.Run("unknown target", func(t *testing.T) {
		_, err := podgroups.Build(trainInput(t, nil), "slurm", podgroups.Options{})
		var ue *podgroups.UnknownTargetError
		require.ErrorAs(t, err, &ue)
		assert.EqualError(t, err, `unknown target "slurm" (want workload-api, kai, volcano, coscheduling)`)
	})
	t.Run("a minimum beyond int32", func(t *testing.T) {
		_, err := podgroups.Build(trainInput(t, func(g *interpreter.Group) { g.MinMember = math.MaxInt32 + 1 }), podgroups.Volcano, podgroups.Options{})
		var ie *podgroups.InvalidError
		require.ErrorAs(t, err, &ie)
		assert.Contains(t, err.Error(), "spec.minMember: Invalid value: 2147483648: must be between 1 and 2147483647")
	})
	t.Run("more gang definitions than a Workload has templates", func(t *testing.T) {
		p, obj, pods := alphaPyTorchJob(t)
		k := p.Karta().DeepCopy()
		gs := k.Spec.EffectiveInstructions().GangScheduling
		for i := 0; i < 8; i++ {
			d := gs.PodGroups[0]
			d.Name = fmt.Sprintf("extra-%d", i)
			gs.PodGroups = append(gs.PodGroups, d)
		}
		gangs, err := p.GetGangGroups(context.Background(), obj, pods)
		require.NoError(t, err)
		specs, err := p.GetPodSpecs(context.Background(), obj)
		require.NoError(t, err)
		_, err = podgroups.Build(podgroups.Input{Object: obj, Karta: k, Gangs: gangs, PodSpecs: specs}, podgroups.WorkloadAPI, podgroups.Options{})
		var ie *podgroups.InvalidError
		require.ErrorAs(t, err, &ie)
		assert.Contains(t, err.Error(), "spec.podGroupTemplates: Too many: 9: must have at most 8 items")
	})
	t.Run("no gang instructions", func(t *testing.T) {
		p, obj, pods := pytorchjob(t, nil)
		k := p.Karta().DeepCopy()
		k.Spec.Instructions = nil
		kp, err := interpreter.Compile(k, interpreter.Options{})
		require.NoError(t, err)
		_, err = podgroups.ForProgram(context.Background(), kp, obj, pods, podgroups.KAI, podgroups.Options{})
		require.ErrorIs(t, err, podgroups.ErrNoGangInstructions)
	})
	t.Run("alpha groups without pods", func(t *testing.T) {
		p, obj, _ := alphaPyTorchJob(t)
		_, err := podgroups.ForProgram(context.Background(), p, obj, nil, podgroups.KAI, podgroups.Options{})
		var ne *podgroups.NoGroupsError
		require.ErrorAs(t, err, &ne)
		assert.Equal(t, []string{"job"}, ne.Definitions)
	})
	t.Run("a pod already in another PodGroup keeps it", func(t *testing.T) {
		p, obj, pods := pytorchjob(t, nil)
		linked := pods[0].DeepCopy()
		set(t, linked.Object, "elsewhere", "spec", "schedulingGroup", "podGroupName")
		res, err := podgroups.ForProgram(context.Background(), p, obj, append([]*unstructured.Unstructured{linked}, pods[1:]...), podgroups.WorkloadAPI, podgroups.Options{})
		require.NoError(t, err)
		require.NotEmpty(t, res.Unlinked)
		assert.Equal(t, interpreter.PodKey(linked.Object), res.Unlinked[len(res.Unlinked)-1].Pod)
		assert.Contains(t, res.Unlinked[len(res.Unlinked)-1].Reason, `is "elsewhere"`)
	})
}
