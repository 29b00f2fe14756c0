// Package podgroups turns a workload's gangs (interpreter.Program's
// GetGangGroups) into the objects a gang scheduler acts on, and each pod's
// link to its group:
//
//   - workload-api: Kubernetes' own gang scheduling (KEP-4671,
//     scheduling.k8s.io/v1beta1): one Workload per workload object, with a
//     PodGroupTemplate per gang definition of its Karta, and one PodGroup
//     per group; with Options.CompositePodGroup a group with subgroups is
//     a tree of CompositePodGroups (v1alpha3) with a PodGroup per leaf
//     subgroup; a pod links to its PodGroup by spec.schedulingGroup.
//   - kai: KAI-Scheduler's PodGroup (scheduling.run.ai/v2alpha2) with its
//     (nested) subgroups and topology constraints; a pod links by the
//     pod-group-name annotation (and its leaf subgroup's
//     kai.scheduler/subgroup-name label).
//   - volcano: Volcano's PodGroup (scheduling.volcano.sh/v1beta1) with
//     minTaskMember (per leaf subgroup) and minResources; a pod links by the
//     scheduling.k8s.io/group-name annotation (and volcano.sh/task-spec).
//   - coscheduling: scheduler-plugins' PodGroup
//     (scheduling.x-k8s.io/v1alpha1) with minResources; a pod links by the
//     scheduling.x-k8s.io/pod-group label.
//
// Build is a pure function of its Input (the object, the Karta, the
// GangResult, the pod specs and, optionally, the pods): a controller can
// call it on every change and compare, and an admission webhook can build
// one pod's link from a GangResult it made for that pod. ForProgram runs
// the hooks and calls Build. What each field means, and when to use which
// target: docs/podgroups.md.
package podgroups
