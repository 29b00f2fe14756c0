package karmada

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// Load reads ResourceInterpreterCustomization documents (YAML or JSON, one
// or many documents, or a ResourceInterpreterCustomizationList) from data;
// source names data in errors and in each Customization's Source. Empty
// documents are skipped. YAML is read as the Kubernetes API machinery
// reads it (sigs.k8s.io/yaml), as Karmada does, so a customization means
// here what it means to Karmada.
//
// Each document must be a config.karmada.io/v1alpha1
// ResourceInterpreterCustomization with a name and a target apiVersion and
// kind. Scripts are compiled by NewInterpreter, not here. Errors are
// *LoadError.
func Load(data []byte, source string) ([]*Customization, error) {
	docs, err := decodeDocuments(data)
	if err != nil {
		return nil, &LoadError{Source: source, Msg: err.Error()}
	}
	var out []*Customization
	for i, doc := range docs {
		where := source
		if len(docs) > 1 {
			where = fmt.Sprintf("%s (document %d)", source, i+1)
		}
		custs, err := loadDocument(doc, where)
		if err != nil {
			return nil, &LoadError{Source: source, Document: docNumber(i, len(docs)), Msg: err.Error()}
		}
		out = append(out, custs...)
	}
	return out, nil
}

// docNumber is the 1-based document number, or 0 for a single document
// (errors then name the source alone).
func docNumber(i, n int) int {
	if n > 1 {
		return i + 1
	}
	return 0
}

// decodeDocuments splits data into its JSON documents, dropping empty ones.
func decodeDocuments(data []byte) ([]json.RawMessage, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs []json.RawMessage
	for {
		var doc json.RawMessage
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if trimmed := bytes.TrimSpace(doc); len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
			continue
		}
		docs = append(docs, doc)
	}
}

// loadDocument reads one document: a customization, or a list of them.
func loadDocument(doc json.RawMessage, where string) ([]*Customization, error) {
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return nil, fmt.Errorf("not a %s: %v", CustomizationKind, err)
	}
	if head.APIVersion != CustomizationAPIVersion || (head.Kind != CustomizationKind && head.Kind != customizationListKind) {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want %s %s", head.APIVersion, head.Kind, CustomizationAPIVersion, CustomizationKind)
	}
	if head.Kind == customizationListKind {
		var out []*Customization
		for i, item := range head.Items {
			c, err := loadCustomization(item, fmt.Sprintf("%s items[%d]", where, i))
			if err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
			out = append(out, c)
		}
		return out, nil
	}
	c, err := loadCustomization(doc, where)
	if err != nil {
		return nil, err
	}
	return []*Customization{c}, nil
}

func loadCustomization(doc json.RawMessage, where string) (*Customization, error) {
	c := &Customization{}
	if err := json.Unmarshal(doc, c); err != nil {
		return nil, fmt.Errorf("invalid %s: %v", CustomizationKind, err)
	}
	if c.Kind == "" && c.APIVersion == "" { // a list item may leave them out
		c.APIVersion, c.Kind = CustomizationAPIVersion, CustomizationKind
	}
	if c.APIVersion != CustomizationAPIVersion || c.Kind != CustomizationKind {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want %s %s", c.APIVersion, c.Kind, CustomizationAPIVersion, CustomizationKind)
	}
	var missing []string
	if c.Name == "" {
		missing = append(missing, "metadata.name")
	}
	if c.Spec.Target.APIVersion == "" {
		missing = append(missing, "spec.target.apiVersion")
	}
	if c.Spec.Target.Kind == "" {
		missing = append(missing, "spec.target.kind")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	c.Source = where
	return c, nil
}
