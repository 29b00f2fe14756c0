package main

import (
	"context"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsclientv1 "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/karta/schemacheck"
)

// schemaSource finds the schema a Karta is checked against: in the --crd
// files, or among the cluster's CRDs (--live).
type schemaSource interface {
	lookup(ctx context.Context, gvk schema.GroupVersionKind) (*schemacheck.Schema, error)
	// where names the source in messages.
	where() string
	// mustDefine says whether a kind the source has no served CRD for is an
	// error: the --crd files were given for the Karta, a cluster was not.
	mustDefine() bool
}

// crdFiles are the CRDs of --crd.
type crdFiles struct{ set *schemacheck.Set }

func (c crdFiles) lookup(_ context.Context, gvk schema.GroupVersionKind) (*schemacheck.Schema, error) {
	return c.set.Lookup(gvk)
}

func (crdFiles) where() string { return "the --crd files" }

func (crdFiles) mustDefine() bool { return true }

// liveCRDs are the cluster's CRDs (--live).
type liveCRDs struct {
	crds   apiextensionsclientv1.CustomResourceDefinitionInterface
	server string
}

func (l liveCRDs) lookup(ctx context.Context, gvk schema.GroupVersionKind) (*schemacheck.Schema, error) {
	return schemacheck.Served(ctx, l.crds, gvk)
}

func (l liveCRDs) where() string { return "the cluster at " + l.server }

func (liveCRDs) mustDefine() bool { return false }

// newCRDClient connects to the CRDs of the cluster the kubeconfig flags
// select. Tests replace it with a fake.
var newCRDClient = func(f *cluster.ConfigFlags) (apiextensionsclientv1.CustomResourceDefinitionInterface, string, error) {
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, "", err
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	return cs.ApiextensionsV1().CustomResourceDefinitions(), cfg.Host, nil
}

// readCRDs reads the --crd files into a schema set; a file that cannot be
// read is a usage error, one that holds no valid CRD exit 1.
func readCRDs(s streams, files []string) (schemaSource, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, file := range files {
		data, source, err := readInput(s, file, "the CRDs")
		if err != nil {
			return nil, err
		}
		got, err := schemacheck.DecodeCRDs(data, source)
		if err != nil {
			fmt.Fprintln(s.err, oneLine(err.Error()))
			return nil, invalid()
		}
		crds = append(crds, got...)
	}
	set, err := schemacheck.NewSet(crds...)
	if err != nil {
		fmt.Fprintln(s.err, oneLine(err.Error()))
		return nil, invalid()
	}
	return crdFiles{set}, nil
}

// schemaProblems checks a Karta against its CRD's schema. A kind the
// --crd files do not define (or do not serve) is an error: they were given
// to check this Karta, and an "ok" would claim a check that never ran. A
// kind the cluster (--live) has no CRD for is a warning: nothing to check
// against, and the CRD may not be installed yet. A version the CRD lacks
// is an error: the Karta describes objects that cannot exist.
func schemaProblems(ctx context.Context, src schemaSource, c *karta.Checked) (karta.Problems, error) {
	root := c.Karta.Spec.StructureDefinition.RootComponent
	if root == nil || root.Kind == nil {
		return nil, nil // validation reports it
	}
	gvk := root.Kind.GVK()
	at := field.NewPath("spec", "structureDefinition", "rootComponent", "kind").String()
	s, err := src.lookup(ctx, gvk)
	switch {
	case (errors.Is(err, schemacheck.ErrNoCRD) || errors.Is(err, schemacheck.ErrNotServed)) && src.mustDefine():
		return karta.Problems{{Severity: karta.SeverityError, Field: at,
			Message: fmt.Sprintf("no served CRD for %s in %s: the Karta cannot be checked against them", describeKind(gvk), src.where())}}, nil
	case errors.Is(err, schemacheck.ErrNoCRD), errors.Is(err, schemacheck.ErrNotServed):
		return karta.Problems{{Severity: karta.SeverityWarning, Field: at,
			Message: fmt.Sprintf("not checked against a schema: no served CRD for %s in %s", describeKind(gvk), src.where())}}, nil
	case errors.Is(err, schemacheck.ErrNoVersion):
		return karta.Problems{{Severity: karta.SeverityError, Field: at, Message: fmt.Sprintf("in %s, %v", src.where(), err)}}, nil
	case err != nil:
		return nil, err
	}
	return schemacheck.Check(c, s, schemacheck.ReferenceSchemas(ctx, c.Karta, src.lookup)...).Karta(), nil
}

func describeKind(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + " " + gvk.Kind
}
