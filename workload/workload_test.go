package workload_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/workload"
)

// example reads examples/NAME/running.yaml and its pods.
func example(t *testing.T, name string) (*unstructured.Unstructured, []*unstructured.Unstructured) {
	t.Helper()
	objs := read(filepath.Join("..", "examples", name, "running.yaml"))
	require.Len(t, objs, 1)
	return objs[0], read(filepath.Join("..", "examples", name, "pods.yaml"))
}

// program is the built-in Program for a kind, compiled afresh from its
// Karta after edit (nil: as it is) and with scripts.
func program(t *testing.T, name string, edit func(k *karta.Karta), scripts ...interpreter.Script) *interpreter.Program {
	t.Helper()
	all, err := builtin.All()
	require.NoError(t, err)
	for _, b := range all {
		if b.Karta.Name != name {
			continue
		}
		k := b.Karta.DeepCopy()
		if edit != nil {
			edit(k)
		}
		p, err := interpreter.Compile(k, interpreter.Options{Scripts: scripts})
		require.NoError(t, err)
		return p
	}
	t.Fatalf("no built-in %q", name)
	return nil
}

// outline renders a tree one node a line, with the fields that matter to
// the tests: counts as existing/expected, replicas, the style, images,
// groups and reasons.
func outline(tree *workload.Node) []string {
	var out []string
	workload.Walk(tree, func(n *workload.Node, depth int) bool {
		f := n.Fields
		var parts []string
		add := func(k, v string) {
			if v != "" {
				parts = append(parts, k+"="+v)
			}
		}
		num := func(p *int64) string {
			if p == nil {
				return "?"
			}
			return fmt.Sprint(*p)
		}
		switch n.Kind {
		case workload.KindWorkload:
			add("status", f.Status)
		case workload.KindInstance:
			add("style", f.Style)
			add("pods", num(f.Existing)+"/"+num(f.Expected))
			if f.Replicas != nil || f.MinReplicas != nil || f.MaxReplicas != nil {
				add("scale", num(f.Replicas)+"["+num(f.MinReplicas)+","+num(f.MaxReplicas)+"]")
			}
			add("images", strings.Join(f.Images, ","))
		case workload.KindReplica:
			add("pods", num(f.Existing)+"/"+num(f.Expected))
		case workload.KindPod:
			add("group", f.Group)
			if f.MinMember != nil {
				add("min", num(f.MinMember))
			}
			add("reason", f.Reason)
		case workload.KindGroup:
			add("present", num(f.Present)+"/"+num(f.MinMember))
		}
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s%s %q %s", strings.Repeat("  ", depth), n.Kind, n.Name, strings.Join(parts, " "))))
		return true
	})
	return out
}

func describe(t *testing.T, p *interpreter.Program, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) *workload.Node {
	t.Helper()
	tree, err := workload.Describe(context.Background(), p, obj, pods)
	require.NoError(t, err)
	return tree
}

// The trees of built-ins whose shapes differ: instances with ids and
// scale bounds (RayCluster), replicas under an ancestor's replicaSelector
// (LeaderWorkerSet), fragmented definitions and unknown replicas
// (Milvus), a pod-bearing root (NIMService).
func TestDescribeShapes(t *testing.T) {
	const lwsGroup = "pg-e85b3a1f-0d27-4c6e-b94a-7f1c2d8e6a30-group-"
	const rayGroup = "pg-5d1c7e2a-93b4-4f0e-a8c6-2b7f1e0d4c91-cluster"
	const nimGroup = "pg-5d2f8a61-3b7c-4e0f-9a1d-7c6b2e84f913-nim-meta-llama3-8b-instruct"
	cases := map[string][]string{
		"leaderworkerset": {
			`Workload "vllm-llama3-405b" status=Running`,
			`Component "leaderworkerset"`,
			`Component "group"`,
			`Component "leader"`,
			`Instance "" style=podTemplateSpec pods=2/2 scale=1[?,?] images=vllm/vllm-openai:v0.8.5`,
			`Replica "0" pods=1/1`,
			`Pod "vllm-llama3-405b-0" group=` + lwsGroup + `0 min=4`,
			`Replica "1" pods=1/1`,
			`Pod "vllm-llama3-405b-1" group=` + lwsGroup + `1 min=4`,
			`Component "worker"`,
			`Instance "" style=podTemplateSpec pods=6/6 scale=3[?,?] images=vllm/vllm-openai:v0.8.5`,
			`Replica "0" pods=3/3`,
			`Pod "vllm-llama3-405b-0-1" group=` + lwsGroup + `0 min=4`,
			`Pod "vllm-llama3-405b-0-2" group=` + lwsGroup + `0 min=4`,
			`Pod "vllm-llama3-405b-0-3" group=` + lwsGroup + `0 min=4`,
			`Replica "1" pods=3/3`,
			`Pod "vllm-llama3-405b-1-1" group=` + lwsGroup + `1 min=4`,
			`Pod "vllm-llama3-405b-1-2" group=` + lwsGroup + `1 min=4`,
			`Pod "vllm-llama3-405b-1-3" group=` + lwsGroup + `1 min=4`,
			`Group "` + lwsGroup + `0" present=4/4`,
			`Group "leader" present=1/1`,
			`Group "worker" present=3/3`,
			`Group "` + lwsGroup + `1" present=4/4`,
			`Group "leader" present=1/1`,
			`Group "worker" present=3/3`,
			`Pod "llama-router-54c8f7d9b6-zq4nm" reason=no component selector matches`,
		},
		"raycluster": {
			`Workload "llm-train" status=Running`,
			`Component "raycluster"`,
			`Component "head"`,
			`Instance "" style=podTemplateSpec pods=1/1 scale=1[?,?] images=rayproject/ray:2.46.0-py311`,
			`Pod "llm-train-head-8kq2x" group=` + rayGroup + ` min=4`,
			`Component "worker"`,
			`Instance "cpu-workers" style=podTemplateSpec pods=2/2 scale=2[1,8] images=rayproject/ray:2.46.0-py311`,
			`Pod "llm-train-cpu-workers-worker-5xq7n" group=` + rayGroup + ` min=4`,
			`Pod "llm-train-cpu-workers-worker-jv2lp" group=` + rayGroup + ` min=4`,
			`Instance "tpu-v6e-2x4" style=podTemplateSpec pods=2/2 scale=2[2,4] images=rayproject/ray:2.46.0-py311`,
			`Pod "llm-train-tpu-v6e-2x4-worker-8d4kr" group=` + rayGroup + ` min=4`,
			`Pod "llm-train-tpu-v6e-2x4-worker-zt6wb" group=` + rayGroup + ` min=4`,
			`Group "` + rayGroup + `" present=5/4`,
			`Group "head" present=1/1`,
			`Group "worker-cpu-workers" present=2/1`,
			`Group "worker-tpu-v6e-2x4" present=2/2`,
			`Pod "alice-notebook-0" reason=no component selector matches`,
		},
		"nimservice": {
			`Workload "meta-llama3-8b-instruct" status=Running`,
			`Component "nimservice"`,
			`Instance "" style=fragmented pods=2/1 scale=1[2,4] images=nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8.4`,
			`Pod "meta-llama3-8b-instruct-6d8f9c7b5-2xk9p" group=` + nimGroup + ` min=2`,
			`Pod "meta-llama3-8b-instruct-6d8f9c7b5-q7w4n" group=` + nimGroup + ` min=2`,
			`Group "` + nimGroup + `" present=2/2`,
			`Pod "meta-llama3-8b-instruct-job-7n4fz" reason=no component selector matches`,
			`Pod "meta-llama3-8b-instruct-5f7b8c9d4-xt2lm" reason=namespace "nim-service-staging" is not the object's namespace "nim-service"`,
		},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			obj, pods := example(t, name)
			tree := describe(t, program(t, name, nil), obj, pods)
			var got []string
			for _, l := range outline(tree) {
				got = append(got, strings.TrimSpace(l))
			}
			assert.Equal(t, want, got)
		})
	}
}

// Milvus: fragmented instances take their images from the image fragment;
// an instance whose replicas an HPA decides has no expected count, and one
// scaled to zero expects and has no pods.
func TestDescribeFragmented(t *testing.T) {
	obj, pods := example(t, "milvus")
	tree := describe(t, program(t, "milvus", nil), obj, pods)
	byName := map[string]*workload.Node{}
	workload.Walk(tree, func(n *workload.Node, _ int) bool {
		if n.Kind == workload.KindInstance {
			byName[n.Name] = n
		}
		return true
	})
	require.Contains(t, byName, "querynode")
	q := byName["querynode"].Fields
	assert.Equal(t, "fragmented", q.Style)
	assert.Nil(t, q.Expected, "an HPA decides")
	assert.Equal(t, int64(2), *q.MinReplicas)
	assert.Equal(t, int64(2), *q.Existing)
	// The Karta's image fragment is queryNode.image, which this Milvus
	// leaves to the operator's default (spec.components.image): the
	// instance names no image, its pods do.
	assert.Empty(t, q.Images)
	for _, pod := range byName["querynode"].Children {
		assert.Equal(t, []string{"milvusdb/milvus:v2.6.3"}, pod.Fields.Images, pod.Name)
	}
	assert.Len(t, byName["querynode"].Children, 2)
	idx := byName["indexnode"].Fields
	assert.Equal(t, int64(0), *idx.Expected)
	assert.Equal(t, int64(0), *idx.Existing)
	assert.Empty(t, byName["indexnode"].Children)
}

// Without pods the tree stops at the instances: no Pod, Replica or Group
// nodes, and no existing counts (unknown, not zero). An empty list of
// pods is known: every count is 0.
func TestDescribeWithoutPods(t *testing.T) {
	obj, _ := example(t, "leaderworkerset")
	p := program(t, "leaderworkerset", nil)
	tree := describe(t, p, obj, nil)
	assert.Equal(t, []string{
		`Workload "vllm-llama3-405b" status=Running`,
		`Component "leaderworkerset"`,
		`Component "group"`,
		`Component "leader"`,
		`Instance "" style=podTemplateSpec pods=?/2 scale=1[?,?] images=vllm/vllm-openai:v0.8.5`,
		`Component "worker"`,
		`Instance "" style=podTemplateSpec pods=?/6 scale=3[?,?] images=vllm/vllm-openai:v0.8.5`,
	}, trimmed(outline(tree)))

	tree = describe(t, p, obj, []*unstructured.Unstructured{})
	assert.Equal(t, []string{
		`Workload "vllm-llama3-405b" status=Running`,
		`Component "leaderworkerset"`,
		`Component "group"`,
		`Component "leader"`,
		`Instance "" style=podTemplateSpec pods=0/2 scale=1[?,?] images=vllm/vllm-openai:v0.8.5`,
		`Component "worker"`,
		`Instance "" style=podTemplateSpec pods=0/6 scale=3[?,?] images=vllm/vllm-openai:v0.8.5`,
	}, trimmed(outline(tree)))
}

// A Karta without gang instructions still places its pods, with their
// replicas, through PlacePods; there are no groups.
func TestDescribeWithoutGangInstructions(t *testing.T) {
	obj, pods := example(t, "leaderworkerset")
	p := program(t, "leaderworkerset", func(k *karta.Karta) { k.Spec.Instructions = nil })
	tree := describe(t, p, obj, pods)
	assert.Equal(t, []string{
		`Workload "vllm-llama3-405b" status=Running`,
		`Component "leaderworkerset"`,
		`Component "group"`,
		`Component "leader"`,
		`Instance "" style=podTemplateSpec pods=2/2 scale=1[?,?] images=vllm/vllm-openai:v0.8.5`,
		`Replica "0" pods=1/1`,
		`Pod "vllm-llama3-405b-0"`,
		`Replica "1" pods=1/1`,
		`Pod "vllm-llama3-405b-1"`,
		`Component "worker"`,
		`Instance "" style=podTemplateSpec pods=6/6 scale=3[?,?] images=vllm/vllm-openai:v0.8.5`,
		`Replica "0" pods=3/3`,
		`Pod "vllm-llama3-405b-0-1"`,
		`Pod "vllm-llama3-405b-0-2"`,
		`Pod "vllm-llama3-405b-0-3"`,
		`Replica "1" pods=3/3`,
		`Pod "vllm-llama3-405b-1-1"`,
		`Pod "vllm-llama3-405b-1-2"`,
		`Pod "vllm-llama3-405b-1-3"`,
		`Pod "llama-router-54c8f7d9b6-zq4nm" reason=no component selector matches`,
	}, trimmed(outline(tree)))
}

// A pod another object of the workload's kind controls is not this one's,
// whatever its labels: it is unmatched and stays out of the gangs. A
// controller of another kind, or the workload itself named without a uid,
// does not make a pod foreign.
func TestDescribeForeignPods(t *testing.T) {
	obj, pods := example(t, "pytorchjob")
	yes := true
	other := pods[1].DeepCopy() // a worker
	require.Equal(t, "mistral-7b-sft-worker-0", other.GetName())
	other.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: "mistral-7b-sft-b", UID: "b0000000-0000-4000-8000-00000000000b", Controller: &yes}})
	byName := pods[2].DeepCopy()
	require.Equal(t, "mistral-7b-sft-worker-1", byName.GetName())
	byName.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: obj.GetName(), Controller: &yes}})
	otherKind := pods[3].DeepCopy()
	require.Equal(t, "mistral-7b-sft-worker-2", otherKind.GetName())
	otherKind.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "kubeflow.org/v2", Kind: "TrainJob", Name: "t", UID: "c0", Controller: &yes}})
	tree := describe(t, program(t, "pytorchjob", nil), obj, []*unstructured.Unstructured{pods[0], other, byName, otherKind})
	const group = "pg-9b1e5c3a-24f7-4d8e-a6b0-53c2e7f91d04-job"
	assert.Equal(t, []string{
		`Workload "mistral-7b-sft" status=Running`,
		`Component "pytorchjob"`,
		`Component "master"`,
		`Instance "" style=podTemplateSpec pods=1/1 scale=1[?,?] images=123456789012.dkr.ecr.us-east-1.amazonaws.com/nlp/sft-trainer:1.8.2`,
		`Pod "mistral-7b-sft-master-0" group=` + group + ` min=4`,
		`Component "worker"`,
		`Instance "" style=podTemplateSpec pods=2/3 scale=3[?,?] images=123456789012.dkr.ecr.us-east-1.amazonaws.com/nlp/sft-trainer:1.8.2`,
		`Pod "mistral-7b-sft-worker-1" group=` + group + ` min=4`,
		`Pod "mistral-7b-sft-worker-2" group=` + group + ` min=4`,
		`Group "` + group + `" present=3/4`,
		`Group "master" present=1/1`,
		`Group "worker" present=2/3`,
		`Pod "mistral-7b-sft-worker-0" reason=owned by PyTorchJob mistral-7b-sft-b, not by this PyTorchJob`,
	}, trimmed(outline(tree)))
}

// A script's GetGangGroups is how the Karta places pods; a placement in an
// instance GetPodSpecs does not list makes the pod unmatched, with why.
func TestDescribeOverriddenGang(t *testing.T) {
	obj, pods := example(t, "pytorchjob")
	p := program(t, "pytorchjob", func(k *karta.Karta) { k.Spec.Instructions = nil }, interpreter.Script{Name: "gang.lua", Source: `
function GetGangGroups(obj, pods)
  local placements = {}
  for i, pod in ipairs(pods) do
    local c = "worker"
    if i == 1 then c = "launcher" end
    placements[i] = {pod = pod.metadata.namespace .. "/" .. pod.metadata.name, component = c, instance = "", replica = "", group = "all"}
  end
  return {groups = {{name = "all", definition = "all", minMember = 2, pods = {}}}, placements = placements, unmatched = {}}
end
`})
	tree := describe(t, p, obj, pods[:3])
	assert.Equal(t, []string{
		`Workload "mistral-7b-sft" status=Running`,
		`Component "pytorchjob"`,
		`Component "master"`,
		`Instance "" style=podTemplateSpec pods=0/1 scale=1[?,?] images=123456789012.dkr.ecr.us-east-1.amazonaws.com/nlp/sft-trainer:1.8.2`,
		`Component "worker"`,
		`Instance "" style=podTemplateSpec pods=2/3 scale=3[?,?] images=123456789012.dkr.ecr.us-east-1.amazonaws.com/nlp/sft-trainer:1.8.2`,
		`Pod "mistral-7b-sft-worker-0" group=all min=2`,
		`Pod "mistral-7b-sft-worker-1" group=all min=2`,
		`Group "all" present=0/2`,
		`Pod "mistral-7b-sft-master-0" reason=placed in component "launcher" instance "", which GetPodSpecs does not list`,
	}, trimmed(outline(tree)))
}

// A pod's component is its component selectors' answer, not the gang's:
// a component the gang leaves out still holds its pods, without a group.
// A RayJob's submitter comes after the cluster and is outside its gang; an
// MPIJob's launcher under WaitForWorkersReady comes after its workers (the
// running pods of examples/mpijob: the workers ready, then the launcher).
// The gangs themselves are TestExamples' (examples/*/golden/*.gang.json):
// here only where each pod is placed counts.
func TestDescribePodsOutsideTheGang(t *testing.T) {
	rayObj, rayPods := example(t, "rayjob")
	mpiObjs := read(filepath.Join("..", "examples", "mpijob", "wait-for-workers.yaml"))
	require.Len(t, mpiObjs, 1)
	_, mpiPods := example(t, "mpijob")
	cases := []struct {
		name    string
		obj     *unstructured.Unstructured
		pods    []*unstructured.Unstructured
		want    []string
		noGroup []string
	}{{
		name: "rayjob", obj: rayObj, pods: rayPods,
		want: []string{
			`Workload "resnet-train" status=Running`,
			`Component "rayjob"`,
			`Component "cluster"`,
			`Component "head"`,
			`Instance "" style=podTemplateSpec pods=1/1 scale=1[?,?] images=rayproject/ray:2.46.0-py311-gpu`,
			`Pod "resnet-train-raycluster-7bq8l-head-p2x4m"`,
			`Component "worker"`,
			`Instance "gpu-workers" style=podTemplateSpec pods=4/4 scale=4[4,4] images=rayproject/ray:2.46.0-py311-gpu`,
			`Pod "resnet-train-raycluster-7bq8l-gpu-workers-worker-b8rkz"`,
			`Pod "resnet-train-raycluster-7bq8l-gpu-workers-worker-f4n2q"`,
			`Pod "resnet-train-raycluster-7bq8l-gpu-workers-worker-mx7dw"`,
			`Pod "resnet-train-raycluster-7bq8l-gpu-workers-worker-tz9ch"`,
			`Component "submitter"`,
			`Instance "" style=podTemplateSpec pods=1/1 scale=1[?,?] images=rayproject/ray:2.46.0-py311-gpu`,
			`Pod "resnet-train-h9k2w"`,
		},
		noGroup: []string{"resnet-train-h9k2w"},
	}, {
		name: "mpijob wait-for-workers", obj: mpiObjs[0], pods: mpiPods,
		want: []string{
			`Workload "resnet50-horovod" status=Initializing`,
			`Component "mpijob"`,
			`Component "launcher"`,
			`Instance "" style=podTemplateSpec pods=1/1 scale=1[?,?] images=horovod/horovod:0.28.1`,
			`Pod "resnet50-horovod-launcher-n5f6q"`,
			`Component "worker"`,
			`Instance "" style=podTemplateSpec pods=4/4 scale=4[?,?] images=horovod/horovod:0.28.1`,
			`Pod "resnet50-horovod-worker-0"`,
			`Pod "resnet50-horovod-worker-1"`,
			`Pod "resnet50-horovod-worker-2"`,
			`Pod "resnet50-horovod-worker-3"`,
			`Pod "imagenet-tfrecords-s5hvj" reason=no component selector matches`,
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tree := describe(t, program(t, strings.ToLower(tc.obj.GetKind()), nil), tc.obj, tc.pods)
			assert.Equal(t, tc.want, placedOutline(tree))
			workload.Walk(tree, func(n *workload.Node, _ int) bool {
				if n.Kind == workload.KindPod && slices.Contains(tc.noGroup, n.Name) {
					assert.Empty(t, n.Fields.Group, "pod %s is outside the gang", n.Name)
					assert.Nil(t, n.Fields.MinMember, "pod %s is outside the gang", n.Name)
				}
				return true
			})
		})
	}
}

// placedOutline is outline without the gangs: no Group node, no pod's
// group and minimum.
func placedOutline(tree *workload.Node) []string {
	var out []string
	for _, l := range trimmed(outline(tree)) {
		if strings.HasPrefix(l, "Group ") {
			continue
		}
		if i := strings.Index(l, " group="); i >= 0 && strings.HasPrefix(l, "Pod ") {
			l = l[:i]
		}
		out = append(out, l)
	}
	return out
}

// A hook that fails fails Describe with its error; so does an object of
// another kind.
func TestDescribeErrors(t *testing.T) {
	p := program(t, "pytorchjob", nil)
	bad := read(filepath.Join("..", "cmd", "karta", "testdata", "in", "pytorchjob-bad-replicas.yaml"))[0]
	_, err := workload.Describe(context.Background(), p, bad, nil)
	var he *interpreter.HookError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, interpreter.HookGetPodSpecs, he.Hook)

	js, _ := example(t, "jobset")
	_, err = workload.Describe(context.Background(), p, js, nil)
	var ke *interpreter.KindMismatchError
	require.ErrorAs(t, err, &ke)
}

// The JSON of a tree has the documented field names, children as [] and
// never null, unknown counts left out; it decodes back to the same tree.
func TestNodeJSON(t *testing.T) {
	obj, pods := example(t, "pytorchjob")
	tree := describe(t, program(t, "pytorchjob", nil), obj, pods)
	data, err := json.Marshal(tree)
	require.NoError(t, err)
	var top map[string]any
	require.NoError(t, json.Unmarshal(data, &top))
	assert.ElementsMatch(t, []string{"kind", "name", "fields", "children"}, keys(top))
	fields := top["fields"].(map[string]any)
	assert.ElementsMatch(t, []string{"namespace", "apiVersion", "kind", "karta", "status", "matched", "conditions"}, keys(fields))
	master := top["children"].([]any)[0].(map[string]any)["children"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{}, master["fields"], "a component has no fields")
	inst := master["children"].([]any)[0].(map[string]any)
	assert.ElementsMatch(t, []string{"style", "replicas", "expected", "existing", "images"}, keys(inst["fields"].(map[string]any)))
	pod := inst["children"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{}, pod["children"])
	assert.ElementsMatch(t, []string{"namespace", "phase", "images", "group", "minMember"}, keys(pod["fields"].(map[string]any)))

	var back workload.Node
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, tree, &back)
}

// Walk visits parents before children with their depth, and skips the
// children of a node when told.
func TestWalk(t *testing.T) {
	obj, pods := example(t, "jobset")
	tree := describe(t, program(t, "jobset", nil), obj, pods)
	var visited []string
	workload.Walk(tree, func(n *workload.Node, depth int) bool {
		visited = append(visited, fmt.Sprintf("%d %s %s", depth, n.Kind, n.Name))
		return n.Kind != workload.KindInstance
	})
	assert.Equal(t, []string{
		"0 Workload llama3-pretrain",
		"1 Component jobset",
		"2 Component replicatedjob",
		"3 Instance driver",
		"3 Instance workers",
		"1 Group pg-3d8f2b61-7c4e-4a19-b5d2-9e0a6c1f48b7-jobset",
		"2 Group replicatedjob-driver",
		"3 Group replicatedjob-driver-replica-0",
		"2 Group replicatedjob-workers",
		"3 Group replicatedjob-workers-replica-0",
		"3 Group replicatedjob-workers-replica-1",
		"1 Pod llama3-tensorboard-6d9c7b8f5-q2wzx",
		"1 Pod llama3-pretrain-driver-0-0-cfpwn",
	}, visited)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func trimmed(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSpace(l)
	}
	return out
}

// A subgroup that needs only some of its leaves (a Volcano task's
// partitions, minPartitions 3 of 4) carries its minSubGroups in the tree,
// as the group does its own; the other subgroups carry none.
func TestDescribeSubGroupNeedsSomeLeaves(t *testing.T) {
	objs := read(filepath.Join("..", "examples", "volcano-job", "partitioned.yaml"))
	require.Len(t, objs, 1)
	pods := read(filepath.Join("..", "examples", "volcano-job", "pods-partitioned.yaml"))
	tree := describe(t, program(t, "volcano-job", nil), objs[0], pods)
	got := map[string]*int64{}
	workload.Walk(tree, func(n *workload.Node, _ int) bool {
		if n.Kind == workload.KindGroup {
			got[n.Name] = n.Fields.MinSubGroups
		}
		return true
	})
	three, two := int64(3), int64(2)
	assert.Equal(t, map[string]*int64{
		"pg-5e2c8a14-7b3d-4c9f-9a61-0d4f8e2b7c39-job": &two,
		"task-master": nil, "task-worker": &three,
		"task-worker-replica-0": nil, "task-worker-replica-1": nil, "task-worker-replica-2": nil, "task-worker-replica-3": nil,
	}, got)
}
