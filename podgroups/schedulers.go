package podgroups

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/kartalua/karta/karta"
)

// The third-party PodGroups. Volcano's is typed (volcano.sh/apis, a small
// module of API types). KAI-Scheduler's and scheduler-plugins' are built
// unstructured: their API types live in modules that depend on
// k8s.io/kubernetes (github.com/kai-scheduler/api, sigs.k8s.io/scheduler-plugins),
// which cannot be a library's dependency. Their field names are those of
// the published types, cited at each builder, and the limits their CRDs
// state are checked here.

// KAI-Scheduler: github.com/kai-scheduler/api scheduling/v2alpha2
// podgroup_types.go. PodGroupSpec: minMember (*int32, minimum 1, exclusive
// with minSubGroup), queue, priorityClassName, topologyConstraint
// {topology, requiredTopologyLevel, preferredTopologyLevel}, subGroups
// [{name (DNS label), minMember (*int32, minimum 0), parent,
// topologyConstraint}]. Pods name their PodGroup in the pod-group-name
// annotation and their leaf subgroup in the kai.scheduler/subgroup-name
// label: KAI's scheduler (subgroup_info factory.go) makes a subgroup with
// children a set of subgroups and puts pods in leaves only, and its
// PodGroup webhook (podgroup_webhook.go validateSubGroups) refuses a
// duplicate name, a parent that is no subgroup, and a cycle. A parent's
// minMember counts its descendant pods, as a Karta's does. The group's
// minSubGroup is left unset: then every subgroup is required, which is
// what a Karta's v2 group says (minSubGroups is their number), and the
// PodGroup stays valid for KAI versions before minSubGroup. A subgroup
// that needs only some of its children (its minSubGroups, a Volcano
// task's minPartitions) has minSubGroup instead of its minMember.
var kaiGVK = metav1.GroupVersionKind{Group: "scheduling.run.ai", Version: "v2alpha2", Kind: "PodGroup"}

func (b *builder) kai() error {
	queue := b.queue(KAIQueueLabel)
	if queue == "" {
		b.warn("no queue: KAI-Scheduler schedules a PodGroup only in an existing leaf queue; label the workload %s=QUEUE or pass a queue", KAIQueueLabel)
	}
	// KAI's podgrouper reads the priority class from the workload's
	// priorityClassName label before the pods'.
	ownClass := b.in.Object.GetLabels()["priorityClassName"]
	for _, p := range b.plans() {
		n, err := count32("PodGroup", p.name, "spec.minMember", p.g.MinMember)
		if err != nil {
			return err
		}
		m := b.meta(p.name, p.g.Name)
		spec := map[string]any{"minMember": int64(n)}
		if queue != "" {
			spec["queue"] = queue
			m.Labels[KAIQueueLabel] = queue
		}
		if c := firstNonEmpty(ownClass, p.priority); c != "" {
			spec["priorityClassName"] = c
		}
		if t := kaiTopology(p.g.Topology); t != nil {
			spec["topologyConstraint"] = t
		}
		if len(p.subs) > 0 {
			subs := make([]any, 0, len(p.subs))
			for i, sp := range p.subs {
				sub := map[string]any{"name": sp.name}
				if !sp.leaf() && sp.sg.MinSubGroups != nil {
					// It needs only some of its children: KAI's
					// minSubGroup, exclusive with minMember, says so.
					sn, err := countFrom("PodGroup", p.name, fmt.Sprintf("spec.subGroups[%d].minSubGroup", i), sp.needed(), 0)
					if err != nil {
						return err
					}
					sub["minSubGroup"] = int64(sn)
					if x := beyond(p.subs, &p.subs[i]); x > 0 {
						b.warn("group %s: subgroup %s needs %d of its subgroups and %d pods in all, and KAI's minSubGroup is exclusive with minMember: the %d pods beyond those subgroups' are not kept", p.g.Name, sp.sg.Name, sp.needed(), sp.sg.MinMember, x)
					}
				} else {
					sn, err := countFrom("PodGroup", p.name, fmt.Sprintf("spec.subGroups[%d].minMember", i), sp.sg.MinMember, 0)
					if err != nil {
						return err
					}
					sub["minMember"] = int64(sn)
				}
				if sp.parent != "" {
					sub["parent"] = sp.parent
				}
				if !sp.leaf() && sp.own > 0 {
					b.warn("group %s: subgroup %s has %d pods of its own besides its subgroups': KAI places pods in leaf subgroups only, so they count in no subgroup's minimum", p.g.Name, sp.sg.Name, sp.own)
				}
				if t := kaiTopology(sp.sg.Topology); t != nil {
					sub["topologyConstraint"] = t
				}
				subs = append(subs, sub)
			}
			spec["subGroups"] = subs
		}
		if err := invalid("PodGroup", p.name, checkMeta(&m)); err != nil {
			return err
		}
		if err := b.addTyped(kaiGVK, m, spec); err != nil {
			return err
		}
	}
	return nil
}

func kaiTopology(t *karta.Topology) map[string]any {
	if t == nil {
		return nil
	}
	out := map[string]any{"topology": t.TopologyName}
	if t.RequiredTopologyLevel != "" {
		out["requiredTopologyLevel"] = t.RequiredTopologyLevel
	}
	if t.PreferredTopologyLevel != "" {
		out["preferredTopologyLevel"] = t.PreferredTopologyLevel
	}
	return out
}

// Volcano: volcano.sh/apis pkg/apis/scheduling/v1beta1 PodGroup. Pods
// name their PodGroup in the scheduling.k8s.io/group-name annotation and
// their task, the key of minTaskMember, in volcano.sh/task-spec (Volcano's
// scheduler reads both: getJobID and getTaskID of its api package).
func (b *builder) volcano() error {
	queue := b.queue(VolcanoQueueAnnotation, "volcano.sh/queue-name")
	for _, p := range b.plans() {
		n, err := count32("PodGroup", p.name, "spec.minMember", p.g.MinMember)
		if err != nil {
			return err
		}
		pg := &volcanov1beta1.PodGroup{
			TypeMeta:   metav1.TypeMeta{APIVersion: volcanov1beta1.SchemeGroupVersion.String(), Kind: "PodGroup"},
			ObjectMeta: b.meta(p.name, p.g.Name),
			Spec:       volcanov1beta1.PodGroupSpec{MinMember: n, Queue: queue, PriorityClassName: p.priority},
		}
		tasks := map[string]int32{}
		if len(p.subs) > 0 {
			// A subgroup whose children are leaves of one size is a
			// subGroupPolicy (volcano.go); every other subgroup with pods of
			// its own (a leaf no policy covers, a parent's own pods) is a
			// task with its minimum.
			vp := volcanoPlan{policyOf: map[int]string{}}
			if b.opts.VolcanoSubGroupPolicy {
				vp = planVolcano(p.subs)
			}
			policies, err := vp.subGroupPolicies(p.name, p.subs)
			if err != nil {
				return err
			}
			pg.Spec.SubGroupPolicy = policies
			for j, sp := range p.subs {
				if parent, ok := vp.policyOf[j]; ok {
					for _, pod := range sp.sg.Pods {
						b.parentOf[pod] = parent
					}
					continue
				}
				n := sp.sg.MinMember
				if !sp.leaf() {
					n = sp.own
				}
				if optional(p.subs, j) {
					// A child its parent does not need (past its
					// minSubGroups) is no required task.
					n = 0
				}
				if n == 0 {
					continue
				}
				tn, err := count32("PodGroup", p.name, fmt.Sprintf("spec.minTaskMember[%s]", sp.name), n)
				if err != nil {
					return err
				}
				tasks[sp.name] = tn
			}
			if b.opts.VolcanoSubGroupPolicy {
				b.volcanoUnfit(p, vp)
			} else {
				b.volcanoFlattened(p)
			}
		} else {
			for _, r := range p.roles {
				tn, err := count32("PodGroup", p.name, fmt.Sprintf("spec.minTaskMember[%s]", r.name), r.min)
				if err != nil {
					return err
				}
				tasks[r.name] = tn
			}
		}
		if len(tasks) > 0 {
			pg.Spec.MinTaskMember = tasks
			var sum int64
			for _, tn := range tasks {
				sum += int64(tn)
			}
			if sum > int64(n) {
				b.warn("group %s: its tasks' minimums add up to %d, more than its minMember %d, and then Volcano's scheduler checks no task's minimum (job_info.go CheckTaskReady)", p.g.Name, sum, n)
			}
		}
		if rl := minResources(p.shares); rl != nil {
			pg.Spec.MinResources = &rl
		} else {
			b.noMinResources(p)
		}
		if p.g.Topology != nil {
			b.warn("group %s: Volcano's PodGroup names no topology by a Karta's levels (its networkTopology counts HyperNode tiers): the topology is left out", p.g.Name)
		}
		if err := invalid("PodGroup", p.name, checkMeta(&pg.ObjectMeta)); err != nil {
			return err
		}
		if err := b.add(pg); err != nil {
			return err
		}
	}
	return nil
}

// scheduler-plugins coscheduling: sigs.k8s.io/scheduler-plugins
// apis/scheduling/v1alpha1 types.go. PodGroupSpec: minMember (int32),
// minResources (ResourceList), scheduleTimeoutSeconds. Pods name their
// PodGroup in the scheduling.x-k8s.io/pod-group label (PodGroupLabel), so
// the name is also a label value: at most 63 characters (ObjectName).
var coschedulingGVK = metav1.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}

func (b *builder) coscheduling() error {
	for _, p := range b.plans() {
		n, err := count32("PodGroup", p.name, "spec.minMember", p.g.MinMember)
		if err != nil {
			return err
		}
		m := b.meta(p.name, p.g.Name)
		spec := map[string]any{"minMember": int64(n)}
		if rl := minResources(p.shares); rl != nil {
			spec["minResources"] = resourceMap(rl)
		} else {
			b.noMinResources(p)
		}
		if len(p.subs) > 0 {
			b.warn("group %s: a coscheduling PodGroup has no subgroups: its minMember %d is the whole group's, and its subgroups' own minimums (%s) are not kept", p.g.Name, p.g.MinMember, subMinimums(p))
		}
		if p.g.Topology != nil {
			b.warn("group %s: a coscheduling PodGroup has no topology: it is left out", p.g.Name)
		}
		if err := invalid("PodGroup", p.name, checkMeta(&m)); err != nil {
			return err
		}
		if err := b.addTyped(coschedulingGVK, m, spec); err != nil {
			return err
		}
	}
	return nil
}

// addTyped adds an object of gvk with metadata m and spec.
func (b *builder) addTyped(gvk metav1.GroupVersionKind, m metav1.ObjectMeta, spec map[string]any) error {
	meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m)
	if err != nil {
		return err
	}
	b.addMap(map[string]any{
		"apiVersion": metav1.GroupVersion{Group: gvk.Group, Version: gvk.Version}.String(),
		"kind":       gvk.Kind,
		"metadata":   meta,
		"spec":       spec,
	})
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
