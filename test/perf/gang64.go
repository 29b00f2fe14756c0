package perf

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/internal/corpus"
)

// GangPods is the number of pods of the gang benchmarks' workloads.
const GangPods = 64

// Gang64 scales a target workload's running example to GangPods pods and
// makes the pods its operator would create, labelled as the operator labels
// them (cloned from the example's own pods, so every other field is real):
//
//   - pytorchjob: one master and 63 workers;
//   - jobset: the driver (1 × 1) and workers of 7 Jobs × parallelism 9;
//   - leaderworkerset: 16 groups of size 4 (a leader and 3 workers each).
//
// Other workloads are an error.
func Gang64(w *corpus.Workload) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	obj := w.Running.DeepCopy()
	var build func(*unstructured.Unstructured, []*unstructured.Unstructured) ([]*unstructured.Unstructured, error)
	switch w.Name {
	case "pytorchjob":
		build = pytorchGang
	case "jobset":
		build = jobsetGang
	case "leaderworkerset":
		build = lwsGang
	default:
		return nil, nil, fmt.Errorf("no %d-pod gang for %s", GangPods, w.Name)
	}
	pods, err := build(obj, w.Pods)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", w.Name, err)
	}
	return obj, pods, nil
}

// podWith returns a deep copy of the first pod whose label key has value
// (any value when value is "").
func podWith(pods []*unstructured.Unstructured, key, value string) (*unstructured.Unstructured, error) {
	for _, p := range pods {
		if v, ok := p.GetLabels()[key]; ok && (value == "" || v == value) {
			return p.DeepCopy(), nil
		}
	}
	return nil, fmt.Errorf("no example pod with label %s=%s", key, value)
}

// clone is a copy of pod with a new name and uid and the labels set.
func clone(pod *unstructured.Unstructured, name string, labels map[string]string) *unstructured.Unstructured {
	c := pod.DeepCopy()
	c.SetName(name)
	c.SetUID(types.UID("uid-" + name))
	l := c.GetLabels()
	for k, v := range labels {
		l[k] = v
	}
	c.SetLabels(l)
	return c
}

func pytorchGang(obj *unstructured.Unstructured, examples []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	const workers = GangPods - 1
	if err := unstructured.SetNestedField(obj.Object, int64(workers), "spec", "pytorchReplicaSpecs", "Worker", "replicas"); err != nil {
		return nil, err
	}
	master, err := podWith(examples, "training.kubeflow.org/replica-type", "master")
	if err != nil {
		return nil, err
	}
	worker, err := podWith(examples, "training.kubeflow.org/replica-type", "worker")
	if err != nil {
		return nil, err
	}
	pods := []*unstructured.Unstructured{master}
	for i := range workers {
		pods = append(pods, clone(worker, fmt.Sprintf("%s-worker-%d", obj.GetName(), i), map[string]string{
			"training.kubeflow.org/replica-index": strconv.Itoa(i),
		}))
	}
	return pods, nil
}

func jobsetGang(obj *unstructured.Unstructured, examples []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	const jobs, parallelism = 7, 9
	rjs, _, err := unstructured.NestedSlice(obj.Object, "spec", "replicatedJobs")
	if err != nil {
		return nil, err
	}
	found := false
	for _, rj := range rjs {
		m := rj.(map[string]any)
		if m["name"] != "workers" {
			continue
		}
		found = true
		m["replicas"] = int64(jobs)
		for _, f := range []string{"parallelism", "completions"} {
			if err := unstructured.SetNestedField(m, int64(parallelism), "template", "spec", f); err != nil {
				return nil, err
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("jobset example without a workers replicated job")
	}
	if err := unstructured.SetNestedSlice(obj.Object, rjs, "spec", "replicatedJobs"); err != nil {
		return nil, err
	}
	driver, err := podWith(examples, "jobset.sigs.k8s.io/replicatedjob-name", "driver")
	if err != nil {
		return nil, err
	}
	worker, err := podWith(examples, "jobset.sigs.k8s.io/replicatedjob-name", "workers")
	if err != nil {
		return nil, err
	}
	pods := []*unstructured.Unstructured{driver}
	for j := range jobs {
		for k := range parallelism {
			job := fmt.Sprintf("%s-workers-%d", obj.GetName(), j)
			pods = append(pods, clone(worker, fmt.Sprintf("%s-%d-bench", job, k), map[string]string{
				"jobset.sigs.k8s.io/job-index":             strconv.Itoa(j),
				"jobset.sigs.k8s.io/job-global-index":      strconv.Itoa(j + 1),
				"batch.kubernetes.io/job-name":             job,
				"job-name":                                 job,
				"batch.kubernetes.io/job-completion-index": strconv.Itoa(k),
			}))
		}
	}
	return pods, nil
}

func lwsGang(obj *unstructured.Unstructured, examples []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	const groups, size = 16, 4
	if err := unstructured.SetNestedField(obj.Object, int64(groups), "spec", "replicas"); err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(obj.Object, int64(size), "spec", "leaderWorkerTemplate", "size"); err != nil {
		return nil, err
	}
	leader, err := podWith(examples, "leaderworkerset.sigs.k8s.io/worker-index", "0")
	if err != nil {
		return nil, err
	}
	var worker *unstructured.Unstructured
	for _, p := range examples {
		if _, ok := p.GetAnnotations()["leaderworkerset.sigs.k8s.io/leader-name"]; ok {
			worker = p.DeepCopy()
			break
		}
	}
	if worker == nil {
		return nil, fmt.Errorf("leaderworkerset example without a worker pod")
	}
	var pods []*unstructured.Unstructured
	for g := range groups {
		leaderName := fmt.Sprintf("%s-%d", obj.GetName(), g)
		pods = append(pods, clone(leader, leaderName, map[string]string{
			"leaderworkerset.sigs.k8s.io/group-index": strconv.Itoa(g),
		}))
		for i := 1; i < size; i++ {
			w := clone(worker, fmt.Sprintf("%s-%d", leaderName, i), map[string]string{
				"leaderworkerset.sigs.k8s.io/group-index":  strconv.Itoa(g),
				"leaderworkerset.sigs.k8s.io/worker-index": strconv.Itoa(i),
			})
			ann := w.GetAnnotations()
			ann["leaderworkerset.sigs.k8s.io/leader-name"] = leaderName
			w.SetAnnotations(ann)
			pods = append(pods, w)
		}
	}
	return pods, nil
}
