// Package workload builds the tree of one workload object as its Karta
// sees it: the object with its generic status and conditions, its
// components, their instances, the replicas and pods in them, the gang
// groups of the pods, and the pods that belong nowhere with the reason.
// It is what karta describe prints (docs/describe.md).
//
// The tree has one node shape, Node: a kind (Workload, Component, Instance,
// Replica, Pod, Group), a name, the fields of that kind, and the children.
//
//	Workload                   the object: status, conditions
//	├── Component              the root component
//	│   ├── Instance           a present instance of a pod-bearing component
//	│   │   ├── Replica        pods sharing a replica key (replicaSelector)
//	│   │   │   └── Pod
//	│   │   └── Pod            pods without a replica key
//	│   └── Component          each child component, under its ownerRef
//	├── Reference              a reference of the Karta: what it looked up
//	│   └── Object             the object(s) it bound (none: absent)
//	├── Group                  a gang group of the pods
//	│   └── Group              its subgroups (the v2 podGroup)
//	└── Pod                    a pod the Karta does not place, with the reason
//
// Everything comes from the Program's hooks: InterpretStatus, GetPodSpecs,
// Karmada's GetComponents for workload-wide replica counts, and for the
// pods GetGangGroups when the Karta has gang instructions (or overrides
// GetGangGroups), and PlacePods for the pods outside the gang. A Node marshals to JSON and YAML with
// the field names below; they are stable.
package workload

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// Kind is the kind of a node.
type Kind string

// The kinds of nodes, from the root of the tree down.
const (
	// KindWorkload is the root: the object itself. Its name is the
	// object's name.
	KindWorkload Kind = "Workload"
	// KindComponent is a component of the Karta, named as the Karta names
	// it. The Workload has one, the root component; each child component
	// sits under the component its ownerRef names, in Karta order.
	KindComponent Kind = "Component"
	// KindInstance is a present instance of a pod-bearing component (an
	// item of GetPodSpecs), named by its id: "" for a component without
	// instanceIdPath.
	KindInstance Kind = "Instance"
	// KindReplica gathers an instance's pods that share a replica key
	// (the replicaSelector of the pod's component or of its nearest
	// ancestor that has one), named by the key.
	KindReplica Kind = "Replica"
	// KindPod is a pod, named by its name: under its instance or replica
	// when the Karta places it, under the Workload with Fields.Reason when
	// it does not.
	KindPod Kind = "Pod"
	// KindGroup is a gang group of the pods (GetGangGroups), under the
	// Workload; a v2 group's subgroups are Groups under it.
	KindGroup Kind = "Group"
	// KindReference is one of the Karta's references (docs/karta.md,
	// "References"), under the Workload, named by the reference: the
	// referenced kind, where it was looked up, and why it is absent or
	// cut (Reason); the objects it bound are Objects under it.
	KindReference Kind = "Reference"
	// KindObject is an object a Reference bound, named by its name.
	KindObject Kind = "Object"
)

// Node is one node of the tree. Children is never nil; Fields holds the
// fields of the node's kind, the others are zero and left out of JSON.
type Node struct {
	Kind     Kind    `json:"kind"`
	Name     string  `json:"name"`
	Fields   Fields  `json:"fields"`
	Children []*Node `json:"children"`
}

// Fields are the fields of a node; which ones a node has depends on its
// kind, as each field says. Counts are pointers: nil is unknown (no pods
// were given, no replicas path), and absent from JSON.
type Fields struct {
	// Namespace is the namespace of a Workload or a Pod.
	Namespace string `json:"namespace,omitempty"`
	// APIVersion and Kind are a Workload's.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// Karta is the name of the Karta that interprets the Workload.
	Karta string `json:"karta,omitempty"`
	// Status is a Workload's generic status (InterpretStatus): Running,
	// Failed, …, or Undefined; Matched every status that holds, in
	// precedence order.
	Status  string   `json:"status,omitempty"`
	Matched []string `json:"matched,omitempty"`
	// Message is an Argo CD health script's message for a Workload.
	Message string `json:"message,omitempty"`
	// Phase is a Workload's phase (the Karta's phaseDefinition) or a Pod's
	// status.phase; "" when there is none.
	Phase string `json:"phase,omitempty"`
	// Conditions are a Workload's, as the Karta reads them.
	Conditions []interpreter.Condition `json:"conditions,omitempty"`

	// Style is how an Instance's pods are defined: podTemplateSpec,
	// podSpec or fragmented.
	Style string `json:"style,omitempty"`
	// Replicas, MinReplicas and MaxReplicas are an Instance's own counts
	// (GetPodSpecs' scale).
	Replicas    *int64 `json:"replicas,omitempty"`
	MinReplicas *int64 `json:"minReplicas,omitempty"`
	MaxReplicas *int64 `json:"maxReplicas,omitempty"`
	// Expected is the number of pods an Instance should have across the
	// workload (its replicas times those of its scaled ancestors: a
	// LeaderWorkerSet's leader counts once per group), or a Replica (the
	// instance's replicas when the key is an ancestor's, 1 when it is the
	// component's own).
	Expected *int64 `json:"expected,omitempty"`
	// Existing is the number of pods placed in an Instance or a Replica;
	// nil when no pods were given.
	Existing *int64 `json:"existing,omitempty"`
	// Images are an Instance's images (its pod definition's containers,
	// or the fragments' image, container and containers) or a Pod's
	// (spec.containers), in order, without repeats.
	Images []string `json:"images,omitempty"`

	// Group is the gang group of a placed Pod, and MinMember that
	// group's; MinMember is also a Group's.
	Group     string `json:"group,omitempty"`
	MinMember *int64 `json:"minMember,omitempty"`
	// Reason is why a Pod is not placed, or why a Reference is absent
	// or cut.
	Reason string `json:"reason,omitempty"`
	// Shape is a Reference's (lookup or list); Target the name its lookup
	// looked up, or its list's label selector. Namespace and APIVersion
	// and Kind are where and what it looked up, and an Object's.
	Shape  string `json:"shape,omitempty"`
	Target string `json:"target,omitempty"`

	// Definition is the podGroups entry (or v2 podGroup) a Group comes
	// from; Present the number of its pods, Pods their names
	// (namespace/name, sorted); MinSubGroups a v2 group's, or a v2
	// subgroup's that needs only some of its children.
	Definition   string   `json:"definition,omitempty"`
	Present      *int64   `json:"present,omitempty"`
	Pods         []string `json:"pods,omitempty"`
	MinSubGroups *int64   `json:"minSubGroups,omitempty"`
}

// Walk calls fn on n and on every node below it, depth first and parents
// before their children, with the depth below n (0 for n). When fn returns
// false the children of that node are skipped.
func Walk(n *Node, fn func(n *Node, depth int) bool) {
	walk(n, 0, fn)
}

func walk(n *Node, depth int, fn func(*Node, int) bool) {
	if !fn(n, depth) {
		return
	}
	for _, c := range n.Children {
		walk(c, depth+1, fn)
	}
}

// Describe builds the tree of obj with p, its Karta's Program.
//
// pods are the pods to place. nil means they are not known: the tree then
// has no Pod, Replica or Group nodes and no Existing counts. Otherwise each
// pod ends up exactly once: placed under its instance (and replica), or
// under the Workload with the reason it is not placed — another namespace,
// no component selector matching, an instance that is not present, or an
// owner reference (controller) to another object of obj's kind. Live, pass
// the pods obj owns (cluster.Client.PodsOf); offline, any pods.
//
// Pods are placed as GetGangGroups places them when the Karta has gang
// instructions or overrides GetGangGroups; the pods it leaves out of the
// gang, and all pods without one, by PlacePods (with no group). A hook
// that fails fails Describe, with the hook's error — except GetPodSpecs:
// then Describe returns the tree it has (the status and the components, no
// instance and no pod) with the error, so that a caller can show the
// status and report the error.
func Describe(ctx context.Context, p *interpreter.Program, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) (*Node, error) {
	st, err := p.InterpretStatus(ctx, obj)
	if err != nil {
		return nil, err
	}
	specs, specsErr := p.GetPodSpecs(ctx, obj)
	root := &Node{Kind: KindWorkload, Name: obj.GetName(), Children: []*Node{}, Fields: Fields{
		Namespace: obj.GetNamespace(), APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Karta: p.Name(),
		Status: string(st.Status), Message: st.Message, Conditions: st.Conditions,
	}}
	for _, m := range st.Matched {
		root.Fields.Matched = append(root.Fields.Matched, string(m))
	}
	if st.Phase != nil {
		root.Fields.Phase = *st.Phase
	}
	b := &builder{p: p, obj: obj, comps: map[string]*compInfo{}}
	root.Children = append(root.Children, b.components())
	refs, err := referenceNodes(ctx, p, obj)
	if err != nil {
		return nil, err
	}
	root.Children = append(root.Children, refs...)
	if specsErr != nil {
		// The status and the components are known: a user looking at a
		// broken workload needs them most. The tree comes with the error.
		return root, specsErr
	}
	b.instances(ctx, specs)
	if pods == nil {
		return root, nil
	}
	for _, inst := range b.insts {
		inst.node.Fields.Existing = new(int64)
	}
	extra, err := b.pods(ctx, pods)
	if err != nil {
		return nil, err
	}
	root.Children = append(root.Children, extra...)
	return root, nil
}

// builder holds what Describe gathers on the way.
type builder struct {
	p     *interpreter.Program
	obj   *unstructured.Unstructured
	comps map[string]*compInfo
	insts []*instInfo
}

// compInfo is a component of the Karta with its node.
type compInfo struct {
	c      *karta.Component
	parent *compInfo
	node   *Node
}

// instInfo is an instance node with what its replicas need.
type instInfo struct {
	comp     *compInfo
	id       string
	node     *Node
	replicas *int64
	// replicaNodes are the Replica nodes, by key.
	replicaNodes map[string]*Node
}

// components builds the Component nodes, each under its owner in Karta
// order, and returns the root's.
func (b *builder) components() *Node {
	all := b.p.Karta().Spec.StructureDefinition.Components()
	for _, c := range all {
		b.comps[c.Name] = &compInfo{c: c, node: &Node{Kind: KindComponent, Name: c.Name, Children: []*Node{}}}
	}
	root := b.comps[all[0].Name]
	for _, c := range all[1:] {
		ci := b.comps[c.Name]
		if c.OwnerRef == nil {
			continue // validation refuses it
		}
		if parent := b.comps[*c.OwnerRef]; parent != nil {
			ci.parent = parent
			parent.node.Children = append(parent.node.Children, ci.node)
		}
	}
	return root.node
}

// instances adds an Instance node for every item of GetPodSpecs, before
// the child components of its component.
func (b *builder) instances(ctx context.Context, specs *interpreter.PodSpecs) {
	// Workload-wide counts, as karta get shows them.
	expected := b.p.ExpectedPods(ctx, b.obj, specs)
	added := map[*compInfo]int{}
	for i, it := range specs.Items {
		ci := b.comps[it.Component]
		if ci == nil {
			continue // an override's answer naming no component: nothing to hang it on
		}
		n := &Node{Kind: KindInstance, Name: it.Instance, Children: []*Node{}, Fields: Fields{Style: style(it), Images: specImages(it)}}
		inst := &instInfo{comp: ci, id: it.Instance, node: n, replicaNodes: map[string]*Node{}}
		if s := it.Scale; s != nil {
			n.Fields.Replicas, n.Fields.MinReplicas, n.Fields.MaxReplicas = s.Replicas, s.MinReplicas, s.MaxReplicas
			inst.replicas = s.Replicas
			n.Fields.Expected = expected[i]
		}
		// Instances first, then child components.
		k := added[ci]
		ci.node.Children = slices.Insert(ci.node.Children, k, n)
		added[ci] = k + 1
		b.insts = append(b.insts, inst)
	}
}

// pods places the pods and returns the Group nodes and the unmatched Pod
// nodes, to go under the Workload.
func (b *builder) pods(ctx context.Context, pods []*unstructured.Unstructured) ([]*Node, error) {
	byName := map[string]*unstructured.Unstructured{}
	var mine []*unstructured.Unstructured
	reasons := map[string]string{}
	var order []string
	for _, pod := range pods {
		key := interpreter.PodKey(pod.Object)
		byName[key] = pod
		order = append(order, key)
		if why := foreign(b.obj, pod); why != "" {
			reasons[key] = why
			continue
		}
		mine = append(mine, pod)
	}
	res, err := Place(ctx, b.p, b.obj, mine)
	if err != nil {
		return nil, err
	}
	for _, u := range res.Unmatched {
		reasons[u.Pod] = u.Reason
	}
	var groups []*Node
	minOf := map[string]int64{}
	for _, g := range res.Groups {
		minOf[g.Name] = g.MinMember
		groups = append(groups, groupNode(g))
	}
	for _, pl := range res.Placements {
		pod := byName[pl.Pod]
		inst := b.instance(pl.Component, pl.Instance)
		if pod == nil || inst == nil {
			reasons[pl.Pod] = fmt.Sprintf("placed in component %q instance %q, which GetPodSpecs does not list", pl.Component, pl.Instance)
			continue
		}
		n := podNode(pod)
		n.Fields.Group = pl.Group
		if m, ok := minOf[pl.Group]; ok {
			n.Fields.MinMember = &m
		}
		parent := inst.node
		if pl.Replica != "" {
			parent = b.replica(inst, pl.Replica)
		}
		parent.Children = append(parent.Children, n)
		*parent.Fields.Existing++
		if parent != inst.node {
			*inst.node.Fields.Existing++
		}
	}
	for _, inst := range b.insts {
		sortChildren(inst.node)
		for _, r := range inst.replicaNodes {
			sortChildren(r)
		}
	}
	out := groups
	seen := map[string]bool{}
	for _, key := range order {
		why, ok := reasons[key]
		if !ok || seen[key] {
			continue
		}
		seen[key] = true
		n := podNode(byName[key])
		n.Fields.Reason = why
		out = append(out, n)
	}
	return out, nil
}

// foreign says why a pod belongs to another object of obj's kind: its
// controller is one, with another uid (or, without uids, another name).
func foreign(obj, pod *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	for _, ref := range pod.GetOwnerReferences() {
		if ref.Controller == nil || !*ref.Controller || ref.Kind != gvk.Kind {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != gvk.Group {
			continue
		}
		same := ref.Name == obj.GetName()
		if ref.UID != "" && obj.GetUID() != "" {
			same = ref.UID == obj.GetUID()
		}
		if !same {
			return fmt.Sprintf("owned by %s %s, not by this %s", ref.Kind, ref.Name, gvk.Kind)
		}
	}
	return ""
}

// instance finds the node of a component's instance.
func (b *builder) instance(component, id string) *instInfo {
	for _, inst := range b.insts {
		if inst.comp.c.Name == component && inst.id == id {
			return inst
		}
	}
	return nil
}

// replica returns the Replica node of key under inst, made on first use
// with its expected count.
func (b *builder) replica(inst *instInfo, key string) *Node {
	if n, ok := inst.replicaNodes[key]; ok {
		return n
	}
	n := &Node{Kind: KindReplica, Name: key, Children: []*Node{}, Fields: Fields{Existing: new(int64), Expected: b.perReplica(inst)}}
	inst.replicaNodes[key] = n
	inst.node.Children = append(inst.node.Children, n)
	return n
}

// perReplica is how many pods of inst one replica holds: 1 when the
// replica key is the component's own (a replica is one of its pods);
// the instance's replicas when the key is an ancestor's and no component
// in between scales; unknown otherwise.
func (b *builder) perReplica(inst *instInfo) *int64 {
	if hasReplicaSelector(inst.comp.c) {
		one := int64(1)
		return &one
	}
	for a := inst.comp.parent; a != nil; a = a.parent {
		if hasReplicaSelector(a.c) {
			if inst.replicas == nil {
				return nil
			}
			n := *inst.replicas
			return &n
		}
		if scales(a.c) {
			return nil
		}
	}
	return nil
}

func hasReplicaSelector(c *karta.Component) bool {
	return c.PodSelector != nil && c.PodSelector.ReplicaSelector != nil
}

func scales(c *karta.Component) bool {
	s := c.ScaleDefinition
	return s != nil && (s.ReplicasPath != "" || s.MinReplicasPath != "" || s.MaxReplicasPath != "")
}

// sortChildren orders an instance's or a replica's children: replicas
// by key (numbers as numbers), then pods by name.
func sortChildren(n *Node) {
	slices.SortStableFunc(n.Children, func(a, b *Node) int {
		if a.Kind != b.Kind {
			if a.Kind == KindReplica {
				return -1
			}
			if b.Kind == KindReplica {
				return 1
			}
			return 0
		}
		if a.Kind == KindReplica {
			return compareKeys(a.Name, b.Name)
		}
		if c := strings.Compare(a.Fields.Namespace, b.Fields.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// compareKeys orders replica keys: numbers by value, before other keys.
func compareKeys(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
		return 0
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// groupNode is a Group node of GetGangGroups' group, with its subgroups,
// each under its parent (a JobSet's per-replica leaves under their
// replicated job's subgroup).
func groupNode(g interpreter.Group) *Node {
	n := &Node{Kind: KindGroup, Name: g.Name, Children: []*Node{}, Fields: Fields{
		Definition: g.Definition, MinMember: ptr(g.MinMember), Present: ptr(int64(len(g.Pods))),
		Pods: g.Pods, MinSubGroups: g.MinSubGroups,
	}}
	// A parent comes before its children (interpreter.SubGroup), and its
	// minMember counts theirs: so does its present count, while its pods
	// are its own.
	byName := make(map[string]*Node, len(g.SubGroups))
	parentOf := make(map[*Node]*Node, len(g.SubGroups))
	for _, sg := range g.SubGroups {
		sn := &Node{Kind: KindGroup, Name: sg.Name, Children: []*Node{}, Fields: Fields{
			MinMember: ptr(sg.MinMember), Present: ptr(int64(len(sg.Pods))), Pods: sg.Pods,
			MinSubGroups: sg.MinSubGroups,
		}}
		byName[sg.Name] = sn
		parent := n
		if p, ok := byName[sg.Parent]; ok && sg.Parent != "" {
			parent = p
			parentOf[sn] = p
		}
		parent.Children = append(parent.Children, sn)
		for a := parentOf[sn]; a != nil; a = parentOf[a] {
			*a.Fields.Present += int64(len(sg.Pods))
		}
	}
	return n
}

// podNode is a Pod node with the pod's namespace, phase and images.
func podNode(pod *unstructured.Unstructured) *Node {
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	spec, _ := pod.Object["spec"].(map[string]any)
	return &Node{Kind: KindPod, Name: pod.GetName(), Children: []*Node{}, Fields: Fields{
		Namespace: pod.GetNamespace(), Phase: phase, Images: containerImages(nil, spec["containers"]),
	}}
}

// style names how an item defines its pods.
func style(it interpreter.PodSpecItem) string {
	switch {
	case it.PodTemplateSpec != nil:
		return string(karta.SpecStylePodTemplateSpec)
	case it.PodSpec != nil:
		return string(karta.SpecStylePodSpec)
	case it.Fragmented != nil:
		return string(karta.SpecStyleFragmented)
	}
	return ""
}

// specImages are the images of an item's pod definition.
func specImages(it interpreter.PodSpecItem) []string {
	switch {
	case it.PodTemplateSpec != nil:
		spec, _ := it.PodTemplateSpec["spec"].(map[string]any)
		return containerImages(nil, spec["containers"])
	case it.PodSpec != nil:
		return containerImages(nil, it.PodSpec["containers"])
	case it.Fragmented != nil:
		f := it.Fragmented
		var out []string
		if f.Image != nil {
			out = addImage(out, *f.Image)
		} else if img, ok := f.Container["image"].(string); ok {
			out = addImage(out, img)
		}
		return containerImages(out, f.Containers)
	}
	return nil
}

// containerImages adds the images of a containers list to out.
func containerImages(out []string, containers any) []string {
	list, _ := containers.([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		if img, ok := m["image"].(string); ok {
			out = addImage(out, img)
		}
	}
	return out
}

func addImage(out []string, img string) []string {
	if img == "" || slices.Contains(out, img) {
		return out
	}
	return append(out, img)
}

func ptr(n int64) *int64 { return &n }
