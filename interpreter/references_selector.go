package interpreter

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// labelSelector turns a list reference's labelSelector output (a
// metav1.LabelSelector as JSON: matchLabels and matchExpressions) into a
// selector. An empty selector ({}) selects everything, as in the API.
func labelSelector(v any) (labels.Selector, error) {
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("%s, not a label selector object", describe(v))
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var ls metav1.LabelSelector
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ls); err != nil {
		return nil, fmt.Errorf("not a label selector: %w", err)
	}
	return metav1.LabelSelectorAsSelector(&ls)
}
