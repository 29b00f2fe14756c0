package perf

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
)

// GangGo is baseline (b) of GetGangGroups: a hand-written pod grouper per
// kind for the built-in PyTorchJob, JobSet and LeaderWorkerSet Kartas, in
// the manner of KAI-Scheduler's pod-grouper plugins
// (pkg/podgrouper/podgrouper/plugins/kubeflow/pytorch, .../leaderworkerset):
// a pod's replica type and group are read from the labels its operator
// sets, the group's minimum from the workload's spec (PyTorchJob's
// runPolicy.schedulingPolicy.minAvailable, else its replicas with
// elasticPolicy.minReplicas for workers; a JobSet replicated job's
// replicas × min(parallelism, completions); an LWS group's size). KAI groups one pod per
// call against its top owner; GetGangGroups groups a workload's pods at
// once, so the grouper reads the spec once and makes one pass over the
// pods. KAI has no JobSet plugin; the JobSet grouper follows the same
// pattern with JobSet's pod labels. Its results are karta's (asserted by
// the benchmarks and TestBaselinesAgreeWithKarta): the reasons of the
// unmatched pods the examples hold are karta's words.
type GangGo struct {
	kind gangKind
}

// gangKind is one kind's grouper: the group of each pod (or the reason it
// has none) and each group's minimum, from the object read once (spec).
type gangKind interface {
	// read reads what the kind's grouping needs from the object.
	read(obj map[string]any) gangSpec
}

// gangSpec is a kind's object read for one call.
type gangSpec interface {
	// place returns the pod's component, instance, replica, group key
	// suffix (after pg-<uid>-) and definition, or the reason it is
	// unmatched.
	place(labels, annotations map[string]any) (p gangPlace, reason string)
	// minMember is the minimum of a group of the definition, by the
	// placement of one of its pods.
	minMember(p *gangPlace) int64
}

type gangPlace struct {
	component, instance, replica string
	definition                   string
	// key is the group's key labels: the group is
	// pg-<uid>-<definition>-<key[0]>[-<key[1]>].
	key [2]string
}

// NewGangGo returns the hand-written grouper of a built-in, by name.
func NewGangGo(name string) (*GangGo, error) {
	switch name {
	case "pytorchjob":
		return &GangGo{kind: pytorchGrouper{}}, nil
	case "jobset":
		return &GangGo{kind: jobsetGrouper{}}, nil
	case "leaderworkerset":
		return &GangGo{kind: lwsGrouper{}}, nil
	}
	return nil, fmt.Errorf("no hand-written pod grouper for %q", name)
}

// GetGangGroups groups the pods: placements and unmatched pods in input
// order, groups sorted by name with their pods sorted.
func (g *GangGo) GetGangGroups(obj *unstructured.Unstructured, pods []*unstructured.Unstructured) (*interpreter.GangResult, error) {
	res := &interpreter.GangResult{Groups: []interpreter.Group{}, Placements: make([]interpreter.Placement, 0, len(pods)), Unmatched: []interpreter.Unmatched{}}
	uid := string(obj.GetUID())
	if uid == "" {
		uid = obj.GetName()
	}
	ns := obj.GetNamespace()
	spec := g.kind.read(obj.Object)
	// Groups by key labels, so that a group's name is built once.
	byKey := map[[2]string]int{}
	for _, pod := range pods {
		meta, _ := pod.Object["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		podNS, _ := meta["namespace"].(string)
		if podNS != "" {
			name = podNS + "/" + name
		}
		if podNS != "" && ns != "" && podNS != ns {
			res.Unmatched = append(res.Unmatched, interpreter.Unmatched{Pod: name,
				Reason: fmt.Sprintf("namespace %q is not the object's namespace %q", podNS, ns)})
			continue
		}
		labels, _ := meta["labels"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		p, reason := spec.place(labels, annotations)
		if reason != "" {
			res.Unmatched = append(res.Unmatched, interpreter.Unmatched{Pod: name, Reason: reason})
			continue
		}
		i, ok := byKey[p.key]
		if !ok {
			group := "pg-" + uid + "-" + p.definition + "-" + p.key[0]
			if p.key[1] != "" {
				group += "-" + p.key[1]
			}
			i = len(res.Groups)
			byKey[p.key] = i
			res.Groups = append(res.Groups, interpreter.Group{Name: group, Definition: p.definition,
				MinMember: spec.minMember(&p)})
		}
		res.Groups[i].Pods = append(res.Groups[i].Pods, name)
		res.Placements = append(res.Placements, interpreter.Placement{Pod: name, Component: p.component,
			Instance: p.instance, Replica: p.replica, Group: res.Groups[i].Name})
	}
	for i := range res.Groups {
		slices.Sort(res.Groups[i].Pods)
	}
	slices.SortFunc(res.Groups, func(a, b interpreter.Group) int { return strings.Compare(a.Name, b.Name) })
	return res, nil
}

// label is a label's value, "" when it is missing or not a string.
func label(labels map[string]any, key string) (string, bool) {
	s, ok := labels[key].(string)
	return s, ok
}

// keyReason is karta's reason for a group key label that is missing or
// empty.
func keyReason(def, member, key string, v any) string {
	what := "null"
	if s, ok := v.(string); ok {
		what = fmt.Sprintf("string %q", s)
	}
	return fmt.Sprintf("group %q member %q: groupByKeyPath %q yields %s, want a non-empty string, a number or a boolean",
		def, member, `.metadata.labels["`+key+`"]`, what)
}

// pytorchGrouper: master and worker pods by training.kubeflow.org/
// replica-type, one group per job-name label.
type pytorchGrouper struct{}

type pytorchSpec struct {
	master, worker bool
	// min is the group's minimum: minAvailable, else the master's and
	// workers' replicas (elasticPolicy.minReplicas for workers).
	min int64
}

const (
	ptReplicaType = "training.kubeflow.org/replica-type"
	ptJobName     = "training.kubeflow.org/job-name"
)

func (pytorchGrouper) read(obj map[string]any) gangSpec {
	specs := get(obj, "spec", "pytorchReplicaSpecs")
	s := &pytorchSpec{master: get(specs, "Master", "template") != nil, worker: get(specs, "Worker", "template") != nil}
	if n, ok := num(get(obj, "spec", "runPolicy", "schedulingPolicy", "minAvailable")); ok && n > 0 {
		s.min = n
		return s
	}
	if s.master {
		s.min += eff(orDefault(get(specs, "Master", "replicas"), 1), nil)
	}
	if s.worker {
		s.min += eff(orDefault(get(specs, "Worker", "replicas"), 1), optional(get(obj, "spec", "elasticPolicy", "minReplicas")))
	}
	// With startupPolicy LeaderReady the controller creates a group's
	// workers only once its leader is Ready: the gang is the leader alone.
	if get(obj, "spec", "startupPolicy") == "LeaderReady" {
		s.min = 1
	}
	s.min = max(1, s.min)
	return s
}

func (s *pytorchSpec) place(labels, _ map[string]any) (gangPlace, string) {
	if !s.master && !s.worker {
		return gangPlace{}, "no pod-bearing component has a present instance"
	}
	rt, _ := label(labels, ptReplicaType)
	if !(rt == "master" && s.master) && !(rt == "worker" && s.worker) {
		return gangPlace{}, "no component selector matches"
	}
	job, ok := label(labels, ptJobName)
	if !ok || job == "" {
		return gangPlace{}, keyReason("job", rt, ptJobName, labels[ptJobName])
	}
	return gangPlace{component: rt, definition: "job", key: [2]string{job}}, ""
}

func (s *pytorchSpec) minMember(*gangPlace) int64 { return s.min }

// jobsetGrouper: a pod of a JobSet carries its jobset-name and
// replicatedjob-name; one group per replicated job, of replicas ×
// parallelism pods.
type jobsetGrouper struct{}

type jobsetSpec struct {
	// ids are the replicated jobs' names, present whether they have a pod
	// template; pods their pod count.
	ids     []string
	present []bool
	pods    []int64
}

const (
	jsName   = "jobset.sigs.k8s.io/jobset-name"
	jsRJName = "jobset.sigs.k8s.io/replicatedjob-name"
)

func (jobsetGrouper) read(obj map[string]any) gangSpec {
	s := &jobsetSpec{}
	rjs, _ := get(obj, "spec", "replicatedJobs").([]any)
	for _, rj := range rjs {
		s.ids = append(s.ids, str(rj, "name"))
		s.present = append(s.present, get(rj, "template", "spec", "template") != nil)
		s.pods = append(s.pods, max(0, orDefault(get(rj, "replicas"), 1)*jobPods(rj)))
	}
	return s
}

func (s *jobsetSpec) place(labels, _ map[string]any) (gangPlace, string) {
	if !slices.Contains(s.present, true) {
		return gangPlace{}, "no pod-bearing component has a present instance"
	}
	if labels[jsName] == nil {
		return gangPlace{}, "no component selector matches"
	}
	rj, ok := label(labels, jsRJName)
	if !ok || rj == "" {
		what := "null"
		if ok {
			what = `string ""`
		}
		return gangPlace{}, fmt.Sprintf("component %q: componentInstanceSelector yields %s, want a non-empty string or a number", "replicatedjob", what)
	}
	var present []string
	for i, id := range s.ids {
		if !s.present[i] {
			continue
		}
		if id == rj {
			js, ok := label(labels, jsName)
			if !ok || js == "" {
				return gangPlace{}, keyReason("replicatedjob", "replicatedjob", jsName, labels[jsName])
			}
			return gangPlace{component: "replicatedjob", instance: rj, definition: "replicatedjob", key: [2]string{js, rj}}, ""
		}
		present = append(present, id)
	}
	return gangPlace{}, fmt.Sprintf("instance %q not found among [%s]", rj, strings.Join(present, " "))
}

func (s *jobsetSpec) minMember(p *gangPlace) int64 {
	return max(1, s.pods[slices.Index(s.ids, p.instance)])
}

// lwsGrouper: a leader (worker-index 0) and its workers (which carry the
// leader-name annotation) form one group per group-index.
type lwsGrouper struct{}

type lwsSpec struct {
	leader, worker bool
	min            int64
}

const (
	lwsName       = "leaderworkerset.sigs.k8s.io/name"
	lwsGroupIndex = "leaderworkerset.sigs.k8s.io/group-index"
	lwsWorkerIdx  = "leaderworkerset.sigs.k8s.io/worker-index"
	lwsLeaderName = "leaderworkerset.sigs.k8s.io/leader-name"
)

func (lwsGrouper) read(obj map[string]any) gangSpec {
	lwt := get(obj, "spec", "leaderWorkerTemplate")
	s := &lwsSpec{worker: get(lwt, "workerTemplate") != nil}
	s.leader = s.worker || get(lwt, "leaderTemplate") != nil
	// A group is the leader and size-1 workers.
	if s.leader {
		s.min++
	}
	if s.worker {
		s.min += max(0, orDefault(get(lwt, "size"), 1)-1)
	}
	// With startupPolicy LeaderReady the controller creates a group's
	// workers only once its leader is Ready: the gang is the leader alone.
	if get(obj, "spec", "startupPolicy") == "LeaderReady" {
		s.min = 1
	}
	s.min = max(1, s.min)
	return s
}

func (s *lwsSpec) place(labels, annotations map[string]any) (gangPlace, string) {
	if !s.leader && !s.worker {
		return gangPlace{}, "no pod-bearing component has a present instance"
	}
	isLeader := s.leader && labels[lwsWorkerIdx] == "0"
	isWorker := s.worker && annotations[lwsLeaderName] != nil
	comp := "leader"
	switch {
	case isLeader && isWorker:
		return gangPlace{}, "ambiguous: matches leader, worker"
	case isWorker:
		comp = "worker"
	case !isLeader:
		return gangPlace{}, "no component selector matches"
	}
	group, ok := label(labels, lwsGroupIndex)
	if !ok || group == "" {
		what := "null"
		if ok {
			what = `string ""`
		}
		return gangPlace{}, fmt.Sprintf("component %q: replicaSelector yields %s, want a non-empty string or a number", "group", what)
	}
	name, ok := label(labels, lwsName)
	if !ok || name == "" {
		return gangPlace{}, keyReason("group", "group", lwsName, labels[lwsName])
	}
	return gangPlace{component: comp, replica: group, definition: "group", key: [2]string{name, group}}, ""
}

func (s *lwsSpec) minMember(*gangPlace) int64 { return s.min }
