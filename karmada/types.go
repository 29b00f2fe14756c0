package karmada

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kartalua/karta/karmada/karmadaapi"
)

// The customization types this package reads, defined here with Karmada's
// JSON tags and meaning so that karta does not depend on the Karmada module
// (github.com/karmada-io/karmada: pkg/apis/config/v1alpha1). Only the
// fields the resource interpreter uses are declared; unknown fields are
// ignored when decoding, as the Kubernetes API machinery does. The
// operations' argument and result types are package karmadaapi's.

// The API group and kinds of a customization.
const (
	CustomizationAPIVersion = karmadaapi.CustomizationAPIVersion
	CustomizationKind       = karmadaapi.CustomizationKind
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
