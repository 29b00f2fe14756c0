package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/karta"
)

// The resources the controller watches.
var (
	// KartaResource is run.ai/v1alpha1 kartas, the resource of the Karta
	// CRD (karta crd): cluster-scoped, with a status subresource.
	KartaResource = karta.SchemeGroupVersion.WithResource("kartas")
	// LegacyResource is upstream's optimization.nvidia.com/v1alpha1
	// resourceinterfaces. The Karta CRD does not define it; it is watched
	// when the cluster serves it (see Options.Discovery), with the scope
	// and status subresource discovery reports.
	LegacyResource = karta.LegacySchemeGroupVersion.WithResource("resourceinterfaces")
)

// CRDNotInstalledError is returned by Run when discovery shows that the
// cluster does not serve run.ai/v1alpha1 kartas.
type CRDNotInstalledError struct {
	Resource schema.GroupVersionResource
}

func (e *CRDNotInstalledError) Error() string {
	return fmt.Sprintf("the cluster does not serve %s (is the Karta CRD installed? karta crd | kubectl apply -f -)",
		e.Resource.GroupResource())
}

// Discoverer is the part of client-go's discovery client (or of a cached
// one) that Run uses.
type Discoverer interface {
	ServerResourcesForGroupVersionWithContext(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error)
}

// source is one watched resource.
type source struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	// status is whether the resource has a status subresource. Without
	// one, conditions are not written: a status change would bump the
	// generation, and observedGeneration could never catch up.
	status bool
}

// kartaSource is the Karta CRD's resource, as karta/crd defines it.
var kartaSource = source{gvr: KartaResource, namespaced: false, status: true}

// discoverSources returns the resources to watch: kartas, checked with
// discovery when there is one, and resourceinterfaces when served.
func discoverSources(ctx context.Context, d Discoverer) ([]source, error) {
	if d == nil {
		return []source{kartaSource}, nil
	}
	primary, ok, err := served(ctx, d, KartaResource)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &CRDNotInstalledError{Resource: KartaResource}
	}
	sources := []source{primary}
	legacy, ok, err := served(ctx, d, LegacyResource)
	if err != nil {
		return nil, err
	}
	if ok {
		sources = append(sources, legacy)
	}
	return sources, nil
}

// served asks discovery whether gvr is served, with its scope and whether
// it has a status subresource.
func served(ctx context.Context, d Discoverer, gvr schema.GroupVersionResource) (source, bool, error) {
	list, err := d.ServerResourcesForGroupVersionWithContext(ctx, gvr.GroupVersion().String())
	if apierrors.IsNotFound(err) || (err == nil && list == nil) {
		return source{}, false, nil
	}
	if err != nil {
		return source{}, false, fmt.Errorf("discovering %s: %w", gvr.GroupVersion(), err)
	}
	s := source{gvr: gvr}
	found := false
	for _, r := range list.APIResources {
		switch r.Name {
		case gvr.Resource:
			found, s.namespaced = true, r.Namespaced
		case gvr.Resource + "/status":
			s.status = true
		}
	}
	return s, found, nil
}
