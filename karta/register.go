package karta

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API groups, version and kinds a Karta document may use.
const (
	// Group is the primary API group.
	Group = "run.ai"
	// LegacyGroup is the group of upstream's ResourceInterface spelling.
	LegacyGroup = "optimization.nvidia.com"
	// Version is the only version of both groups.
	Version = "v1alpha1"
	// KindKarta is the primary kind.
	KindKarta = "Karta"
	// KindResourceInterface is the legacy kind, with the same schema.
	KindResourceInterface = "ResourceInterface"
)

var (
	// SchemeGroupVersion is the primary group version (run.ai/v1alpha1).
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}
	// LegacySchemeGroupVersion is optimization.nvidia.com/v1alpha1.
	LegacySchemeGroupVersion = schema.GroupVersion{Group: LegacyGroup, Version: Version}

	// SchemeBuilder registers the Karta types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the Karta types (both spellings) to a scheme, so that
	// client-go's typed and dynamic machinery can decode them.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns a GroupResource of the primary group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Karta{}, &KartaList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	// The legacy spelling decodes into the same Go type.
	scheme.AddKnownTypeWithName(LegacySchemeGroupVersion.WithKind(KindResourceInterface), &Karta{})
	scheme.AddKnownTypeWithName(LegacySchemeGroupVersion.WithKind(KindResourceInterface+"List"), &KartaList{})
	metav1.AddToGroupVersion(scheme, LegacySchemeGroupVersion)
	return nil
}

// IsKartaGVK reports whether apiVersion/kind name a Karta document. Mixed
// pairs of the two groups and kinds, seen in upstream examples, are
// accepted.
func IsKartaGVK(gvk schema.GroupVersionKind) bool {
	groupOK := gvk.Group == Group || gvk.Group == LegacyGroup
	kindOK := gvk.Kind == KindKarta || gvk.Kind == KindResourceInterface
	return groupOK && gvk.Version == Version && kindOK
}
