package karmada

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kartalua/karta/internal/yamlerr"
)

// TestCase is one document of a Karmada test file
// (testdata/<operation>-test.yaml beside a customizations.yaml), with the
// fields of Karmada's IndividualTest harness type. Fields match
// case-insensitively, as encoding/json matches them there.
type TestCase struct {
	Name          string                     `json:"name"`
	Description   string                     `json:"description,omitempty"`
	DesiredObj    *unstructured.Unstructured `json:"desiredObj,omitempty"`
	ObservedObj   *unstructured.Unstructured `json:"observedObj,omitempty"`
	StatusItems   []AggregatedStatusItem     `json:"statusItems,omitempty"`
	InputReplicas int64                      `json:"inputReplicas,omitempty"`
	Operation     string                     `json:"operation"`
	// Output holds the expected results by key (replica, requires,
	// components, revised, retained, aggregatedStatus, status, healthy,
	// dependencies), as decoded from YAML: numbers are float64.
	Output map[string]any `json:"output,omitempty"`

	// File is the test file the case came from (not part of the format).
	File string `json:"-"`
}

// LoadTestCases reads every document of a test file. Documents that are
// empty are skipped (Karmada's harness would run them as nameless cases
// and fail them).
func LoadTestCases(path string) ([]*TestCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Syntax errors are reported as every reader of karta's inputs
	// reports them, at their line in the file.
	nodes, err := yamlerr.Parse(data, path)
	if err != nil {
		return nil, err
	}
	// Each document is decoded straight into the case, as Karmada's
	// harness does: sigs.k8s.io/yaml then turns a YAML scalar such as 123
	// into the string a string field wants.
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var cases []*TestCase
	for {
		tc := &TestCase{}
		err := dec.Decode(tc)
		if errors.Is(err, io.EOF) {
			return cases, nil
		}
		if err != nil {
			// Every document before this one that held something is a
			// case: this is document len(cases)+1, named among several.
			where := path
			if doc := len(cases) + 1; len(nodes) > 1 && doc <= len(nodes) {
				where = yamlerr.Where(path, yamlerr.Resolve(nodes[doc-1]).Line, doc)
			}
			return nil, fmt.Errorf("%s: %s", where, yamlerr.Plain(err.Error()))
		}
		if tc.isEmpty() {
			continue
		}
		tc.File = path
		cases = append(cases, tc)
	}
}

// isEmpty reports a document that held nothing (only comments, or a
// trailing ---).
func (tc *TestCase) isEmpty() bool {
	return tc.Name == "" && tc.Description == "" && tc.Operation == "" && tc.DesiredObj == nil &&
		tc.ObservedObj == nil && tc.StatusItems == nil && tc.InputReplicas == 0 && tc.Output == nil
}

// object is the object a one-object operation runs on: desiredObj or
// observedObj, exactly one of them (Karmada's getObjectOrError).
func (tc *TestCase) object() (*unstructured.Unstructured, error) {
	switch {
	case tc.DesiredObj == nil && tc.ObservedObj == nil:
		return nil, fmt.Errorf("desired-file, observed-file options are not set")
	case tc.DesiredObj != nil && tc.ObservedObj != nil:
		return nil, fmt.Errorf("you can not specify both desired-file and observed-file options")
	case tc.DesiredObj != nil:
		return tc.DesiredObj, nil
	}
	return tc.ObservedObj, nil
}
