// Package gangoutput keeps a gang scheduler's objects in step with the
// workloads a Karta describes, in a live cluster, and links each new pod
// to its group with a mutating admission webhook.
//
// The Controller watches, with informers, every workload kind the
// registry holds a Program with gang instructions for (the built-ins and
// the cluster's Kartas, as the Karta controller keeps the registry), their
// pods, the owners between the two (ReplicaSets, Jobs, StatefulSets and
// the child kinds the Kartas name, metadata only) and the target's
// objects, on the informers of the process when Options.Informers shares
// them (internal/kindwatch: one per resource with the metrics exporter
// and the references cache). For each workload it runs podgroups.ForProgram on the object
// and its pods and applies the result server-side (field manager
// FieldManager): the objects carry a controller reference to the
// workload, so they are deleted with it, and objects of groups that no
// longer exist are deleted. A workload is reconciled when it, its pods or
// its Karta change.
//
// Timing: a Karta's v2 group, and the Workload API's Workload, exist
// without pods, so they are written as soon as the workload is seen,
// before its operator creates pods. An alpha group is formed from its
// pods' keys, so its object is written when its first pod appears; the
// webhook has linked that pod already, and each scheduler waits for a
// pod's group object before it schedules the pod.
//
// A workload is left alone (and what was written for it deleted) when its
// kind is on the skip list (its operator writes the objects itself;
// DefaultSkip) unless a SwitchAnnotation on its Karta or on it says
// otherwise, when it belongs to another workload a Karta describes (the
// topmost one decides), and when its pods are linked to an object of the
// target's kind that karta did not write. Kubernetes' own kinds are not
// workloads here unless their Karta switches them on (KubernetesKinds).
//
// The Webhook answers admission reviews of pod creation: it resolves the
// pod's owner chain from the informers' caches to its workload, places the
// pod with Program.PlacePod and answers podgroups.LinkPod's JSON Patch (or,
// when the link names the pod's leaf subgroup, podgroups.NeedsGroups, runs
// GetGangGroups with the pod and answers podgroups.LinkInGroups'). It
// fails open: any pod it cannot link is admitted unchanged, and a metric
// counts why.
//
// With leader election only the leader writes (SetLeading); every replica
// keeps its caches and answers the webhook. See docs/controller.md.
package gangoutput
