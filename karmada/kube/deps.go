package kube

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// This file computes what kube.getPodDependencies returns: Karmada's
// helper.GetDependenciesFromPodTemplate over a pod made from the template
// and the namespace, with the ConfigMap and Secret visitors Karmada lifted
// from Kubernetes (pkg/api/v1/pod: VisitPodConfigmapNames and
// VisitPodSecretNames).

// kubeDependency has the JSON form of Karmada's
// configv1alpha1.DependentObjectReference as the helper fills it.
type kubeDependency struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
}

// podDependencies lists the ConfigMaps, then the Secrets, then the
// ServiceAccount, then the PersistentVolumeClaims the pod spec refers to,
// each once, all in namespace. Karmada collects each kind in a set and
// lists it in Go's random map order; here each kind is sorted by name, one
// of Karmada's orders. No reference at all is nil, as in Karmada (which
// then hands Lua nil rather than an empty table).
func podDependencies(spec *corev1.PodSpec, namespace string) []kubeDependency {
	var deps []kubeDependency
	add := func(kind string, names map[string]bool) {
		sorted := make([]string, 0, len(names))
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		for _, n := range sorted {
			deps = append(deps, kubeDependency{APIVersion: "v1", Kind: kind, Namespace: namespace, Name: n})
		}
	}
	add("ConfigMap", podConfigMapNames(spec))
	add("Secret", podSecretNames(spec))
	sa := map[string]bool{}
	if spec.ServiceAccountName != "" && spec.ServiceAccountName != "default" {
		sa[spec.ServiceAccountName] = true
	}
	add("ServiceAccount", sa)
	pvc := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "" {
			pvc[v.PersistentVolumeClaim.ClaimName] = true
		}
	}
	add("PersistentVolumeClaim", pvc)
	return deps
}

// allContainers visits init, regular and ephemeral containers, as
// VisitContainers with AllContainers does.
func allContainers(spec *corev1.PodSpec, visit func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar)) {
	for _, c := range spec.InitContainers {
		visit(c.EnvFrom, c.Env)
	}
	for _, c := range spec.Containers {
		visit(c.EnvFrom, c.Env)
	}
	for _, c := range spec.EphemeralContainers {
		visit(c.EnvFrom, c.Env)
	}
}

// podSecretNames is VisitPodSecretNames: image pull secrets, env and
// envFrom of every container, and the secret references of volumes. Only
// the first source a volume sets is looked at (Kubernetes' switch), and
// empty names are skipped.
func podSecretNames(spec *corev1.PodSpec) map[string]bool {
	names := map[string]bool{}
	visit := func(name string) {
		if name != "" {
			names[name] = true
		}
	}
	for _, ref := range spec.ImagePullSecrets {
		visit(ref.Name)
	}
	allContainers(spec, func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				visit(e.SecretRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				visit(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	})
	for i := range spec.Volumes {
		src := &spec.Volumes[i].VolumeSource
		switch {
		case src.AzureFile != nil:
			visit(src.AzureFile.SecretName)
		case src.CephFS != nil:
			if src.CephFS.SecretRef != nil {
				visit(src.CephFS.SecretRef.Name)
			}
		case src.Cinder != nil:
			if src.Cinder.SecretRef != nil {
				visit(src.Cinder.SecretRef.Name)
			}
		case src.FlexVolume != nil:
			if src.FlexVolume.SecretRef != nil {
				visit(src.FlexVolume.SecretRef.Name)
			}
		case src.Projected != nil:
			for _, s := range src.Projected.Sources {
				if s.Secret != nil {
					visit(s.Secret.Name)
				}
			}
		case src.RBD != nil:
			if src.RBD.SecretRef != nil {
				visit(src.RBD.SecretRef.Name)
			}
		case src.Secret != nil:
			visit(src.Secret.SecretName)
		case src.ScaleIO != nil:
			if src.ScaleIO.SecretRef != nil {
				visit(src.ScaleIO.SecretRef.Name)
			}
		case src.ISCSI != nil:
			if src.ISCSI.SecretRef != nil {
				visit(src.ISCSI.SecretRef.Name)
			}
		case src.StorageOS != nil:
			if src.StorageOS.SecretRef != nil {
				visit(src.StorageOS.SecretRef.Name)
			}
		case src.CSI != nil:
			if src.CSI.NodePublishSecretRef != nil {
				visit(src.CSI.NodePublishSecretRef.Name)
			}
		}
	}
	return names
}

// podConfigMapNames is VisitPodConfigmapNames: env and envFrom of every
// container, projected ConfigMap sources and ConfigMap volumes.
func podConfigMapNames(spec *corev1.PodSpec) map[string]bool {
	names := map[string]bool{}
	visit := func(name string) {
		if name != "" {
			names[name] = true
		}
	}
	allContainers(spec, func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.ConfigMapRef != nil {
				visit(e.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				visit(e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for i := range spec.Volumes {
		src := &spec.Volumes[i].VolumeSource
		switch {
		case src.Projected != nil:
			for _, s := range src.Projected.Sources {
				if s.ConfigMap != nil {
					visit(s.ConfigMap.Name)
				}
			}
		case src.ConfigMap != nil:
			visit(src.ConfigMap.Name)
		}
	}
	return names
}
