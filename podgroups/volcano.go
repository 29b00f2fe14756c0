package podgroups

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/kartalua/karta/interpreter"
)

// Volcano's subgroups (volcano.sh/apis v1.14.0 PodGroupSpec.subGroupPolicy),
// as Volcano's scheduler v1.14.0 reads them (pkg/scheduler/api job_info.go
// getOrCreateSubJob and sub_job_info.go getSubJobMatchValues; the gang
// plugin's JobValid and JobReady):
//
//   - a pod joins the first policy whose labelSelector matches its labels
//     and for which it carries every matchLabelKeys label; the values of
//     those labels name its subgroup. A pod no policy takes is in the job's
//     default subgroup, which no policy counts;
//   - every subgroup of a policy needs subGroupSize ready pods, and the job
//     needs minSubGroups such subgroups of the policy (CheckSubJobReady),
//     besides minMember pods in all and each task's minTaskMember;
//   - policies do not nest: a pod is in one subgroup.
//
// So, under Options.VolcanoSubGroupPolicy, a Karta subgroup whose
// children are leaves of one size is a policy exactly: named after the parent, selecting its leaves' pods by
// VolcanoParentLabel, one Volcano subgroup per leaf by the pod's
// volcano.sh/task-spec label (its leaf, as the annotation says), the leaf
// size as subGroupSize, and the leaves the parent needs as minSubGroups
// (all of them when its minimum is their sum, the usual case; as many as
// its minimum takes, as a CompositePodGroup needs, when that is a whole
// number of leaves). The leaves of a policy get no minTaskMember: the
// policy says it (and Volcano's CRD advises against both at once).
// Volcano's own job controller writes a Volcano Job's partitionPolicy the
// same way, selecting by the task's volcano.sh/task-spec label and
// grouping by volcano.sh/partition-id (job_controller_actions.go
// getSubGroupPolicy).

// VolcanoParentLabel is the pod label naming the parent subgroup of the
// pod's leaf, set on the pods whose leaf is in a Volcano subGroupPolicy:
// the policy's labelSelector.
const VolcanoParentLabel = "karta.run.ai/parent-subgroup"

// volcanoPolicy is one subGroupPolicy: the leaves of a parent subgroup.
type volcanoPolicy struct {
	// parent is the parent subgroup's index in the group's subPlans.
	parent int
	// size is every leaf's minimum; need is how many leaves the parent
	// needs.
	size, need int64
}

// volcanoPlan is how a group's subgroups are written for Volcano.
type volcanoPlan struct {
	policies []volcanoPolicy
	// policyOf maps a leaf's index in the subPlans to its policy's parent
	// (its DNS label name), for the leaves a policy covers.
	policyOf map[int]string
	// unfit are the parents written as tasks, with the reason.
	unfit []unfitParent
}

type unfitParent struct {
	parent int
	reason string
}

// planVolcano decides, for each subgroup with children, whether its
// children are a subGroupPolicy (see above), or why not.
func planVolcano(subs []subPlan) volcanoPlan {
	vp := volcanoPlan{policyOf: map[int]string{}}
	for j := range subs {
		sp := &subs[j]
		if sp.leaf() {
			continue
		}
		pol, reason := volcanoPolicyOf(subs, j)
		if reason != "" {
			vp.unfit = append(vp.unfit, unfitParent{j, reason})
			continue
		}
		vp.policies = append(vp.policies, pol)
		for _, c := range sp.children {
			vp.policyOf[c] = sp.name
		}
	}
	return vp
}

// volcanoPolicyOf is the policy of subs[j]'s children, or why they are
// none.
func volcanoPolicyOf(subs []subPlan, j int) (volcanoPolicy, string) {
	sp := &subs[j]
	var mins []int64
	var sum int64
	sameSize := true
	for _, c := range sp.children {
		ch := &subs[c]
		if !ch.leaf() {
			return volcanoPolicy{}, fmt.Sprintf("its subgroup %s has subgroups of its own, and Volcano's subgroups do not nest", ch.sg.Name)
		}
		if len(mins) > 0 && ch.sg.MinMember != mins[0] {
			sameSize = false
		}
		mins = append(mins, ch.sg.MinMember)
		sum += ch.sg.MinMember
	}
	if !sameSize {
		return volcanoPolicy{}, fmt.Sprintf("its subgroups' minimums differ (%s), and a policy's subgroups are of one size", joinInts(mins))
	}
	size := mins[0]
	if size < 1 {
		return volcanoPolicy{}, "its subgroups' minimum is 0, and a policy's subGroupSize is at least 1"
	}
	need := int64(len(mins))
	if sp.sg.MinSubGroups != nil {
		// The parent says how many of its leaves it needs (a Volcano
		// task's minPartitions): the policy's minSubGroups, 0 included.
		need = sp.needed()
	} else if sp.sg.MinMember < sum {
		// The parent needs fewer pods than its leaves hold: as many
		// whole leaves as its minimum takes, when it takes whole leaves.
		if sp.sg.MinMember%size != 0 {
			return volcanoPolicy{}, fmt.Sprintf("its minimum %d is no whole number of its subgroups of %d", sp.sg.MinMember, size)
		}
		need = sp.sg.MinMember / size
	}
	return volcanoPolicy{parent: j, size: size, need: need}, ""
}

// subGroupPolicies are the plan's policies as Volcano's API writes them.
func (vp *volcanoPlan) subGroupPolicies(pgName string, subs []subPlan) ([]volcanov1beta1.SubGroupPolicySpec, error) {
	var out []volcanov1beta1.SubGroupPolicySpec
	for i, pol := range vp.policies {
		size, err := count32("PodGroup", pgName, fmt.Sprintf("spec.subGroupPolicy[%d].subGroupSize", i), pol.size)
		if err != nil {
			return nil, err
		}
		need, err := countFrom("PodGroup", pgName, fmt.Sprintf("spec.subGroupPolicy[%d].minSubGroups", i), pol.need, 0)
		if err != nil {
			return nil, err
		}
		name := subs[pol.parent].name
		out = append(out, volcanov1beta1.SubGroupPolicySpec{
			Name:           name,
			SubGroupSize:   &size,
			MinSubGroups:   &need,
			LabelSelector:  &metav1.LabelSelector{MatchLabels: map[string]string{VolcanoParentLabel: name}},
			MatchLabelKeys: []string{VolcanoTaskAnnotation},
		})
	}
	return out, nil
}

// volcanoParentOf is the parent named by VolcanoParentLabel on pod, a pod
// of g, under Options.VolcanoSubGroupPolicy: its leaf's parent when a
// policy covers the leaf, "" otherwise.
func volcanoParentOf(g *interpreter.Group, pod string) string {
	subs, _ := subTree(g)
	vp := planVolcano(subs)
	leaf := -1
	for j := range subs {
		for _, p := range subs[j].sg.Pods {
			if p == pod {
				leaf = j // the deepest: parents come before their children
			}
		}
	}
	return vp.policyOf[leaf]
}

func joinInts(ns []int64) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// volcanoUnfit warns of what Volcano cannot say of p's tree: each parent
// whose children are no policy (they are tasks, all required, so a parent
// that needs fewer of them loses its minimum), and a group that needs
// fewer top subgroups than it has (no policy spans subgroups of different
// kinds).
func (b *builder) volcanoUnfit(p *plan, vp volcanoPlan) {
	for _, u := range vp.unfit {
		sp := &p.subs[u.parent]
		var sum int64
		for _, c := range sp.children {
			sum += p.subs[c].sg.MinMember
		}
		kept := "its leaves are tasks, each with its minTaskMember"
		if !allLeaves(p.subs, sp) {
			kept = "its children keep their own policies and tasks"
		}
		switch {
		case sp.sg.MinSubGroups != nil:
			kept += fmt.Sprintf(", the first %d of its %d required and the rest optional, where it needs any %d of them", sp.needed(), len(sp.children), sp.needed())
		case sp.sg.MinMember < sum:
			kept += fmt.Sprintf(", all of them required, so its minimum %d (of their %d) is not kept", sp.sg.MinMember, sum)
		}
		b.warn("group %s: subgroup %s is no Volcano subGroupPolicy (%s): %s", p.g.Name, sp.sg.Name, u.reason, kept)
	}
	for _, pol := range vp.policies {
		sp := &p.subs[pol.parent]
		if x := beyond(p.subs, sp); x > 0 {
			b.warn("group %s: subgroup %s needs %d of its subgroups and %d pods in all, and its subGroupPolicy counts subgroups only: the %d pods beyond them are not kept", p.g.Name, sp.sg.Name, pol.need, sp.sg.MinMember, x)
		}
	}
	tops := 0
	for _, sp := range p.subs {
		if sp.parent == "" {
			tops++
		}
	}
	if ms := p.g.MinSubGroups; ms != nil && *ms > 0 && *ms < int64(tops) {
		b.warn("group %s: it needs %d of its %d top subgroups, which Volcano cannot say (a policy's subgroups are leaves of one parent): each top subgroup keeps its own minimum", p.g.Name, *ms, tops)
	}
}

// volcanoFlattened warns, without Options.VolcanoSubGroupPolicy, that p's
// nested subgroups are flattened to tasks.
func (b *builder) volcanoFlattened(p *plan) {
	var nested []string
	for _, sp := range p.subs {
		if sp.parent != "" {
			nested = append(nested, sp.sg.Name+" in "+sp.sg.Parent)
		}
	}
	for _, sp := range p.subs {
		if sp.sg.MinSubGroups != nil && !sp.leaf() {
			b.warn("group %s: subgroup %s needs %d of its %d subgroups, which Volcano's tasks cannot say: the first %d are tasks of their minimums and the rest optional (--volcano-subgroup-policy says it as a subGroupPolicy's minSubGroups)", p.g.Name, sp.sg.Name, sp.needed(), len(sp.children), sp.needed())
		}
	}
	if len(nested) > 0 {
		b.warn("group %s: Volcano's tasks are flat: the nested subgroups (%s) are flattened to a minTaskMember per leaf subgroup, and a parent's minimum is kept only as the sum of its leaves' (the VolcanoSubGroupPolicy option, podgroups --volcano-subgroup-policy, writes them as subGroupPolicy for Volcano v1.14.1 and later)", p.g.Name, strings.Join(nested, ", "))
	}
}

func allLeaves(subs []subPlan, sp *subPlan) bool {
	for _, c := range sp.children {
		if !subs[c].leaf() {
			return false
		}
	}
	return true
}
