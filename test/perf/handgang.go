package perf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
)

// GangGo is baseline (b) of GetGangGroups: a hand-written pod grouper per
// kind for the built-in PyTorchJob, JobSet and LeaderWorkerSet Kartas, in
// the manner of KAI-Scheduler's pod-grouper plugins
// (pkg/podgrouper/podgrouper/plugins/kubeflow/pytorch, .../leaderworkerset):
// a pod's replica type and group are read from the labels its operator
// sets, the group's subgroups and minimums from the workload's spec
// (PyTorchJob: master and worker subgroups of their replicas, with
// elasticPolicy.minReplicas for workers, runPolicy.schedulingPolicy
// .minAvailable taken from the workers first; JobSet: a subgroup per
// replicated job of replicas × min(parallelism, completions), under
// InOrder the first one alone; LWS: one group per group index, leader 1
// and workers size-1, under LeaderReady the leader alone). KAI groups one
// pod per call against its top owner; GetGangGroups groups a workload's
// pods at once, so the grouper reads the spec once and makes one pass over
// the pods. The JobSet grouper follows KAI's JobSet plugin, a subgroup
// per replicated job and a leaf per Job, with JobSet's pod labels. Its results are
// karta's (asserted by the benchmarks and TestBaselinesAgreeWithKarta):
// the reasons of the unmatched pods the examples hold are karta's words.
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
	// and subgroup, or the reason it is unmatched.
	place(labels, annotations map[string]any) (p gangPlace, reason string)
	// group is the group of a placement without its pods: its minimum and
	// its subgroups with theirs.
	group(p *gangPlace) interpreter.Group
	// perObject says the one group exists whatever the pods.
	perObject() bool
}

type gangPlace struct {
	component, instance, replica string
	// key is the group's name after pg-<uid>-<definition> ("" for one
	// group per object); sub the pod's subgroup.
	key, sub string
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
	byKey := map[string]int{}
	join := func(p *gangPlace) int {
		i, ok := byKey[p.key]
		if !ok {
			grp := spec.group(p)
			grp.Name = "pg-" + uid + "-" + grp.Definition
			if p.key != "" {
				grp.Name += "-" + p.key
			}
			i = len(res.Groups)
			byKey[p.key] = i
			res.Groups = append(res.Groups, grp)
		}
		return i
	}
	if spec.perObject() {
		join(&gangPlace{})
	}
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
		grp := &res.Groups[join(&p)]
		grp.Pods = append(grp.Pods, name)
		for j := range grp.SubGroups {
			if grp.SubGroups[j].Name == p.sub {
				grp.SubGroups[j].Pods = append(grp.SubGroups[j].Pods, name)
			}
		}
		res.Placements = append(res.Placements, interpreter.Placement{Pod: name, Component: p.component,
			Instance: p.instance, Replica: p.replica, Group: grp.Name})
	}
	for i := range res.Groups {
		slices.Sort(res.Groups[i].Pods)
		for j := range res.Groups[i].SubGroups {
			slices.Sort(res.Groups[i].SubGroups[j].Pods)
		}
	}
	slices.SortFunc(res.Groups, func(a, b interpreter.Group) int { return strings.Compare(a.Name, b.Name) })
	return res, nil
}

// subGroup is one subgroup of a group being built; parent is the index of
// the subgroup it is a leaf of, -1 at the top.
type subGroup struct {
	name   string
	min    int64
	parent int
}

// top is a top-level subgroup.
func top(name string, min int64) subGroup { return subGroup{name, min, -1} }

// v2Group is a group of definition def with subgroups subs, a leaf after
// its parent: its minimum is the top-level ones' sum, unless stated (> 0),
// when a stated minimum below the sum is taken from the last subgroups
// first, each giving up its own pods (a parent's are those its leaves do
// not hold), its parent the same.
func v2Group(def string, stated int64, subs ...subGroup) interpreter.Group {
	var total, tops int64
	own := make([]int64, len(subs))
	for i, s := range subs {
		own[i] += s.min
		if s.parent < 0 {
			total += s.min
			tops++
		} else {
			own[s.parent] -= s.min
		}
	}
	if stated > 0 {
		deficit := total - stated
		for i := len(subs) - 1; i >= 0 && deficit > 0; i-- {
			take := min(deficit, own[i])
			for j := i; j >= 0; j = subs[j].parent {
				subs[j].min -= take
			}
			deficit -= take
		}
		total = stated
	}
	total = max(1, total)
	grp := interpreter.Group{Definition: def, MinMember: total, Pods: []string{}, SubGroups: make([]interpreter.SubGroup, len(subs))}
	for i, s := range subs {
		grp.SubGroups[i] = interpreter.SubGroup{Name: s.name, MinMember: s.min, Pods: []string{}}
		if s.parent >= 0 {
			grp.SubGroups[i].Parent = subs[s.parent].name
		}
	}
	grp.MinSubGroups = &tops
	return grp
}

// label is a label's value, "" when it is missing or not a string.
func label(labels map[string]any, key string) (string, bool) {
	s, ok := labels[key].(string)
	return s, ok
}

// pytorchGrouper: master and worker pods by training.kubeflow.org/
// replica-type, one group per job with a subgroup per replica type.
type pytorchGrouper struct{}

type pytorchSpec struct {
	master, worker bool
	// masters and workers are the subgroups' minimums (elasticPolicy
	// .minReplicas for workers), stated the minAvailable, 0 without.
	masters, workers, stated int64
}

const (
	ptReplicaType = "training.kubeflow.org/replica-type"
	ptJobName     = "training.kubeflow.org/job-name"
)

func (pytorchGrouper) read(obj map[string]any) gangSpec {
	specs := get(obj, "spec", "pytorchReplicaSpecs")
	s := &pytorchSpec{master: get(specs, "Master", "template") != nil, worker: get(specs, "Worker", "template") != nil}
	if n, ok := num(get(obj, "spec", "runPolicy", "schedulingPolicy", "minAvailable")); ok && n > 0 {
		s.stated = n
	}
	if s.master {
		s.masters = eff(orDefault(get(specs, "Master", "replicas"), 1), nil)
	}
	if s.worker {
		s.workers = eff(orDefault(get(specs, "Worker", "replicas"), 1), optional(get(obj, "spec", "elasticPolicy", "minReplicas")))
	}
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
	return gangPlace{component: rt, sub: rt}, ""
}

func (s *pytorchSpec) group(*gangPlace) interpreter.Group {
	var subs []subGroup
	if s.master {
		subs = append(subs, top("master", s.masters))
	}
	if s.worker {
		subs = append(subs, top("worker", s.workers))
	}
	return v2Group("job", s.stated, subs...)
}

func (s *pytorchSpec) perObject() bool { return true }

// jobsetGrouper: a pod of a JobSet carries its jobset-name,
// replicatedjob-name and job-index; one group per JobSet with a subgroup
// per replicated job, of replicas × min(parallelism, completions) pods,
// and a leaf per replica (Job) of min(parallelism, completions), as KAI's
// hierarchical JobSet grouper splits it.
type jobsetGrouper struct{}

type jobsetSpec struct {
	// ids are the replicated jobs' names, present whether they have a pod
	// template; pods their pod count, reps their replicas. stated is the
	// first one's count (at least 1) under InOrder, else 0.
	ids     []string
	present []bool
	pods    []int64
	reps    []int64
	stated  int64
}

const (
	jsName     = "jobset.sigs.k8s.io/jobset-name"
	jsRJName   = "jobset.sigs.k8s.io/replicatedjob-name"
	jsJobIndex = "jobset.sigs.k8s.io/job-index"
)

func (jobsetGrouper) read(obj map[string]any) gangSpec {
	s := &jobsetSpec{}
	rjs, _ := get(obj, "spec", "replicatedJobs").([]any)
	for _, rj := range rjs {
		s.ids = append(s.ids, str(rj, "name"))
		s.present = append(s.present, get(rj, "template", "spec", "template") != nil)
		s.pods = append(s.pods, max(0, orDefault(get(rj, "replicas"), 1)*jobPods(rj)))
		s.reps = append(s.reps, max(0, orDefault(get(rj, "replicas"), 1)))
	}
	if get(obj, "spec", "startupPolicy", "startupPolicyOrder") == "InOrder" && len(rjs) > 0 {
		s.stated = max(1, orDefault(get(rjs[0], "replicas"), 1)*jobPods(rjs[0]))
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
			sub := "replicatedjob-" + rj
			if s.reps[i] > 0 {
				idx, ok := label(labels, jsJobIndex)
				if !ok || idx == "" {
					return gangPlace{}, "subgroup replicatedjob: perReplica.keyPath yields null, want a non-empty string or a number"
				}
				if k, err := strconv.ParseInt(idx, 10, 64); err != nil || k < 0 || k >= s.reps[i] || strconv.FormatInt(k, 10) != idx {
					return gangPlace{}, fmt.Sprintf("replica %q not found among the %d replicas of subgroup replicatedjob", idx, s.reps[i])
				}
				sub += "-replica-" + idx
			}
			return gangPlace{component: "replicatedjob", instance: rj, sub: sub}, ""
		}
		present = append(present, id)
	}
	return gangPlace{}, fmt.Sprintf("instance %q not found among [%s]", rj, strings.Join(present, " "))
}

func (s *jobsetSpec) group(*gangPlace) interpreter.Group {
	var subs []subGroup
	for i, id := range s.ids {
		if s.present[i] {
			p := len(subs)
			subs = append(subs, top("replicatedjob-"+id, s.pods[i]))
			for r := range s.reps[i] {
				// An equal share, the first ones one more while a
				// remainder lasts.
				share := s.pods[i] / s.reps[i]
				if r < s.pods[i]%s.reps[i] {
					share++
				}
				subs = append(subs, subGroup{"replicatedjob-" + id + "-replica-" + strconv.FormatInt(r, 10), share, p})
			}
		}
	}
	return v2Group("jobset", s.stated, subs...)
}

func (s *jobsetSpec) perObject() bool { return true }

// lwsGrouper: a leader (worker-index 0) and its workers (which carry the
// leader-name annotation) form one group per group-index, with leader and
// worker subgroups.
type lwsGrouper struct{}

type lwsSpec struct {
	leader, worker bool
	// workers is the worker subgroup's minimum, size-1; stated 1 under
	// LeaderReady, else 0.
	workers, stated int64
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
	s.workers = max(0, orDefault(get(lwt, "size"), 1)-1)
	// With startupPolicy LeaderReady the controller creates a group's
	// workers only once its leader is Ready: the gang is the leader alone.
	if get(obj, "spec", "startupPolicy") == "LeaderReady" {
		s.stated = 1
	}
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
	return gangPlace{component: comp, replica: group, key: group, sub: comp}, ""
}

func (s *lwsSpec) group(*gangPlace) interpreter.Group {
	var subs []subGroup
	if s.leader {
		subs = append(subs, top("leader", 1))
	}
	if s.worker {
		subs = append(subs, top("worker", s.workers))
	}
	return v2Group("group", s.stated, subs...)
}

func (s *lwsSpec) perObject() bool { return false }
