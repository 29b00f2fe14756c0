package perf

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// HandGo is baseline (b): InterpretStatus, GetPodSpecs and PlacePod of the
// built-in PyTorchJob, JobSet and LeaderWorkerSet Kartas written by hand in
// Go, reading the object in place — what a controller author would write
// for one kind, and the practical limit for karta. Its results are karta's
// (asserted by the benchmarks).
type HandGo struct {
	status func(obj map[string]any, res *interpreter.StatusResult)
	pods   func(obj map[string]any) (*interpreter.PodSpecs, error)
	place  func(obj, pod map[string]any, uid string) (*interpreter.PodPlacement, error)
	// templates locates the pod templates a revision names (ReviseSpec,
	// revise_baselines.go).
	templates func(obj map[string]any, comp, inst string) ([][]any, error)
}

// NewHandGo returns the hand-written hooks of a built-in, by name.
func NewHandGo(name string) (*HandGo, error) {
	switch name {
	case "pytorchjob":
		return &HandGo{status: pytorchStatus, pods: pytorchPods, place: pytorchPlace, templates: pytorchTemplates}, nil
	case "jobset":
		return &HandGo{status: jobsetStatus, pods: jobsetPods, place: jobsetPlace, templates: jobsetTemplates}, nil
	case "leaderworkerset":
		return &HandGo{status: lwsStatus, pods: lwsPods, place: lwsPlace, templates: lwsTemplates}, nil
	}
	return nil, fmt.Errorf("no hand-written Go for %q", name)
}

// InterpretStatus reads the conditions and applies the kind's rules.
func (h *HandGo) InterpretStatus(obj *unstructured.Unstructured) (*interpreter.StatusResult, error) {
	res := &interpreter.StatusResult{Status: karta.StatusUndefined, Matched: []karta.Status{}, Conditions: readConditions(obj.Object)}
	h.status(obj.Object, res)
	if len(res.Matched) > 0 {
		res.Status = res.Matched[0]
	}
	return res, nil
}

// GetPodSpecs returns the kind's pod templates and scales.
func (h *HandGo) GetPodSpecs(obj *unstructured.Unstructured) (*interpreter.PodSpecs, error) {
	return h.pods(obj.Object)
}

// PlacePod places one pod of the kind.
func (h *HandGo) PlacePod(obj, pod *unstructured.Unstructured) (*interpreter.PodPlacement, error) {
	if ns, podNS := obj.GetNamespace(), pod.GetNamespace(); ns != "" && podNS != "" && ns != podNS {
		return nil, errUnmatched
	}
	uid := string(obj.GetUID())
	if uid == "" {
		uid = obj.GetName()
	}
	return h.place(obj.Object, pod.Object, uid)
}

// get walks a path of object keys; nil when some step is missing.
func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

// num reads a number; ok is false when it is absent or not a number.
func num(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		return int64(x), x == math.Trunc(x)
	case int:
		return int64(x), true
	}
	return 0, false
}

// orDefault is `x // d` for a number.
func orDefault(v any, d int64) int64 {
	if n, ok := num(v); ok {
		return n
	}
	return d
}

func readConditions(obj map[string]any) []interpreter.Condition {
	arr, _ := get(obj, "status", "conditions").([]any)
	out := make([]interpreter.Condition, 0, len(arr))
	for _, e := range arr {
		m, _ := e.(map[string]any)
		typ, _ := m["type"].(string)
		if typ == "" {
			continue
		}
		c := interpreter.Condition{Type: typ}
		for _, f := range []struct {
			key string
			dst **string
		}{{"status", &c.Status}, {"reason", &c.Reason}, {"message", &c.Message}} {
			if s, ok := m[f.key].(string); ok {
				*f.dst = &s
			}
		}
		out = append(out, c)
	}
	return out
}

// isTrue is a byConditions rule: the last condition of the type has
// status True.
func isTrue(conds []interpreter.Condition, typ string) bool {
	for i := len(conds) - 1; i >= 0; i-- {
		if conds[i].Type == typ {
			return conds[i].Status != nil && *conds[i].Status == "True"
		}
	}
	return false
}

// anyTrue counts the conditions with status True whose type passes keep.
func anyTrue(conds []interpreter.Condition, keep func(string) bool) bool {
	for _, c := range conds {
		if c.Status != nil && *c.Status == "True" && keep(c.Type) {
			return true
		}
	}
	return false
}

func add(res *interpreter.StatusResult, s karta.Status, ok bool) {
	if ok {
		res.Matched = append(res.Matched, s)
	}
}

func pytorchStatus(_ map[string]any, res *interpreter.StatusResult) {
	c := res.Conditions
	add(res, karta.StatusFailed, isTrue(c, "Failed"))
	add(res, karta.StatusCompleted, isTrue(c, "Succeeded"))
	add(res, karta.StatusSuspended, isTrue(c, "Suspended"))
	add(res, karta.StatusDegraded, isTrue(c, "Restarting"))
	add(res, karta.StatusRunning, isTrue(c, "Running"))
	add(res, karta.StatusInitializing, isTrue(c, "Created") && !anyTrue(c, func(t string) bool { return t != "Created" }))
}

func jobsetStatus(obj map[string]any, res *interpreter.StatusResult) {
	c := res.Conditions
	ready := false
	rjs, _ := get(obj, "status", "replicatedJobsStatus").([]any)
	for _, rj := range rjs {
		if orDefault(get(rj, "ready"), 0) > 0 {
			ready = true
		}
	}
	add(res, karta.StatusFailed, isTrue(c, "Failed"))
	add(res, karta.StatusCompleted, isTrue(c, "Completed"))
	add(res, karta.StatusSuspended, isTrue(c, "Suspended"))
	add(res, karta.StatusRunning, isTrue(c, "StartupPolicyCompleted") || ready)
	add(res, karta.StatusInitializing, !ready && !anyTrue(c, func(t string) bool {
		return t == "Completed" || t == "Failed" || t == "Suspended" || t == "StartupPolicyCompleted"
	}))
}

func lwsStatus(obj map[string]any, res *interpreter.StatusResult) {
	c := res.Conditions
	ready := orDefault(get(obj, "status", "readyReplicas"), 0)
	updating := anyTrue(c, func(t string) bool { return t == "UpdateInProgress" })
	add(res, karta.StatusRunning, isTrue(c, "Available") || (isTrue(c, "UpdateInProgress") && ready > 0))
	add(res, karta.StatusInitializing, isTrue(c, "Progressing") && (!updating || ready == 0))
}

func ptr(n int64) *int64 { return &n }

// optional is a scale path that may be absent (nil).
func optional(v any) *int64 {
	if n, ok := num(v); ok {
		return &n
	}
	return nil
}

func template(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

func pytorchPods(obj map[string]any) (*interpreter.PodSpecs, error) {
	res := &interpreter.PodSpecs{Items: []interpreter.PodSpecItem{}}
	specs := get(obj, "spec", "pytorchReplicaSpecs")
	if t, ok := template(get(specs, "Master", "template")); ok {
		res.Items = append(res.Items, interpreter.PodSpecItem{Component: "master", PodTemplateSpec: t,
			Scale: &interpreter.Scale{Replicas: ptr(orDefault(get(specs, "Master", "replicas"), 1))}})
	}
	if t, ok := template(get(specs, "Worker", "template")); ok {
		res.Items = append(res.Items, interpreter.PodSpecItem{Component: "worker", PodTemplateSpec: t,
			Scale: &interpreter.Scale{
				Replicas:    ptr(orDefault(get(specs, "Worker", "replicas"), 1)),
				MinReplicas: optional(get(obj, "spec", "elasticPolicy", "minReplicas")),
				MaxReplicas: optional(get(obj, "spec", "elasticPolicy", "maxReplicas")),
			}})
	}
	return res, nil
}

// jobPods is how many pods one Job of a replicated job runs at once: the
// Job controller never runs more than min(parallelism, completions)
// (parallelism defaults to 1; no completions, no bound).
func jobPods(rj any) int64 {
	n := orDefault(get(rj, "template", "spec", "parallelism"), 1)
	if c := get(rj, "template", "spec", "completions"); c != nil {
		n = min(n, orDefault(c, n))
	}
	return n
}

func jobsetPods(obj map[string]any) (*interpreter.PodSpecs, error) {
	res := &interpreter.PodSpecs{Items: []interpreter.PodSpecItem{}}
	rjs, _ := get(obj, "spec", "replicatedJobs").([]any)
	for _, rj := range rjs {
		t, ok := template(get(rj, "template", "spec", "template"))
		if !ok {
			continue
		}
		n := orDefault(get(rj, "replicas"), 1) * jobPods(rj)
		res.Items = append(res.Items, interpreter.PodSpecItem{Component: "replicatedjob", Instance: str(rj, "name"),
			PodTemplateSpec: t, Scale: &interpreter.Scale{Replicas: ptr(n)}})
	}
	return res, nil
}

func lwsPods(obj map[string]any) (*interpreter.PodSpecs, error) {
	res := &interpreter.PodSpecs{Items: []interpreter.PodSpecItem{}}
	lwt := get(obj, "spec", "leaderWorkerTemplate")
	leader, ok := template(get(lwt, "leaderTemplate"))
	if !ok {
		leader, ok = template(get(lwt, "workerTemplate"))
	}
	if ok {
		res.Items = append(res.Items, interpreter.PodSpecItem{Component: "leader", PodTemplateSpec: leader,
			Scale: &interpreter.Scale{Replicas: ptr(1)}})
	}
	if t, ok := template(get(lwt, "workerTemplate")); ok {
		res.Items = append(res.Items, interpreter.PodSpecItem{Component: "worker", PodTemplateSpec: t,
			Scale: &interpreter.Scale{Replicas: ptr(orDefault(get(lwt, "size"), 1) - 1)}})
	}
	return res, nil
}

// eff is eff(c, i) of minMember: minReplicas if > 0, else replicas if > 0,
// else 0.
func eff(replicas int64, minReplicas *int64) int64 {
	switch {
	case minReplicas != nil && *minReplicas > 0:
		return *minReplicas
	case replicas > 0:
		return replicas
	}
	return 0
}

var errUnmatched = errors.New("pod is unmatched")

func pytorchPlace(obj, pod map[string]any, uid string) (*interpreter.PodPlacement, error) {
	labels, _ := get(pod, "metadata", "labels").(map[string]any)
	comp, _ := labels["training.kubeflow.org/replica-type"].(string)
	specs := get(obj, "spec", "pytorchReplicaSpecs")
	if (comp != "master" && comp != "worker") || get(specs, map[string]string{"master": "Master", "worker": "Worker"}[comp], "template") == nil {
		return nil, errUnmatched
	}
	var n int64
	if get(specs, "Master", "template") != nil {
		n += eff(orDefault(get(specs, "Master", "replicas"), 1), nil)
	}
	if get(specs, "Worker", "template") != nil {
		n += eff(orDefault(get(specs, "Worker", "replicas"), 1), optional(get(obj, "spec", "elasticPolicy", "minReplicas")))
	}
	n = max(1, n)
	if stated, ok := num(get(obj, "spec", "runPolicy", "schedulingPolicy", "minAvailable")); ok && stated > 0 {
		n = stated
	}
	return &interpreter.PodPlacement{Component: comp, Group: "pg-" + uid + "-job", MinMember: n, SubGroup: comp}, nil
}

func jobsetPlace(obj, pod map[string]any, uid string) (*interpreter.PodPlacement, error) {
	labels, _ := get(pod, "metadata", "labels").(map[string]any)
	js, _ := labels["jobset.sigs.k8s.io/jobset-name"].(string)
	rjName, _ := labels["jobset.sigs.k8s.io/replicatedjob-name"].(string)
	if js == "" || rjName == "" {
		return nil, errUnmatched
	}
	rjs, _ := get(obj, "spec", "replicatedJobs").([]any)
	var n, reps int64
	found := false
	for _, rj := range rjs {
		if get(rj, "template", "spec", "template") == nil {
			continue
		}
		n += max(0, orDefault(get(rj, "replicas"), 1)*jobPods(rj))
		if str(rj, "name") == rjName {
			found, reps = true, max(0, orDefault(get(rj, "replicas"), 1))
		}
	}
	if !found {
		return nil, errUnmatched
	}
	sub := "replicatedjob-" + rjName
	if reps > 0 {
		// The pod's leaf: its Job's index among the replicas.
		idx, _ := labels["jobset.sigs.k8s.io/job-index"].(string)
		if k, err := strconv.ParseInt(idx, 10, 64); err != nil || k < 0 || k >= reps {
			return nil, errUnmatched
		}
		sub += "-replica-" + idx
	}
	n = max(1, n)
	if get(obj, "spec", "startupPolicy", "startupPolicyOrder") == "InOrder" {
		n = max(1, orDefault(get(rjs[0], "replicas"), 1)*jobPods(rjs[0]))
	}
	return &interpreter.PodPlacement{Component: "replicatedjob", Instance: rjName,
		Group: "pg-" + uid + "-jobset", MinMember: n, SubGroup: sub}, nil
}

func lwsPlace(obj, pod map[string]any, uid string) (*interpreter.PodPlacement, error) {
	labels, _ := get(pod, "metadata", "labels").(map[string]any)
	_, isWorker := get(pod, "metadata", "annotations", "leaderworkerset.sigs.k8s.io/leader-name").(string)
	comp := "worker"
	if !isWorker {
		if labels["leaderworkerset.sigs.k8s.io/worker-index"] != "0" {
			return nil, errUnmatched
		}
		comp = "leader"
	}
	group, _ := labels["leaderworkerset.sigs.k8s.io/group-index"].(string)
	if group == "" {
		return nil, errUnmatched
	}
	n := 1 + max(0, orDefault(get(obj, "spec", "leaderWorkerTemplate", "size"), 1)-1)
	if get(obj, "spec", "startupPolicy") == "LeaderReady" {
		n = 1
	}
	return &interpreter.PodPlacement{Component: comp, Replica: group,
		Group: "pg-" + uid + "-group-" + group, MinMember: n, SubGroup: comp}, nil
}
