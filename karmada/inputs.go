package karmada

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LoadObjects reads the objects of data (YAML or JSON, one or many
// documents) as Karmada reads them: sigs.k8s.io/yaml, then unstructured
// JSON decoding (integers are int64, other numbers float64; a kind is
// required). Empty documents are skipped.
func LoadObjects(data []byte, source string) ([]*unstructured.Unstructured, error) {
	docs, err := decodeDocuments(data, source)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(docs.json))
	for i, doc := range docs.json {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(doc); err != nil {
			return nil, docs.error(i, err.Error())
		}
		out = append(out, u)
	}
	return out, nil
}

// LoadStatusItems reads a list of AggregatedStatusItem (YAML or JSON), the
// statusItems of an AggregateStatus call.
func LoadStatusItems(data []byte, source string) ([]AggregatedStatusItem, error) {
	docs, err := decodeDocuments(data, source)
	if err != nil {
		return nil, err
	}
	if len(docs.json) != 1 {
		return nil, &LoadError{Source: source, Msg: fmt.Sprintf("want one document holding a list of status items, found %d", len(docs.json))}
	}
	var items []AggregatedStatusItem
	if err := json.Unmarshal(docs.json[0], &items); err != nil {
		return nil, &LoadError{Source: source, Msg: fmt.Sprintf("not a list of status items: %v", err)}
	}
	if items == nil {
		items = []AggregatedStatusItem{}
	}
	return items, nil
}
