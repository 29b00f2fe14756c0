package karmada

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kartalua/karta/internal/yamlerr"
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
	docs, err := decodeDocuments(data, source)
	if err != nil {
		return nil, err
	}
	var out []*Customization
	for i, doc := range docs.json {
		where := yamlerr.Where(source, docs.line(i), docs.number(i))
		custs, err := loadDocument(doc, where)
		if err != nil {
			return nil, docs.error(i, err.Error())
		}
		out = append(out, custs...)
	}
	return out, nil
}

// documents are the JSON documents of an input, with where each starts.
type documents struct {
	source string
	json   []json.RawMessage
	// lines are the documents' first lines, when the YAML parser counted
	// the same documents (it always does but for inputs it reads
	// differently from sigs.k8s.io/yaml).
	lines []int
}

// number is the 1-based number of document i, or 0 for a single document
// (errors then name the source alone).
func (d *documents) number(i int) int {
	if len(d.json) > 1 {
		return i + 1
	}
	return 0
}

// line is the first line of document i, 0 when unknown.
func (d *documents) line(i int) int {
	if len(d.lines) != len(d.json) || len(d.json) == 1 {
		return 0 // a single document: the problem is the file's
	}
	return d.lines[i]
}

// error is a problem of document i.
func (d *documents) error(i int, msg string) *LoadError {
	return &LoadError{Source: d.source, Document: d.number(i), Line: d.line(i), Msg: msg}
}

// decodeDocuments splits data into its JSON documents, dropping empty ones.
// The YAML is read as Karmada reads it (sigs.k8s.io/yaml), after a parse
// that reports any syntax error as every reader of karta's inputs does:
// at its line in the input, not in the document.
func decodeDocuments(data []byte, source string) (*documents, error) {
	nodes, err := yamlerr.Parse(data, source)
	var ye *yamlerr.Error
	if errors.As(err, &ye) {
		doc := 0
		if ye.MultiDoc {
			doc = ye.Document
		}
		return nil, &LoadError{Source: source, Line: ye.Line, Document: doc, Msg: ye.Message}
	}
	out := &documents{source: source}
	for _, n := range nodes {
		if yamlerr.Resolve(n).Tag != "!!null" {
			out.lines = append(out.lines, yamlerr.Resolve(n).Line)
		}
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc json.RawMessage
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &LoadError{Source: source, Msg: err.Error()}
		}
		if trimmed := bytes.TrimSpace(doc); len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
			continue
		}
		out.json = append(out.json, doc)
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
			c, err := loadCustomization(item, fmt.Sprintf("%s: items[%d]", where, i))
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
