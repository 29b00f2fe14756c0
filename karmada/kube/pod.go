package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// This file computes what kube.accuratePodRequirements returns: Karmada's
// helper.GenerateReplicaRequirements with the ResourceQuotaEstimate
// feature off (so no namespace and no priorityClassName), built on
// Karmada's util.Resource arithmetic.

// kubeReplicaRequirements has the JSON form of Karmada's
// workv1alpha2.ReplicaRequirements (the fields the helper fills).
type kubeReplicaRequirements struct {
	NodeClaim       *kubeNodeClaim      `json:"nodeClaim,omitempty"`
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
}

// kubeNodeClaim has the JSON form of Karmada's workv1alpha2.NodeClaim.
type kubeNodeClaim struct {
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
	NodeSelector     map[string]string    `json:"nodeSelector,omitempty"`
	Tolerations      []corev1.Toleration  `json:"tolerations,omitempty"`
}

// podRequirements is GenerateReplicaRequirements: nil when the pod claims
// no node and requests nothing.
func podRequirements(tmpl *corev1.PodTemplateSpec) *kubeReplicaRequirements {
	claim := podNodeClaim(&tmpl.Spec)
	var r podResource
	r.addPodTemplateRequest(&tmpl.Spec)
	request := r.resourceList()
	if claim == nil && request == nil {
		return nil
	}
	return &kubeReplicaRequirements{NodeClaim: claim, ResourceRequest: request}
}

// podNodeClaim is GenerateNodeClaimByPodSpec: the node selector, the
// tolerations and the required node affinity, or nil when all are unset.
func podNodeClaim(spec *corev1.PodSpec) *kubeNodeClaim {
	claim := &kubeNodeClaim{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		claim.HardNodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if claim.NodeSelector == nil && claim.HardNodeAffinity == nil && len(claim.Tolerations) == 0 {
		return nil
	}
	return claim
}

// podResource is Karmada's util.Resource: CPU in millicores, the rest in
// units, as int64 (Value and MilliValue round up).
type podResource struct {
	milliCPU, memory, ephemeralStorage, pods int64
	scalar                                   map[corev1.ResourceName]int64
}

// addPodTemplateRequest is Resource.AddPodTemplateRequest: each container's
// requests default to its limits (key by key), then AddPodRequest.
func (r *podResource) addPodTemplateRequest(spec *corev1.PodSpec) {
	spec = spec.DeepCopy()
	defaultRequests := func(cs []corev1.Container) {
		for i := range cs {
			res := &cs[i].Resources
			if res.Limits == nil {
				continue
			}
			if res.Requests == nil {
				res.Requests = corev1.ResourceList{}
			}
			for name, q := range res.Limits {
				if _, ok := res.Requests[name]; !ok {
					res.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	defaultRequests(spec.Containers)
	defaultRequests(spec.InitContainers)
	r.addPodRequest(spec)
}

// addPodRequest is Resource.AddPodRequest: the sum of the containers'
// requests, raised to each init container's request (resource by
// resource), plus the pod overhead.
func (r *podResource) addPodRequest(spec *corev1.PodSpec) {
	for _, c := range spec.Containers {
		r.add(c.Resources.Requests)
	}
	for _, c := range spec.InitContainers {
		r.setMax(c.Resources.Requests)
	}
	if spec.Overhead != nil {
		r.add(spec.Overhead)
	}
}

func (r *podResource) add(rl corev1.ResourceList) {
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.milliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.memory += q.Value()
		case corev1.ResourcePods:
			r.pods += q.Value()
		case corev1.ResourceEphemeralStorage:
			r.ephemeralStorage += q.Value()
		default:
			if isScalarResourceName(name) {
				r.setScalar(name, r.scalar[name]+q.Value())
			}
		}
	}
}

func (r *podResource) setMax(rl corev1.ResourceList) {
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.milliCPU = max(r.milliCPU, q.MilliValue())
		case corev1.ResourceMemory:
			r.memory = max(r.memory, q.Value())
		case corev1.ResourceEphemeralStorage:
			r.ephemeralStorage = max(r.ephemeralStorage, q.Value())
		case corev1.ResourcePods:
			r.pods = max(r.pods, q.Value())
		default:
			if isScalarResourceName(name) {
				if v := q.Value(); v > r.scalar[name] {
					r.setScalar(name, v)
				}
			}
		}
	}
}

func (r *podResource) setScalar(name corev1.ResourceName, v int64) {
	if r.scalar == nil {
		r.scalar = map[corev1.ResourceName]int64{}
	}
	r.scalar[name] = v
}

// resourceList is Resource.ResourceList: the positive amounts, CPU in
// DecimalSI millicores, memory, ephemeral storage and huge pages in
// BinarySI, the rest DecimalSI; nil when nothing is positive.
func (r *podResource) resourceList() corev1.ResourceList {
	out := corev1.ResourceList{}
	if r.milliCPU > 0 {
		out[corev1.ResourceCPU] = *resource.NewMilliQuantity(r.milliCPU, resource.DecimalSI)
	}
	if r.memory > 0 {
		out[corev1.ResourceMemory] = *resource.NewQuantity(r.memory, resource.BinarySI)
	}
	if r.ephemeralStorage > 0 {
		out[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(r.ephemeralStorage, resource.BinarySI)
	}
	if r.pods > 0 {
		out[corev1.ResourcePods] = *resource.NewQuantity(r.pods, resource.DecimalSI)
	}
	for name, v := range r.scalar {
		if v <= 0 {
			continue
		}
		format := resource.DecimalSI
		if isHugePageResourceName(name) {
			format = resource.BinarySI
		}
		out[name] = *resource.NewQuantity(v, format)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// The resource name classes of Karmada's lifted corev1 helpers.

func isScalarResourceName(name corev1.ResourceName) bool {
	return isExtendedResourceName(name) || isHugePageResourceName(name) ||
		isPrefixedNativeResource(name) || strings.HasPrefix(string(name), corev1.ResourceAttachableVolumesPrefix)
}

func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	quotaName := fmt.Sprintf("%s%s", corev1.DefaultResourceRequestsPrefix, name)
	return len(validation.IsQualifiedName(quotaName)) == 0
}

func isPrefixedNativeResource(name corev1.ResourceName) bool {
	return strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || isPrefixedNativeResource(name)
}

func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}
