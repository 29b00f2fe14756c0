package podgroups

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestApportion(t *testing.T) {
	cases := []struct {
		name   string
		counts []int64
		n      int64
		want   []int64
	}{
		{"the units' total: each its own", []int64{1, 3}, 4, []int64{1, 3}},
		{"a smaller minimum: the first units first", []int64{1, 4}, 3, []int64{1, 2}},
		{"smaller than the first unit", []int64{4, 4}, 2, []int64{2, 0}},
		{"a multiple: passes repeat (replicas of an ancestor)", []int64{1, 3}, 8, []int64{2, 6}},
		{"a multiple and a rest", []int64{1, 3}, 6, []int64{2, 4}},
		{"units that expect no pod take none", []int64{0, 2, 0}, 2, []int64{0, 2, 0}},
		{"no unit expects a pod", []int64{0, 0}, 3, nil},
		{"no units", nil, 3, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := apportion(tc.counts, tc.n)
			assert.Equal(t, tc.want, got)
			if got != nil {
				var sum int64
				for _, n := range got {
					sum += n
				}
				assert.Equal(t, tc.n, sum, "the parts add up to the minimum")
			}
		})
	}
}

func TestObjectName(t *testing.T) {
	long := "pg-3d8f2b61-7c4e-4a19-b5d2-9e0a6c1f48b7-replicatedjob-llama3-pretrain-workers"
	cases := []struct {
		name   string
		target Target
		group  string
		want   string
	}{
		{"a valid name is kept", KAI, long, long},
		{"the workload API takes 253 characters", WorkloadAPI, long, long},
		{"coscheduling's label value: at most 63, with a hash", Coscheduling, long, "pg-3d8f2b61-7c4e-4a19-b5d2-9e0a6c1f48b7-replicatedjob-6df8fad9"},
		{"upper case and other characters", Volcano, "pg-u-job-Mistral_7B/SFT", "pg-u-job-mistral-7b-sft-8862218d"},
		{"nothing usable", KAI, "___", "g-bda25155"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ObjectName(tc.target, tc.group)
			assert.Equal(t, tc.want, got)
			assert.Empty(t, validation.IsDNS1123Subdomain(got))
			if tc.target == Coscheduling {
				assert.Empty(t, validation.IsValidLabelValue(got))
			}
			assert.Equal(t, got, ObjectName(tc.target, tc.group), "the same name every time")
		})
	}
	// Two groups that sanitise alike keep different names.
	assert.NotEqual(t, ObjectName(KAI, "pg-u-A"), ObjectName(KAI, "pg-u-a_"))
	assert.True(t, strings.HasPrefix(ObjectName(KAI, "pg-u-A"), "pg-u-a-"))
	// A DNS label (templates, subgroups, tasks) has no dots.
	assert.Empty(t, validation.IsDNS1123Label(labelName("worker.gpu")))
}

func quantities(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// One pod's requests are kube-scheduler's: limits default requests, init
// containers count by their largest, sidecars add up, overhead is added,
// pod-level resources win.
func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	cases := []struct {
		name string
		spec corev1.PodSpec
		want corev1.ResourceList
	}{
		{"requests", corev1.PodSpec{Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "2", "memory", "4Gi")}},
			{Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "500m")}},
		}}, quantities("cpu", "2500m", "memory", "4Gi")},
		{"a limit without a request is the request", corev1.PodSpec{Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Limits: quantities("nvidia.com/gpu", "8", "cpu", "4"), Requests: quantities("cpu", "1")}},
		}}, quantities("cpu", "1", "nvidia.com/gpu", "8")},
		{"the largest init container when larger", corev1.PodSpec{
			InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "8")}}},
			Containers:     []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "2", "memory", "1Gi")}}},
		}, quantities("cpu", "8", "memory", "1Gi")},
		{"a sidecar adds up", corev1.PodSpec{
			InitContainers: []corev1.Container{{RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "1")}}},
			Containers:     []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "2")}}},
		}, quantities("cpu", "3")},
		{"overhead", corev1.PodSpec{
			Overhead:   quantities("cpu", "250m"),
			Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "1")}}},
		}, quantities("cpu", "1250m")},
		{"pod-level resources", corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: quantities("cpu", "6")},
			Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "2", "memory", "1Gi")}}},
		}, quantities("cpu", "6", "memory", "1Gi")},
		{"nothing requested", corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}, corev1.ResourceList{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := podRequests(&tc.spec)
			require.Len(t, got, len(tc.want), "%v", got)
			for k, q := range tc.want {
				assert.Zero(t, q.Cmp(got[k]), "%s: got %s, want %s", k, ptr(got[k]).String(), q.String())
			}
		})
	}
}

func TestMinResources(t *testing.T) {
	master := &unit{requests: quantities("cpu", "4", "memory", "16Gi")}
	worker := &unit{requests: quantities("cpu", "8", "nvidia.com/gpu", "1")}
	idle := &unit{requests: corev1.ResourceList{}}
	got := minResources([]share{{master, 1}, {worker, 3}, {idle, 2}})
	assert.Equal(t, "28", ptr(got["cpu"]).String())
	assert.Equal(t, "16Gi", ptr(got["memory"]).String())
	assert.Equal(t, "3", ptr(got["nvidia.com/gpu"]).String())
	assert.Nil(t, minResources([]share{{idle, 5}}), "nothing requested: no minResources")
}

func ptr(q resource.Quantity) *resource.Quantity { return &q }

func TestSetEntries(t *testing.T) {
	pod := func(meta map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta}}
	}
	entries := map[string]string{"b/x": "1", "a": "2"}
	cases := []struct {
		name string
		pod  *unstructured.Unstructured
		want string
	}{
		{"no map: one add of the whole map", pod(map[string]any{"name": "p"}),
			`[{add /metadata/annotations map[a:2 b/x:1]}]`},
		{"a map: an add per missing entry, in key order, escaped", pod(map[string]any{"annotations": map[string]any{"c": "3"}}),
			`[{add /metadata/annotations/a 2} {add /metadata/annotations/b~1x 1}]`},
		{"a differing entry is replaced, an equal one left", pod(map[string]any{"annotations": map[string]any{"a": "9", "b/x": "1"}}),
			`[{replace /metadata/annotations/a 2}]`},
		{"all there: no operation", pod(map[string]any{"annotations": map[string]any{"a": "2", "b/x": "1"}}), `[]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ops := setEntries(nil, tc.pod, "annotations", entries)
			got := "["
			for i, op := range ops {
				if i > 0 {
					got += " "
				}
				got += "{" + op.Op + " " + op.Path + " " + strings.TrimSpace(strings.ReplaceAll(fmtValue(op.Value), "\n", "")) + "}"
			}
			assert.Equal(t, tc.want, got+"]")
		})
	}
	// A second call sees the first one's writes (one pod, two maps).
	p := &unstructured.Unstructured{Object: map[string]any{}}
	ops := setEntries(nil, p, "annotations", map[string]string{"a": "1"})
	ops = setEntries(ops, p, "labels", map[string]string{"b": "2"})
	require.Len(t, ops, 2)
	assert.Equal(t, "/metadata", ops[0].Path)
	assert.Equal(t, "/metadata/labels", ops[1].Path)
}

func fmtValue(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + x[k].(string)
		}
		return "map[" + strings.Join(parts, " ") + "]"
	case string:
		return x
	}
	return ""
}
