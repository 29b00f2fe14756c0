package testenv

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"path"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsclientv1 "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	kartacrd "github.com/kartalua/karta/karta/crd"
)

// crdFiles are the CRDs of the workload kinds the built-in Kartas describe
// and of the gang schedulers' PodGroups the gang output writes: the
// published ones where their projects' modules are served here (Volcano's
// and scheduler-plugins' PodGroups; each file says where it comes from),
// else stand-ins with the real group, versions, names and scope, a status
// subresource, and a schema that keeps any spec and status.
//
//go:embed crds/*.yaml
var crdFiles embed.FS

// crdTimeout bounds installing all CRDs, including the wait until the API
// server serves them. Generous: the shared machine is often loaded.
const crdTimeout = 2 * time.Minute

// errNamesRejected reports a CRD whose names clash with another resource.
var errNamesRejected = errors.New("CRD names not accepted")

// loadCRDs returns the Karta CRD followed by the workload CRDs.
func loadCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	karta, err := decodeCRD(kartacrd.Manifest, "karta/crd/run.ai_kartas.yaml")
	if err != nil {
		return nil, err
	}
	out := []*apiextensionsv1.CustomResourceDefinition{karta}
	entries, err := crdFiles.ReadDir("crds")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := path.Join("crds", e.Name())
		data, err := crdFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		crd, err := decodeCRD(data, name)
		if err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
	return out, nil
}

func decodeCRD(data []byte, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", name, err)
	}
	if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
		return nil, fmt.Errorf("%s: not a named CustomResourceDefinition", name)
	}
	return crd, nil
}

// InstallCRDs creates or updates the Karta CRD, the CRDs of every
// built-in workload kind and the gang schedulers' PodGroups, then waits until each is Established and listed
// by discovery, so a test can use them right away. Idempotent, and safe to
// call from tests of several packages running at once against one cluster.
func InstallCRDs(t testing.TB, cfg *rest.Config) {
	t.Helper()
	crds, err := loadCRDs()
	if err != nil {
		t.Fatalf("loading CRDs: %v", err)
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("apiextensions client: %v", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatalf("discovery client: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), crdTimeout)
	defer cancel()

	client := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		if err := applyCRD(ctx, client, crd); err != nil {
			t.Fatalf("installing CRD %s: %v", crd.Name, err)
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, client, crd.Name); err != nil {
			t.Fatalf("CRD %s: %v", crd.Name, err)
		}
		if err := waitDiscoverable(ctx, disc, crd); err != nil {
			t.Fatalf("CRD %s: %v", crd.Name, err)
		}
	}
}

// applyCRD creates the CRD or replaces the spec of the existing one. A
// concurrent create or update by another test process shows up as
// AlreadyExists or Conflict and is retried against the fresh object.
func applyCRD(ctx context.Context, client apiextensionsclientv1.CustomResourceDefinitionInterface, want *apiextensionsv1.CustomResourceDefinition) error {
	return retry.OnError(retry.DefaultBackoff, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		got, err := client.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = client.Create(ctx, want.DeepCopy(), metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		// The server re-applies its defaults to the new spec, so an
		// unchanged CRD makes a no-op update (no new generation).
		got.Spec = *want.Spec.DeepCopy()
		_, err = client.Update(ctx, got, metav1.UpdateOptions{})
		return err
	})
}

// waitEstablished waits for the Established condition; NamesAccepted=False
// fails at once since it never heals by itself.
func waitEstablished(ctx context.Context, client apiextensionsclientv1.CustomResourceDefinitionInterface, name string) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		crd, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		for _, c := range crd.Status.Conditions {
			switch {
			case c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse:
				return false, fmt.Errorf("%w: %s", errNamesRejected, c.Message)
			case c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue:
				return true, nil
			}
		}
		last = errors.New("not Established yet")
		return false, nil
	})
	if err != nil && last != nil && !errors.Is(err, errNamesRejected) {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return err
}

// waitDiscoverable waits until discovery lists the resource in every served
// version: clients (REST mappers, informers) find kinds through discovery,
// which lags the Established condition slightly.
func waitDiscoverable(ctx context.Context, disc discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := crd.Spec.Group + "/" + v.Name
		var last error
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
			list, err := disc.ServerResourcesForGroupVersion(gv)
			if err != nil {
				last = err
				return false, nil
			}
			for _, r := range list.APIResources {
				if r.Name == crd.Spec.Names.Plural {
					return true, nil
				}
			}
			last = fmt.Errorf("%s not listed in %s", crd.Spec.Names.Plural, gv)
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("not discoverable in %s: %w (last: %v)", gv, err, last)
		}
	}
	return nil
}
