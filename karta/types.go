package karta

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Karta describes the structure of one Kubernetes workload kind with jq
// expressions: where its pod templates are, which instances exist, how its
// status maps to generic statuses, which pods belong to which component and
// how pods form gang-scheduling groups.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=kt
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.structureDefinition.rootComponent.kind.kind`
// +kubebuilder:printcolumn:name="Group",type=string,JSONPath=`.spec.structureDefinition.rootComponent.kind.group`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Karta struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KartaSpec `json:"spec"`
	// Status is written by the Karta controller. The loader ignores it.
	// +optional
	Status KartaStatus `json:"status,omitempty"`
}

// KartaList is a list of Kartas.
//
// +kubebuilder:object:root=true
type KartaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Karta `json:"items"`
}

// KartaSpec is the body of a Karta.
type KartaSpec struct {
	// StructureDefinition is the component tree of the workload.
	StructureDefinition StructureDefinition `json:"structureDefinition"`

	// Instructions are the optimization instructions (gang scheduling).
	// +optional
	Instructions *Instructions `json:"instructions,omitempty"`

	// OptimizationInstructions is the legacy name of Instructions. Setting
	// both is a validation error.
	// +optional
	OptimizationInstructions *Instructions `json:"optimizationInstructions,omitempty"`

	// LuaScript is a Lua chunk whose global functions override the generated
	// hooks of this Karta (the karta extension).
	// +optional
	LuaScript string `json:"luaScript,omitempty"`

	// References are other objects the workload's truth lives in, each
	// exposed to every expression of the Karta as the jq variable
	// $<name>. Karta fetches nothing itself: the caller resolves them
	// (docs/karta.md, "References").
	// +optional
	// +listType=map
	// +listMapKey=name
	References []Reference `json:"references,omitempty"`
}

// EffectiveInstructions returns Instructions, or OptimizationInstructions when
// only the legacy block is set.
func (s *KartaSpec) EffectiveInstructions() *Instructions {
	if s.Instructions != nil {
		return s.Instructions
	}
	return s.OptimizationInstructions
}

// KartaStatus is what the Karta controller reports about a Karta.
type KartaStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Accepted (validation) and Compiled (Lua compilation).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StructureDefinition is the tree of components of a workload.
type StructureDefinition struct {
	// RootComponent is the workload object itself.
	RootComponent *Component `json:"rootComponent"`

	// ChildComponents are the logical parts of the workload, each naming its
	// parent in ownerRef. Their order is significant.
	// +optional
	ChildComponents []Component `json:"childComponents,omitempty"`

	// AdditionalChildKinds are further kinds the workload creates, for RBAC.
	// +optional
	AdditionalChildKinds []GroupVersionKind `json:"additionalChildKinds,omitempty"`
}

// Components returns the root followed by the children, in Karta order.
// A missing root is left out.
func (d *StructureDefinition) Components() []*Component {
	out := make([]*Component, 0, 1+len(d.ChildComponents))
	if d.RootComponent != nil {
		out = append(out, d.RootComponent)
	}
	for i := range d.ChildComponents {
		out = append(out, &d.ChildComponents[i])
	}
	return out
}

// ChildKinds are the kinds of objects the workload creates between itself
// and its pods: the kinds of its owned child components, then its
// additionalChildKinds. Watchers of a workload's pods (the gang output, the
// metrics exporter) trace a pod's owners through them.
func (d *StructureDefinition) ChildKinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, comp := range d.Components() {
		if comp.Kind != nil && comp.OwnerRef != nil {
			out = append(out, comp.Kind.GVK())
		}
	}
	for _, g := range d.AdditionalChildKinds {
		out = append(out, g.GVK())
	}
	return out
}

// GroupVersionKind names a Kubernetes kind. Group may be "" for the core
// group.
type GroupVersionKind struct {
	// +optional
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// GVK converts to the apimachinery type.
func (g GroupVersionKind) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind}
}

// String renders the GVK as group/version, Kind=kind, as apimachinery does.
func (g GroupVersionKind) String() string { return g.GVK().String() }

// Component is one node of the component tree.
type Component struct {
	// Name is unique in the Karta.
	Name string `json:"name"`

	// Kind is the GVK the component stands for. Required on the root.
	// +optional
	Kind *GroupVersionKind `json:"kind,omitempty"`

	// OwnerRef names the parent component. Required on children, forbidden
	// on the root.
	// +optional
	OwnerRef *string `json:"ownerRef,omitempty"`

	// SpecDefinition says where the pod definition lives. A component with
	// one is pod-bearing.
	// +optional
	SpecDefinition *SpecDefinition `json:"specDefinition,omitempty"`

	// ScaleDefinition says where replica counts live.
	// +optional
	ScaleDefinition *ScaleDefinition `json:"scaleDefinition,omitempty"`

	// StatusDefinition maps the workload's status to generic statuses.
	// Required on the root; only the root's is used.
	// +optional
	StatusDefinition *StatusDefinition `json:"statusDefinition,omitempty"`

	// InstanceIDPath yields one id per instance of the component.
	// +optional
	InstanceIDPath string `json:"instanceIdPath,omitempty"`

	// PodSelector holds paths evaluated on a Pod to find its component,
	// instance and replica.
	// +optional
	PodSelector *PodSelector `json:"podSelector,omitempty"`

	// SuspendDefinition says how to suspend and resume the workload.
	// +optional
	SuspendDefinition *SuspendDefinition `json:"suspendDefinition,omitempty"`
}

// IsPodBearing reports whether the component has a spec definition with a
// style set. An empty definition ({}) defines nothing.
func (c *Component) IsPodBearing() bool {
	return c.SpecDefinition != nil && c.SpecDefinition.Style() != SpecStyleNone
}

// SpecStyle is the way a component's pod definition is expressed.
type SpecStyle string

// The spec styles of a SpecDefinition: at most one per component.
const (
	SpecStyleNone            SpecStyle = ""
	SpecStylePodTemplateSpec SpecStyle = "podTemplateSpec"
	SpecStylePodSpec         SpecStyle = "podSpec"
	SpecStyleFragmented      SpecStyle = "fragmented"
)

// SpecDefinition locates the pod definition of a component. At most one
// style may be set.
type SpecDefinition struct {
	// PodTemplateSpecPath yields PodTemplateSpecs.
	// +optional
	PodTemplateSpecPath string `json:"podTemplateSpecPath,omitempty"`
	// PodSpecPath yields PodSpecs.
	// +optional
	PodSpecPath string `json:"podSpecPath,omitempty"`
	// MetadataPath yields ObjectMeta-like objects; only with PodSpecPath.
	// +optional
	MetadataPath string `json:"metadataPath,omitempty"`
	// FragmentedPodSpecDefinition locates the parts of a pod spec that the
	// workload spreads over its own fields.
	// +optional
	FragmentedPodSpecDefinition *FragmentedPodSpecDefinition `json:"fragmentedPodSpecDefinition,omitempty"`
	// View computes what GetPodSpecs reports where the operator builds more
	// than the object holds (an injected container, a computed request, a
	// field read with a fallback); the paths above stay what revisions
	// write.
	// +optional
	View *SpecView `json:"view,omitempty"`
}

// SpecView holds a component's computed pod definition: each expression
// runs on the object like a path, yields one value per instance, and
// replaces the GetPodSpecs value of the same key (podTemplateSpec, podSpec,
// metadata, or a fragment's key) that the paths read. Views are read only:
// revisions, placement and the other hooks keep to the paths.
type SpecView struct {
	// +optional
	PodTemplateSpec string `json:"podTemplateSpec,omitempty"`
	// +optional
	PodSpec string `json:"podSpec,omitempty"`
	// +optional
	Metadata string `json:"metadata,omitempty"`
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// +optional
	Labels string `json:"labels,omitempty"`
	// +optional
	Annotations string `json:"annotations,omitempty"`
	// +optional
	Resources string `json:"resources,omitempty"`
	// +optional
	ResourceClaims string `json:"resourceClaims,omitempty"`
	// +optional
	PodAffinity string `json:"podAffinity,omitempty"`
	// +optional
	NodeAffinity string `json:"nodeAffinity,omitempty"`
	// +optional
	Containers string `json:"containers,omitempty"`
	// +optional
	Container string `json:"container,omitempty"`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// +optional
	Image string `json:"image,omitempty"`
	// InitContainers computes the init containers, e.g. those an
	// operator's webhook injects (KServe's storage-initializer).
	// +optional
	InitContainers string `json:"initContainers,omitempty"`
}

// Views lists the view's expressions by GetPodSpecs key, defined or not:
// podTemplateSpec, podSpec, metadata, then the fragments in Fragments()
// order. Field is the JSON name under view (e.g. "image").
func (v *SpecView) Views() []Fragment {
	return []Fragment{
		{"podTemplateSpec", "podTemplateSpec", v.PodTemplateSpec},
		{"podSpec", "podSpec", v.PodSpec},
		{"metadata", "metadata", v.Metadata},
		{"schedulerName", "schedulerName", v.SchedulerName},
		{"labels", "labels", v.Labels},
		{"annotations", "annotations", v.Annotations},
		{"resources", "resources", v.Resources},
		{"resourceClaims", "resourceClaims", v.ResourceClaims},
		{"podAffinity", "podAffinity", v.PodAffinity},
		{"nodeAffinity", "nodeAffinity", v.NodeAffinity},
		{"containers", "containers", v.Containers},
		{"container", "container", v.Container},
		{"priorityClassName", "priorityClassName", v.PriorityClassName},
		{"image", "image", v.Image},
		{"initContainers", "initContainers", v.InitContainers},
	}
}

// Styles returns every style that is set; more than one is a validation
// error.
func (s *SpecDefinition) Styles() []SpecStyle {
	var out []SpecStyle
	if s.PodTemplateSpecPath != "" {
		out = append(out, SpecStylePodTemplateSpec)
	}
	if s.PodSpecPath != "" {
		out = append(out, SpecStylePodSpec)
	}
	if s.FragmentedPodSpecDefinition != nil && !s.FragmentedPodSpecDefinition.IsEmpty() {
		out = append(out, SpecStyleFragmented)
	}
	return out
}

// Style returns the one style that is set, or SpecStyleNone.
func (s *SpecDefinition) Style() SpecStyle {
	if styles := s.Styles(); len(styles) > 0 {
		return styles[0]
	}
	return SpecStyleNone
}

// FragmentedPodSpecDefinition locates pod spec fragments. Every path is
// optional; {} defines nothing.
type FragmentedPodSpecDefinition struct {
	// +optional
	SchedulerNamePath string `json:"schedulerNamePath,omitempty"`
	// +optional
	LabelsPath string `json:"labelsPath,omitempty"`
	// +optional
	AnnotationsPath string `json:"annotationsPath,omitempty"`
	// +optional
	ResourcesPath string `json:"resourcesPath,omitempty"`
	// +optional
	ResourceClaimsPath string `json:"resourceClaimsPath,omitempty"`
	// +optional
	PodAffinityPath string `json:"podAffinityPath,omitempty"`
	// +optional
	NodeAffinityPath string `json:"nodeAffinityPath,omitempty"`
	// +optional
	ContainersPath string `json:"containersPath,omitempty"`
	// ContainerPath yields the main container.
	// +optional
	ContainerPath string `json:"containerPath,omitempty"`
	// +optional
	PriorityClassNamePath string `json:"priorityClassNamePath,omitempty"`
	// +optional
	ImagePath string `json:"imagePath,omitempty"`
	// InitContainersPath yields the pod's init containers.
	// +optional
	InitContainersPath string `json:"initContainersPath,omitempty"`
}

// Fragment is one named path of a fragmented definition.
type Fragment struct {
	// Key is the fragment's key in GetPodSpecs output (e.g. "labels").
	Key string
	// Field is the JSON name of the path field (e.g. "labelsPath").
	Field string
	// Path is the jq expression, "" when not defined.
	Path string
}

// Fragments lists the fragments in output order (docs/cli.md), defined or not.
func (f *FragmentedPodSpecDefinition) Fragments() []Fragment {
	return []Fragment{
		{"schedulerName", "schedulerNamePath", f.SchedulerNamePath},
		{"labels", "labelsPath", f.LabelsPath},
		{"annotations", "annotationsPath", f.AnnotationsPath},
		{"resources", "resourcesPath", f.ResourcesPath},
		{"resourceClaims", "resourceClaimsPath", f.ResourceClaimsPath},
		{"podAffinity", "podAffinityPath", f.PodAffinityPath},
		{"nodeAffinity", "nodeAffinityPath", f.NodeAffinityPath},
		{"containers", "containersPath", f.ContainersPath},
		{"container", "containerPath", f.ContainerPath},
		{"priorityClassName", "priorityClassNamePath", f.PriorityClassNamePath},
		{"image", "imagePath", f.ImagePath},
		{"initContainers", "initContainersPath", f.InitContainersPath},
	}
}

// IsEmpty reports whether no fragment path is defined.
func (f *FragmentedPodSpecDefinition) IsEmpty() bool {
	for _, fr := range f.Fragments() {
		if fr.Path != "" {
			return false
		}
	}
	return true
}

// ScaleDefinition locates replica counts. {} defines nothing.
type ScaleDefinition struct {
	// +optional
	ReplicasPath string `json:"replicasPath,omitempty"`
	// +optional
	MinReplicasPath string `json:"minReplicasPath,omitempty"`
	// +optional
	MaxReplicasPath string `json:"maxReplicasPath,omitempty"`
}

// IsEmpty reports whether no scale path is defined.
func (s *ScaleDefinition) IsEmpty() bool {
	return s.ReplicasPath == "" && s.MinReplicasPath == "" && s.MaxReplicasPath == ""
}

// StatusDefinition maps a workload's phase and conditions to generic
// statuses.
type StatusDefinition struct {
	// +optional
	PhaseDefinition *PhaseDefinition `json:"phaseDefinition,omitempty"`
	// +optional
	ConditionsDefinition *ConditionsDefinition `json:"conditionsDefinition,omitempty"`
	StatusMappings       StatusMappings        `json:"statusMappings"`
}

// PhaseDefinition locates the phase string.
type PhaseDefinition struct {
	Path string `json:"path"`
}

// The CRD defaults of ConditionsDefinition's field names, applied by Load.
const (
	DefaultTypeFieldName    = "type"
	DefaultStatusFieldName  = "status"
	DefaultMessageFieldName = "message"
	DefaultReasonFieldName  = "reason"
)

// ConditionsDefinition locates the conditions array and names its fields.
// Load applies the defaults when a key is absent or null; "" disables
// MessageFieldName and ReasonFieldName and is an error for the other two.
type ConditionsDefinition struct {
	Path string `json:"path"`
	// +optional
	// +kubebuilder:default=type
	TypeFieldName string `json:"typeFieldName"`
	// +optional
	// +kubebuilder:default=status
	StatusFieldName string `json:"statusFieldName"`
	// +optional
	// +kubebuilder:default=message
	MessageFieldName string `json:"messageFieldName"`
	// +optional
	// +kubebuilder:default=reason
	ReasonFieldName string `json:"reasonFieldName"`
}

// Status is a generic workload status.
type Status string

// The generic statuses.
const (
	StatusInitializing Status = "Initializing"
	StatusRunning      Status = "Running"
	StatusCompleted    Status = "Completed"
	StatusFailed       Status = "Failed"
	StatusDegraded     Status = "Degraded"
	StatusSuspended    Status = "Suspended"
	StatusSuspending   Status = "Suspending"
	StatusResuming     Status = "Resuming"
	StatusUndefined    Status = "Undefined"
)

// StatusPrecedence is the order in which statuses are evaluated, the most
// decisive first. It departs from upstream, which let Running win
// over Completed.
var StatusPrecedence = []Status{
	StatusFailed, StatusCompleted, StatusResuming, StatusSuspending,
	StatusSuspended, StatusDegraded, StatusRunning, StatusInitializing,
}

// StatusMappings holds, per generic status, matchers combined with OR.
type StatusMappings struct {
	// +optional
	Initializing []StatusMatcher `json:"initializing,omitempty"`
	// +optional
	Running []StatusMatcher `json:"running,omitempty"`
	// +optional
	Completed []StatusMatcher `json:"completed,omitempty"`
	// +optional
	Failed []StatusMatcher `json:"failed,omitempty"`
	// +optional
	Degraded []StatusMatcher `json:"degraded,omitempty"`
	// +optional
	Suspended []StatusMatcher `json:"suspended,omitempty"`
	// +optional
	Suspending []StatusMatcher `json:"suspending,omitempty"`
	// +optional
	Resuming []StatusMatcher `json:"resuming,omitempty"`
}

// StatusMapping is the matchers of one status with its JSON key.
type StatusMapping struct {
	Status   Status
	Key      string
	Matchers []StatusMatcher
}

// InPrecedence returns the mappings in StatusPrecedence order, including
// statuses without matchers.
func (m *StatusMappings) InPrecedence() []StatusMapping {
	return []StatusMapping{
		{StatusFailed, "failed", m.Failed},
		{StatusCompleted, "completed", m.Completed},
		{StatusResuming, "resuming", m.Resuming},
		{StatusSuspending, "suspending", m.Suspending},
		{StatusSuspended, "suspended", m.Suspended},
		{StatusDegraded, "degraded", m.Degraded},
		{StatusRunning, "running", m.Running},
		{StatusInitializing, "initializing", m.Initializing},
	}
}

// StatusMatcher holds if all its criteria hold. At least one criterion is
// required.
type StatusMatcher struct {
	// ByPhase holds when the phase equals it.
	// +optional
	ByPhase string `json:"byPhase,omitempty"`
	// ByConditions holds when every listed condition matches.
	// +optional
	ByConditions []ConditionMatcher `json:"byConditions,omitempty"`
	// ByExpression holds when the first output of the expression, through jq
	// tostring, equals ExpectedResult.
	// +optional
	ByExpression *ExpressionMatcher `json:"byExpression,omitempty"`
}

// ConditionMatcher matches the last condition of a type.
type ConditionMatcher struct {
	Type string `json:"type"`
	// Status, when non-empty, must equal the condition's status.
	// +optional
	Status string `json:"status,omitempty"`
	// Reason, when non-empty, must equal the condition's reason.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ExpressionMatcher compares the first output of a jq expression.
type ExpressionMatcher struct {
	Expression     string `json:"expression"`
	ExpectedResult string `json:"expectedResult"`
}

// PodSelector holds the paths evaluated on a Pod.
type PodSelector struct {
	// +optional
	ComponentTypeSelector *ComponentTypeSelector `json:"componentTypeSelector,omitempty"`
	// +optional
	ComponentInstanceSelector *ComponentInstanceSelector `json:"componentInstanceSelector,omitempty"`
	// +optional
	ReplicaSelector *ReplicaSelector `json:"replicaSelector,omitempty"`
}

// ComponentTypeSelector tells whether a pod belongs to the component: with
// Value, (KeyPath) == Value; without, KeyPath yields a non-null value; with
// MatchLabels, the pod's metadata.labels hold every pair. A selector needs
// KeyPath or MatchLabels; with both, both must match.
type ComponentTypeSelector struct {
	// +optional
	KeyPath string `json:"keyPath,omitempty"`
	// +optional
	Value *string `json:"value,omitempty"`
	// MatchLabels are labels every pod of the component carries, as a
	// Kubernetes label selector's matchLabels: all pairs must be present.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// ComponentInstanceSelector yields the instance id of a pod.
type ComponentInstanceSelector struct {
	IDPath string `json:"idPath"`
}

// ReplicaSelector yields the replica key of a pod of a replicated
// component; descendants inherit it.
type ReplicaSelector struct {
	KeyPath string `json:"keyPath"`
}

// SuspendDefinition lists the writes that suspend and resume a workload.
type SuspendDefinition struct {
	// +kubebuilder:validation:MinItems=1
	SuspendActions []SuspendAction `json:"suspendActions"`
	// +kubebuilder:validation:MinItems=1
	ResumeActions []SuspendAction `json:"resumeActions"`
}

// SuspendAction assigns Value to every location Path yields.
type SuspendAction struct {
	Path string `json:"path"`
	// Value is the value to assign. A string is JSON text ("true" is the
	// boolean, '"true"' the string); any other value is itself. Use
	// DecodedValue to read it.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Value apiextensionsv1.JSON `json:"value"`
}

// Instructions are optimization instructions.
type Instructions struct {
	// +optional
	GangScheduling *GangScheduling `json:"gangScheduling,omitempty"`
}

// GangScheduling holds exactly one of PodGroups (alpha) and PodGroup (v2).
type GangScheduling struct {
	// PodGroups is the alpha form: named groups of members.
	// +optional
	PodGroups []PodGroup `json:"podGroups,omitempty"`
	// PodGroup is the v2 form: one group per object, with subgroups.
	// +optional
	PodGroup *PodGroupV2 `json:"podGroup,omitempty"`
}

// PodGroup is one alpha gang definition.
type PodGroup struct {
	Name    string           `json:"name"`
	Members []PodGroupMember `json:"members"`
	// MinMemberPath is a jq expression on the root object whose positive
	// integer replaces the computed minMember of every group of this
	// definition (Volcano Job's .spec.minAvailable, the Kubeflow jobs'
	// .spec.runPolicy.schedulingPolicy.minAvailable); null, absent or 0
	// keeps the computed one.
	// +optional
	MinMemberPath string `json:"minMemberPath,omitempty"`
}

// PodGroupMember puts the pods of a component (and its descendants) into a
// group, split by keys and narrowed by filters, all evaluated on pods.
type PodGroupMember struct {
	ComponentName string `json:"componentName"`
	// +optional
	GroupByKeyPaths []string `json:"groupByKeyPaths,omitempty"`
	// +optional
	Filters []string `json:"filters,omitempty"`
}

// PodGroupV2 is the v2 gang definition.
type PodGroupV2 struct {
	Name string `json:"name"`
	// ComponentName is the group's scope; the root when empty. A component
	// with instances (instanceIdPath) or a replicaSelector makes one group
	// per instance or replica, named pg-<uid>-<name>-<id>, and counts that
	// instance or replica alone; pods of other components are unmatched.
	// +optional
	ComponentName string `json:"componentName,omitempty"`
	// SubGroups are the group's subgroups. An entry whose component
	// descends from another entry's component nests under it.
	SubGroups []SubGroup `json:"subGroups"`
	// MinMemberPath is a jq expression on the root object whose positive
	// integer replaces the group's computed minMember; null, absent or 0
	// keeps the computed one. A minimum below the subgroups' sum is taken
	// from the last listed subgroups first.
	// +optional
	MinMemberPath string `json:"minMemberPath,omitempty"`
	// +optional
	Topology *Topology `json:"topology,omitempty"`
}

// SubGroup is one component's part of a v2 group.
type SubGroup struct {
	ComponentName string `json:"componentName"`
	// PerInstance makes one subgroup per present instance of the
	// component (which must have an instanceIdPath), named
	// <component>-<id>, instead of one for all of them.
	// +optional
	PerInstance bool `json:"perInstance,omitempty"`
	// PerReplica splits each subgroup of the entry into one leaf
	// subgroup per replica (a JobSet's replicated job into its Jobs),
	// named <subgroup>-replica-<key>.
	// +optional
	PerReplica *SubGroupReplicas `json:"perReplica,omitempty"`
	// MinMemberPath is a jq expression on the root object that states
	// the subgroup's minMember: one value per instance of the component
	// (zipped with its ids) with perInstance, else one. A count, 0
	// included, replaces the computed minimum; null keeps it. No entry
	// may nest under one with a minMemberPath. With perReplica, the
	// leaves share the stated minimum, unless perReplica.minCountPath
	// states how many leaves the subgroup needs: then the stated minimum
	// counts only where it is above those leaves' sum.
	// +optional
	MinMemberPath string `json:"minMemberPath,omitempty"`
	// +optional
	Topology *Topology `json:"topology,omitempty"`
}

// SubGroupReplicas says how a subgroup splits into one leaf per replica:
// how many replicas it has, and which replica a pod belongs to.
type SubGroupReplicas struct {
	// CountPath is a jq expression on the root object: the number of
	// replicas of each subgroup the entry makes, one value per instance
	// of the component (zipped with its ids) with perInstance, else one.
	// Null or 0 makes no leaves.
	CountPath string `json:"countPath"`
	// KeyPath is a jq expression on a pod that yields its replica's
	// index, 0 to count-1 (a string of decimal digits or an integer).
	KeyPath string `json:"keyPath"`
	// MinCountPath is a jq expression on the root object: how many of
	// the subgroup's leaves it needs (its minSubGroups), one value per
	// instance of the component (zipped with its ids) with perInstance,
	// else one; the first ones count, each whole. Null or absent: all of
	// them. A count above the replicas fails the call.
	// +optional
	MinCountPath string `json:"minCountPath,omitempty"`
}

// Topology is a topology constraint, passed through to the output.
type Topology struct {
	TopologyName string `json:"topologyName"`
	// +optional
	PreferredTopologyLevel string `json:"preferredTopologyLevel,omitempty"`
	// +optional
	RequiredTopologyLevel string `json:"requiredTopologyLevel,omitempty"`
}
