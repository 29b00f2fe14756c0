package schemacheck

import (
	"context"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientv1 "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Served returns the schema of gvk from the CRDs a cluster holds (its
// apiextensions.k8s.io/v1 client), or an error wrapping ErrNoCRD when no
// CRD defines the kind, ErrNoVersion when its CRD lacks the version, and
// ErrNotServed when the version exists but is not served.
func Served(ctx context.Context, crds apiextensionsclientv1.CustomResourceDefinitionInterface, gvk schema.GroupVersionKind) (*Schema, error) {
	list, err := crds.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing CustomResourceDefinitions: %w", err)
	}
	var match []*apiextensionsv1.CustomResourceDefinition
	for i := range list.Items {
		crd := &list.Items[i]
		if crd.Spec.Group == gvk.Group && crd.Spec.Names.Kind == gvk.Kind {
			match = append(match, crd)
		}
	}
	return servedSchema(gvk, match...)
}

// ServedIn returns the schema of gvk from one CRD, as Served does.
func ServedIn(crd *apiextensionsv1.CustomResourceDefinition, gvk schema.GroupVersionKind) (*Schema, error) {
	if crd == nil {
		return nil, fmt.Errorf("%w %s: nil CRD", ErrNoCRD, gvk.GroupKind())
	}
	if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind {
		return nil, fmt.Errorf("%w %s: CRD %s defines %s", ErrNoCRD, gvk.GroupKind(), crd.Name,
			schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind})
	}
	return servedSchema(gvk, crd)
}

func servedSchema(gvk schema.GroupVersionKind, crds ...*apiextensionsv1.CustomResourceDefinition) (*Schema, error) {
	set, err := NewSet(crds...)
	if err != nil {
		return nil, err
	}
	s, err := set.Lookup(gvk)
	if err != nil {
		return nil, err
	}
	if !s.Served {
		return nil, fmt.Errorf("CRD %s: %w: %s", s.CRD, ErrNotServed, gvk.Version)
	}
	return s, nil
}

// ErrNotServed is a CRD version that exists but is not served.
var ErrNotServed = errors.New("the version is not served")
