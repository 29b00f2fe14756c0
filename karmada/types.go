package karmada

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The Karmada API types this package reads and returns, defined here with
// Karmada's JSON tags and meaning so that karta does not depend on the
// Karmada module (github.com/karmada-io/karmada: pkg/apis/config/v1alpha1
// and pkg/apis/work/v1alpha2). Only the fields the resource interpreter
// uses are declared; unknown fields are ignored when decoding, as the
// Kubernetes API machinery does.

// The API group and kinds of a customization.
const (
	CustomizationAPIVersion = "config.karmada.io/v1alpha1"
	CustomizationKind       = "ResourceInterpreterCustomization"
	customizationListKind   = "ResourceInterpreterCustomizationList"
)

// Customization is Karmada's ResourceInterpreterCustomization
// (config.karmada.io/v1alpha1): Lua scripts that interpret one resource
// kind.
type Customization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CustomizationSpec `json:"spec"`

	// Source names where the customization was read (a file, and the
	// document within it), for messages. It is not part of the API.
	Source string `json:"-"`
}

// CustomizationSpec is ResourceInterpreterCustomizationSpec.
type CustomizationSpec struct {
	// Target is the resource type the customization applies to.
	Target CustomizationTarget `json:"target"`
	// Customizations are the interpretation rules.
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget is the apiVersion and kind a customization applies
// to.
type CustomizationTarget struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// CustomizationRules holds one Lua script per operation. Every rule is
// optional.
type CustomizationRules struct {
	Retention                *LuaRule `json:"retention,omitempty"`
	ReplicaResource          *LuaRule `json:"replicaResource,omitempty"`
	ComponentResource        *LuaRule `json:"componentResource,omitempty"`
	ReplicaRevision          *LuaRule `json:"replicaRevision,omitempty"`
	StatusReflection         *LuaRule `json:"statusReflection,omitempty"`
	StatusAggregation        *LuaRule `json:"statusAggregation,omitempty"`
	HealthInterpretation     *LuaRule `json:"healthInterpretation,omitempty"`
	DependencyInterpretation *LuaRule `json:"dependencyInterpretation,omitempty"`
}

// LuaRule is the shape every rule shares in Karmada (LocalValueRetention,
// ReplicaResourceRequirement, ComponentResourceRequirement,
// ReplicaRevision, StatusReflection, StatusAggregation,
// HealthInterpretation, DependencyInterpretation): a whole Lua chunk that
// defines the operation's function.
type LuaRule struct {
	LuaScript string `json:"luaScript"`
}

// ReplicaRequirements is workv1alpha2.ReplicaRequirements: what each
// replica needs. Namespace and PriorityClassName are only set by Karmada
// with its ResourceQuotaEstimate feature, which karta's kube helpers keep
// off; a script may still set them.
type ReplicaRequirements struct {
	NodeClaim         *NodeClaim          `json:"nodeClaim,omitempty"`
	ResourceRequest   corev1.ResourceList `json:"resourceRequest,omitempty"`
	Namespace         string              `json:"namespace,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
}

// NodeClaim is workv1alpha2.NodeClaim: the node constraints of a replica.
type NodeClaim struct {
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
	NodeSelector     map[string]string    `json:"nodeSelector,omitempty"`
	Tolerations      []corev1.Toleration  `json:"tolerations,omitempty"`
}

// Component is workv1alpha2.Component: one component of a multi-template
// workload, with its replica count and per-replica requirements.
type Component struct {
	Name                string                        `json:"name"`
	Replicas            int32                         `json:"replicas"`
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// ComponentReplicaRequirements is workv1alpha2.ComponentReplicaRequirements.
type ComponentReplicaRequirements struct {
	NodeClaim         *NodeClaim          `json:"nodeClaim,omitempty"`
	ResourceRequest   corev1.ResourceList `json:"resourceRequest,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
}

// DependentObjectReference is configv1alpha1.DependentObjectReference: an
// object the workload depends on, by name or by label selector.
type DependentObjectReference struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	Namespace     string                `json:"namespace,omitempty"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// ResourceHealth is workv1alpha2.ResourceHealth.
type ResourceHealth string

// The health values Karmada records for a member cluster's object.
const (
	ResourceHealthy   ResourceHealth = "Healthy"
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	ResourceUnknown   ResourceHealth = "Unknown"
)

// AggregatedStatusItem is workv1alpha2.AggregatedStatusItem: the status of
// the object in one member cluster, as AggregateStatus receives it. Its
// omitempty fields reach Lua only when set: applied=false arrives as nil.
type AggregatedStatusItem struct {
	ClusterName    string                `json:"clusterName"`
	Status         *runtime.RawExtension `json:"status,omitempty"`
	Applied        bool                  `json:"applied,omitempty"`
	AppliedMessage string                `json:"appliedMessage,omitempty"`
	Health         ResourceHealth        `json:"health,omitempty"`
}
