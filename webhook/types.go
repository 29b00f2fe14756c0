package webhook

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kartalua/karta/karmada"
)

// The Karmada resource interpreter webhook protocol
// (github.com/karmada-io/karmada pkg/apis/config/v1alpha1,
// interpretercontext_types.go), declared here with Karmada's JSON tags so
// that karta does not depend on the Karmada module.

// The apiVersion and kind of a review, request and response alike.
const (
	ContextAPIVersion = karmada.CustomizationAPIVersion
	ContextKind       = "ResourceInterpreterContext"
)

// PatchTypeJSONPatch is the one patch type Karmada accepts (RFC 6902).
const PatchTypeJSONPatch = "JSONPatch"

// ResourceInterpreterContext is the review Karmada POSTs to the webhook
// and the webhook answers with: Request on the way in, Response on the
// way out.
type ResourceInterpreterContext struct {
	metav1.TypeMeta `json:",inline"`
	Request         *ResourceInterpreterRequest  `json:"request,omitempty"`
	Response        *ResourceInterpreterResponse `json:"response,omitempty"`
}

// ResourceInterpreterRequest is one operation to interpret.
type ResourceInterpreterRequest struct {
	UID       types.UID               `json:"uid"`
	Kind      metav1.GroupVersionKind `json:"kind"`
	Name      string                  `json:"name"`
	Namespace string                  `json:"namespace,omitempty"`
	Operation karmada.Operation       `json:"operation"`
	// Object is the object to interpret (the desired one for Retain).
	Object runtime.RawExtension `json:"object,omitempty"`
	// ObservedObject is the member cluster's object (Retain only).
	ObservedObject *runtime.RawExtension `json:"observedObject,omitempty"`
	// DesiredReplicas is the replica count to set (ReviseReplica only).
	// Karmada's JSON name is "replicas".
	DesiredReplicas *int32 `json:"replicas,omitempty"`
	// AggregatedStatus are the member clusters' statuses (AggregateStatus
	// only).
	AggregatedStatus []karmada.AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// ResourceInterpreterResponse is the webhook's answer.
type ResourceInterpreterResponse struct {
	UID        types.UID      `json:"uid"`
	Successful bool           `json:"successful"`
	Status     *RequestStatus `json:"status,omitempty"`
	// Patch is a JSON Patch (RFC 6902) from the request's object to the
	// result (Retain, ReviseReplica, AggregateStatus); base64 on the wire,
	// as every []byte.
	Patch               []byte                             `json:"patch,omitempty"`
	PatchType           *string                            `json:"patchType,omitempty"`
	ReplicaRequirements *karmada.ReplicaRequirements       `json:"replicaRequirements,omitempty"`
	Replicas            *int32                             `json:"replicas,omitempty"`
	Components          []karmada.Component                `json:"components,omitempty"`
	Dependencies        []karmada.DependentObjectReference `json:"dependencies,omitempty"`
	RawStatus           *runtime.RawExtension              `json:"rawStatus,omitempty"`
	Healthy             *bool                              `json:"healthy,omitempty"`
}

// RequestStatus is the reason of a failed interpretation: Code is an HTTP
// status code (400 bad request, 404 no backend, 500 hook failure…).
type RequestStatus struct {
	Message string `json:"message,omitempty"`
	Code    int32  `json:"code,omitempty"`
}
