// Package schemacheck checks a Karta against the openAPIV3Schema of the
// custom resource it describes: every jq path of the Karta that reads the
// workload object must exist in the schema of the version the Karta names
// (or enter x-kubernetes-preserve-unknown-fields), step into arrays only
// where the schema has arrays, and yield values of the type its role needs
// (replicas: integers; a pod template: an object with spec.containers;
// conditions: objects with the named type and status fields; …). A path the
// schema refutes is an error; one it cannot decide is a warning.
//
// The checker walks the syntax trees that karta.Check parsed (it never
// parses an expression again) over the structural schema that
// apiextensions-apiserver builds from the CRD, as the API server itself
// does.
//
//	crds, _ := schemacheck.DecodeCRDs(data, "crds.yaml")
//	set, _ := schemacheck.NewSet(crds...)
//	s, _ := set.Lookup(gvk)
//	problems := schemacheck.Check(checked, s)
package schemacheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/internal/yamlerr"
)

// Schema is the structural openAPIV3Schema of one version of a CRD.
type Schema struct {
	// GVK is the kind and version the schema describes.
	GVK schema.GroupVersionKind
	// CRD is the CRD's name (plural.group).
	CRD string
	// Served is the version's served flag.
	Served bool
	// Internal is the schema in apiextensions' internal form, as the API
	// server's validator takes it.
	Internal *apiextensions.JSONSchemaProps
	// Structural is the schema as the API server prunes and defaults with.
	Structural *structuralschema.Structural
}

// errNilCRD is FromCRD's (and NewSet's) error for a nil CRD.
var errNilCRD = errors.New("nil CRD")

// FromCRD returns the schema of each version of crd that has one. A version
// whose schema is not structural is an error (the API server refuses such
// a v1 CRD too).
func FromCRD(crd *apiextensionsv1.CustomResourceDefinition) ([]*Schema, error) {
	if crd == nil {
		return nil, errNilCRD
	}
	var out []*Schema
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		props := v.Schema.OpenAPIV3Schema
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
			return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, v.Name, err)
		}
		s, err := structuralschema.NewStructural(internal)
		if err != nil {
			return nil, fmt.Errorf("CRD %s version %s: the schema is not structural: %w", crd.Name, v.Name, err)
		}
		out = append(out, &Schema{
			GVK:        schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind},
			CRD:        crd.Name,
			Served:     v.Served,
			Internal:   internal,
			Structural: s,
		})
	}
	return out, nil
}

// Set holds the schemas of several CRDs by kind and version.
type Set struct {
	byGVK  map[schema.GroupVersionKind]*Schema
	byKind map[schema.GroupKind][]string // the versions of each kind
	crd    map[schema.GroupKind]string   // the CRD of each kind
}

// NewSet indexes the schemas of the CRDs.
func NewSet(crds ...*apiextensionsv1.CustomResourceDefinition) (*Set, error) {
	s := &Set{byGVK: map[schema.GroupVersionKind]*Schema{}, byKind: map[schema.GroupKind][]string{}, crd: map[schema.GroupKind]string{}}
	for _, crd := range crds {
		schemas, err := FromCRD(crd)
		if err != nil {
			return nil, err
		}
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		if _, seen := s.byKind[gk]; !seen {
			s.byKind[gk] = []string{}
		}
		s.crd[gk] = crd.Name
		for _, sc := range schemas {
			s.byGVK[sc.GVK] = sc
			s.byKind[gk] = append(s.byKind[gk], sc.GVK.Version)
		}
	}
	return s, nil
}

// ErrNoCRD is a kind no CRD of the set defines.
var ErrNoCRD = errors.New("no CRD defines the kind")

// ErrNoVersion is a version the kind's CRD does not have (or has without a
// schema).
var ErrNoVersion = errors.New("no such version")

// Lookup returns the schema of gvk, or an error wrapping ErrNoCRD or
// ErrNoVersion.
func (s *Set) Lookup(gvk schema.GroupVersionKind) (*Schema, error) {
	if sc, ok := s.byGVK[gvk]; ok {
		return sc, nil
	}
	versions, ok := s.byKind[gvk.GroupKind()]
	if !ok {
		return nil, fmt.Errorf("%w %s", ErrNoCRD, gvk.GroupKind())
	}
	sorted := append([]string(nil), versions...)
	sort.Strings(sorted)
	return nil, fmt.Errorf("CRD %s: %w %s (it has: %s)", s.crd[gvk.GroupKind()], ErrNoVersion, gvk.Version, strings.Join(sorted, ", "))
}

// DecodeCRDs reads CustomResourceDefinitions (apiextensions.k8s.io/v1) from
// YAML or JSON: any number of documents, and Lists of them. Other documents
// are an error naming the source and the document, and so are unknown
// fields (strict, as kubectl apply --validate=strict).
func DecodeCRDs(data []byte, source string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	// Syntax errors are reported as every reader of karta's inputs
	// reports them, at their line in the input.
	nodes, err := yamlerr.Parse(data, source)
	if err != nil {
		return nil, err
	}
	// where names document i (1-based): the source alone when it holds
	// one, else its first line and number.
	where := func(i int) string {
		if len(nodes) <= 1 {
			return source
		}
		line := 0
		if i <= len(nodes) {
			line = yamlerr.Resolve(nodes[i-1]).Line
		}
		return yamlerr.Where(source, line, i)
	}
	fail := func(i int, err error) error {
		return fmt.Errorf("%s: %s", where(i), yamlerr.Plain(err.Error()))
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*apiextensionsv1.CustomResourceDefinition
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fail(i, err)
		}
		var whole any
		if err := yaml.Unmarshal(doc, &whole); err != nil {
			return nil, fail(i, err)
		}
		if whole == nil { // empty, or only comments
			i--
			continue
		}
		var head struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fail(i, err)
		}
		switch {
		case head.Kind == "CustomResourceDefinition" && head.APIVersion == "apiextensions.k8s.io/v1":
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(doc, crd); err != nil {
				return nil, fail(i, err)
			}
			out = append(out, crd)
		case strings.HasSuffix(head.Kind, "List"):
			for j, item := range head.Items {
				crds, err := DecodeCRDs(item, fmt.Sprintf("%s: item %d", where(i), j+1))
				if err != nil {
					return nil, err
				}
				out = append(out, crds...)
			}
		default:
			return nil, fmt.Errorf("%s: not an apiextensions.k8s.io/v1 CustomResourceDefinition: found apiVersion %q and kind %q",
				where(i), head.APIVersion, head.Kind)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no CustomResourceDefinition found", source)
	}
	return out, nil
}
