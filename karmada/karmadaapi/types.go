// Package karmadaapi holds the types of Karmada's resource interpreter
// operations — what GetReplicas, GetComponents, AggregateStatus and
// GetDependencies take and return — with Karmada's JSON tags and meaning,
// so that karta does not depend on the Karmada module
// (github.com/karmada-io/karmada: pkg/apis/work/v1alpha2 and
// pkg/apis/config/v1alpha1). Only the fields the resource interpreter uses
// are declared; unknown fields are ignored when decoding, as the Kubernetes
// API machinery does.
//
// It is a leaf: both back ends of those operations use it — package
// karmada, which runs Karmada's own customizations, and package
// interpreter, whose Programs answer them for a Karta — without either
// importing the other.
package karmadaapi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The API group and kind of a ResourceInterpreterCustomization, the object
// Karmada's declarative interpreter reads its Lua scripts from.
const (
	CustomizationAPIVersion = "config.karmada.io/v1alpha1"
	CustomizationKind       = "ResourceInterpreterCustomization"
)

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
