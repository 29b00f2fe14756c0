package interpreter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/karta"
)

// k8sPod builds a pod as the operators do: namespace, labels, annotations
// and a controller owner reference; ns "" leaves the namespace out.
func k8sPod(ns, name string, labels, annotations map[string]any) map[string]any {
	meta := map[string]any{
		"name":   name,
		"labels": labels,
		"ownerReferences": []any{map[string]any{
			"apiVersion": "v1", "kind": "Owner", "name": "owner", "uid": "owner-uid", "controller": true,
		}},
	}
	if ns != "" {
		meta["namespace"] = ns
	}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta,
		"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "busybox"}}}}
}

func ptLabels(replicaType, index string) map[string]any {
	return map[string]any{
		"training.kubeflow.org/job-name":      "train",
		"training.kubeflow.org/operator-name": "pytorchjob-controller",
		"training.kubeflow.org/replica-index": index,
		"training.kubeflow.org/replica-type":  replicaType,
	}
}

func jsLabels(rjob string) map[string]any {
	return map[string]any{
		"jobset.sigs.k8s.io/jobset-name":        "js",
		"jobset.sigs.k8s.io/replicatedjob-name": rjob,
		"jobset.sigs.k8s.io/job-index":          "0",
		"batch.kubernetes.io/job-name":          "js-" + rjob + "-0",
	}
}

func lwsLabels(group, worker string) map[string]any {
	return map[string]any{
		"leaderworkerset.sigs.k8s.io/name":         "lws",
		"leaderworkerset.sigs.k8s.io/group-index":  group,
		"leaderworkerset.sigs.k8s.io/worker-index": worker,
	}
}

func lwsWorkerAnnotations(group string) map[string]any {
	return map[string]any{
		"leaderworkerset.sigs.k8s.io/size":        "4",
		"leaderworkerset.sigs.k8s.io/leader-name": "lws-" + group,
	}
}

func withLabel(labels map[string]any, key string, value any) map[string]any {
	out := map[string]any{key: value}
	for k, v := range labels {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func noMaster(obj map[string]any) {
	delete(obj["spec"].(map[string]any)["pytorchReplicaSpecs"].(map[string]any), "Master")
}

func typeSelector(k *karta.Karta, name string) *karta.ComponentTypeSelector {
	for i := range k.Spec.StructureDefinition.ChildComponents {
		if c := &k.Spec.StructureDefinition.ChildComponents[i]; c.Name == name {
			return c.PodSelector.ComponentTypeSelector
		}
	}
	panic("no component " + name)
}

func kartaComponent(k *karta.Karta, name string) *karta.Component {
	for _, c := range k.Spec.StructureDefinition.Components() {
		if c.Name == name {
			return c
		}
	}
	panic("no component " + name)
}

// TestPlacePod covers pod placement (docs/karta.md, "Pods"), rule by rule.
func TestPlacePod(t *testing.T) {
	type want struct{ comp, inst, replica string }
	cases := []struct {
		name      string
		karta     string
		object    string
		editKarta func(*karta.Karta)
		editObj   func(map[string]any)
		pod       map[string]any
		want      want
		reason    string
	}{
		// 1. Namespace.
		{name: "same namespace", karta: "pytorchjob", object: "pytorchjob",
			pod: k8sPod("ml", "train-worker-0", ptLabels("worker", "0"), nil), want: want{comp: "worker"}},
		{name: "namespace mismatch", karta: "pytorchjob", object: "pytorchjob",
			pod:    k8sPod("other", "train-worker-0", ptLabels("worker", "0"), nil),
			reason: `namespace "other" is not the object's namespace "ml"`},
		{name: "pod without namespace", karta: "pytorchjob", object: "pytorchjob",
			pod: k8sPod("", "train-worker-0", ptLabels("worker", "0"), nil), want: want{comp: "worker"}},
		{name: "object without namespace", karta: "pytorchjob", object: "pytorchjob",
			editObj: func(o map[string]any) { delete(o["metadata"].(map[string]any), "namespace") },
			pod:     k8sPod("other", "train-worker-0", ptLabels("worker", "0"), nil), want: want{comp: "worker"}},

		// 2. Component.
		{name: "by value", karta: "pytorchjob", object: "pytorchjob",
			pod: k8sPod("ml", "train-master-0", ptLabels("master", "0"), nil), want: want{comp: "master"}},
		{name: "several candidates, none matches", karta: "pytorchjob", object: "pytorchjob",
			pod:    k8sPod("ml", "train-launcher", ptLabels("launcher", "0"), nil),
			reason: "no component selector matches"},
		{name: "several candidates, several match", karta: "pytorchjob", object: "pytorchjob",
			editKarta: func(k *karta.Karta) { typeSelector(k, "worker").Value = nil },
			pod:       k8sPod("ml", "train-master-0", ptLabels("master", "0"), nil),
			reason:    "ambiguous: matches master, worker"},
		{name: "an absent instance is no candidate", karta: "pytorchjob", object: "pytorchjob", editObj: noMaster,
			pod: k8sPod("ml", "train-worker-0", ptLabels("worker", "0"), nil), want: want{comp: "worker"}},
		{name: "single candidate: its selector is enforced", karta: "pytorchjob", object: "pytorchjob", editObj: noMaster,
			pod:    k8sPod("ml", "train-master-0", ptLabels("master", "0"), nil),
			reason: "no component selector matches"},
		{name: "single candidate: a pod without labels", karta: "pytorchjob", object: "pytorchjob", editObj: noMaster,
			pod:    k8sPod("ml", "debug", nil, nil),
			reason: "no component selector matches"},
		{name: "single candidate without selector takes any pod", karta: "pytorchjob", object: "pytorchjob", editObj: noMaster,
			editKarta: func(k *karta.Karta) { kartaComponent(k, "worker").PodSelector = nil },
			pod:       k8sPod("ml", "debug", nil, nil), want: want{comp: "worker"}},
		{name: "without value false counts", karta: "pytorchjob", object: "pytorchjob", editObj: noMaster,
			editKarta: func(k *karta.Karta) {
				*typeSelector(k, "worker") = karta.ComponentTypeSelector{KeyPath: `.metadata.labels["training.kubeflow.org/replica-type"] == "worker"`}
			},
			pod: k8sPod("ml", "train-master-0", ptLabels("master", "0"), nil), want: want{comp: "worker"}},
		{name: "without value no output does not match", karta: "pytorchjob", object: "pytorchjob", editObj: noMaster,
			editKarta: func(k *karta.Karta) {
				*typeSelector(k, "worker") = karta.ComponentTypeSelector{KeyPath: `.metadata.labels["training.kubeflow.org/replica-type"] | select(. == "worker")`}
			},
			pod:    k8sPod("ml", "train-master-0", ptLabels("master", "0"), nil),
			reason: "no component selector matches"},
		{name: "any output may match", karta: "pytorchjob", object: "pytorchjob",
			editKarta: func(k *karta.Karta) {
				typeSelector(k, "master").KeyPath = `.metadata.labels["training.kubeflow.org/job-role"], .metadata.labels["training.kubeflow.org/replica-type"]`
			},
			pod: k8sPod("ml", "train-master-0", ptLabels("master", "0"), nil), want: want{comp: "master", replica: ""}},
		{name: "no candidate at all", karta: "raycluster", object: "raycluster",
			editObj: func(o map[string]any) {
				spec := o["spec"].(map[string]any)
				delete(spec, "headGroupSpec")
				delete(spec, "workerGroupSpecs")
			},
			pod:    k8sPod("ray", "rc-head-8kq4w", map[string]any{"ray.io/node-type": "head"}, nil),
			reason: "no pod-bearing component has a present instance"},
		{name: "a jq error in a type selector", karta: "pytorchjob", object: "pytorchjob",
			pod:    map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "odd", "namespace": "ml", "labels": []any{"worker"}}},
			reason: `jq .metadata.labels["training.kubeflow.org/replica-type"]: expected an object but got: array (["worker"])`},

		// The value is compared with jq's ==, never pasted into jq.
		{name: "value equals the label", karta: "leaderworkerset", object: "leaderworkerset",
			pod: k8sPod("serving", "lws-1", lwsLabels("1", "0"), nil), want: want{comp: "leader", replica: "1"}},
		{name: "value is a string: number 0 is not \"0\"", karta: "leaderworkerset", object: "leaderworkerset",
			editKarta: func(k *karta.Karta) {
				typeSelector(k, "leader").KeyPath = `.metadata.labels["leaderworkerset.sigs.k8s.io/worker-index"] | tonumber`
			},
			pod:    k8sPod("serving", "lws-1", lwsLabels("1", "0"), nil),
			reason: "no component selector matches"},
		{name: "value is not jq text", karta: "leaderworkerset", object: "leaderworkerset",
			editKarta: func(k *karta.Karta) {
				v := `0" or true or "`
				typeSelector(k, "leader").Value = &v
			},
			pod: k8sPod("serving", "lws-1-2", lwsLabels("1", "2"), lwsWorkerAnnotations("1")), want: want{comp: "worker", replica: "1"}},

		// 3. Instance.
		{name: "instance by name", karta: "jobset", object: "jobset",
			pod: k8sPod("research", "js-workers-1-2-q12", jsLabels("workers"), nil), want: want{comp: "replicatedjob", inst: "workers"}},
		{name: "unknown instance", karta: "jobset", object: "jobset",
			pod:    k8sPod("research", "js-w3-0-0", jsLabels("w3"), nil),
			reason: `instance "w3" not found among [driver workers]`},
		{name: "absent instance", karta: "jobset", object: "jobset",
			editObj: func(o map[string]any) {
				rj := o["spec"].(map[string]any)["replicatedJobs"].([]any)[1].(map[string]any)
				delete(rj["template"].(map[string]any)["spec"].(map[string]any), "template")
			},
			pod:    k8sPod("research", "js-workers-0-0", jsLabels("workers"), nil),
			reason: `instance "workers" not found among [driver]`},
		{name: "no instance label", karta: "jobset", object: "jobset",
			pod:    k8sPod("research", "js-x", map[string]any{"jobset.sigs.k8s.io/jobset-name": "js"}, nil),
			reason: `component "replicatedjob": componentInstanceSelector yields null, want a non-empty string or a number`},
		{name: "empty instance label", karta: "jobset", object: "jobset",
			pod:    k8sPod("research", "js-x", jsLabels(""), nil),
			reason: `component "replicatedjob": componentInstanceSelector yields string "", want a non-empty string or a number`},
		{name: "several instance values", karta: "jobset", object: "jobset",
			editKarta: func(k *karta.Karta) {
				kartaComponent(k, "replicatedjob").PodSelector.ComponentInstanceSelector.IDPath = `.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"], .metadata.labels["batch.kubernetes.io/job-name"]`
			},
			pod:    k8sPod("research", "js-driver-0-0", jsLabels("driver"), nil),
			reason: `component "replicatedjob": componentInstanceSelector yields 2 values, want exactly one`},
		{name: "number ids on both sides", karta: "indexed-jobset", object: "jobset",
			pod:  k8sPod("research", "js-workers-0-0", withLabel(jsLabels("workers"), "example.com/replicatedjob-index", "1"), nil),
			want: want{comp: "replicatedjob", inst: "1"}},
		{name: "number id not found", karta: "indexed-jobset", object: "jobset",
			pod:    k8sPod("research", "js-workers-0-0", withLabel(jsLabels("workers"), "example.com/replicatedjob-index", "7"), nil),
			reason: `instance "7" not found among [0 1]`},
		{name: "a jq error in the instance selector", karta: "indexed-jobset", object: "jobset",
			pod:    k8sPod("research", "js-workers-0-0", withLabel(jsLabels("workers"), "example.com/replicatedjob-index", "one"), nil),
			reason: `jq .metadata.labels["example.com/replicatedjob-index"] | tonumber: tonumber cannot be applied to "one": invalid number`},

		// 4. Replica.
		{name: "no replicaSelector: empty key", karta: "jobset", object: "jobset",
			pod: k8sPod("research", "js-driver-0-0", jsLabels("driver"), nil), want: want{comp: "replicatedjob", inst: "driver"}},
		{name: "a worker inherits group's key", karta: "leaderworkerset", object: "leaderworkerset",
			pod: k8sPod("serving", "lws-0-3", lwsLabels("0", "3"), lwsWorkerAnnotations("0")), want: want{comp: "worker", replica: "0"}},
		{name: "own replicaSelector wins over the ancestor's", karta: "leaderworkerset", object: "leaderworkerset",
			editKarta: func(k *karta.Karta) {
				kartaComponent(k, "worker").PodSelector.ReplicaSelector = &karta.ReplicaSelector{KeyPath: `.metadata.labels["leaderworkerset.sigs.k8s.io/worker-index"]`}
			},
			pod: k8sPod("serving", "lws-0-3", lwsLabels("0", "3"), lwsWorkerAnnotations("0")), want: want{comp: "worker", replica: "3"}},
		{name: "a number replica key through tostring", karta: "leaderworkerset", object: "leaderworkerset",
			editKarta: func(k *karta.Karta) {
				kartaComponent(k, "group").PodSelector.ReplicaSelector.KeyPath = `.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"] | tonumber`
			},
			pod: k8sPod("serving", "lws-1-1", lwsLabels("1", "1"), lwsWorkerAnnotations("1")), want: want{comp: "worker", replica: "1"}},
		{name: "no replica key", karta: "leaderworkerset", object: "leaderworkerset",
			pod:    k8sPod("serving", "lws-1-1", map[string]any{"leaderworkerset.sigs.k8s.io/worker-index": "1"}, lwsWorkerAnnotations("1")),
			reason: `component "group": replicaSelector yields null, want a non-empty string or a number`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := gangKarta(t, tc.karta)
			if tc.editKarta != nil {
				tc.editKarta(k)
			}
			obj := gangObj(t, tc.object)
			if tc.editObj != nil {
				tc.editObj(obj)
			}
			g := compileGang(t, k)
			o, err := g.readObject(context.Background(), gojqEvaluator{}, obj)
			require.NoError(t, err)
			pi := newPodIn(tc.pod)
			pl, reason := g.placePod(context.Background(), gojqEvaluator{}, o, &pi)
			if tc.reason != "" {
				assert.Equal(t, tc.reason, reason)
				assert.Nil(t, pl.comp)
				return
			}
			require.Empty(t, reason)
			assert.Equal(t, tc.want, want{comp: pl.comp.c.Name, inst: pl.instance, replica: pl.replica})
		})
	}
}

// TestPlacePodOutcomeInGangGroups: a placement reason reaches
// GetGangGroups' unmatched list unchanged, and a placed pod's placement
// is reported with its group.
func TestPlacePodOutcomeInGangGroups(t *testing.T) {
	g := compileGang(t, gangKarta(t, "leaderworkerset"))
	obj := gangObj(t, "leaderworkerset")
	pods := []map[string]any{
		k8sPod("serving", "lws-0-1", lwsLabels("0", "1"), lwsWorkerAnnotations("0")),
		k8sPod("default", "lws-0-2", lwsLabels("0", "2"), lwsWorkerAnnotations("0")),
	}
	res := runGang(t, g, obj, pods)
	assert.Equal(t, []Placement{{Pod: "serving/lws-0-1", Component: "worker", Instance: "", Replica: "0", Group: "pg-u-group-lws-0"}}, res.Placements)
	assert.Equal(t, []Unmatched{{Pod: "default/lws-0-2", Reason: `namespace "default" is not the object's namespace "serving"`}}, res.Unmatched)
}
