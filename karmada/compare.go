package karmada

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

// This file compares a result with a test's expected output the way
// Karmada's third-party harness (thirdparty_test.go deepEqual) does.

// excludePlaceholder is the expected value that means "do not compare
// this field" (it holds a time stamp).
const excludePlaceholder = "{{EXCLUDE}}"

// semantic is the harness's checker: reflect-style deep equality where
// quantities compare by value (1 equals 1000m), and, as apimachinery's
// Equalities do, a nil and an empty slice or map are equal.
var semantic = conversion.EqualitiesOrDie(func(a, b resource.Quantity) bool { return a.Equal(b) })

// comparison is the outcome of comparing one output key, with both sides
// rendered (normalized as compared) for a diff.
type comparison struct {
	equal            bool
	expected, actual string
}

// compareOutput compares actual, a result of type *ReplicaRequirements,
// []DependentObjectReference, []Component, *unstructured.Unstructured or
// any other JSON-marshalable value, with expected, the test's value:
//
//   - requirements, dependencies and components: expected is unmarshalled
//     into the same type; dependencies and components are sorted first
//     (scripts may list them in pairs() order); then semantic equality;
//   - objects: fields whose expected value is {{EXCLUDE}} are removed from
//     both sides (by path, array indexes included), then semantic
//     equality;
//   - anything else (replica, healthy, status): the JSON texts must be
//     identical.
func compareOutput(expected, actual any) (comparison, error) {
	expectedJSON, err := k8sjson.Marshal(expected)
	if err != nil {
		return comparison{}, fmt.Errorf("failed to marshal expected value: %w", err)
	}
	switch act := actual.(type) {
	case *ReplicaRequirements:
		var exp ReplicaRequirements
		if err := k8sjson.Unmarshal(expectedJSON, &exp); err != nil {
			return comparison{}, fmt.Errorf("failed to unmarshal expected JSON into ReplicaRequirements: %w", err)
		}
		return rendered(semantic.DeepEqual(&exp, act), &exp, act), nil
	case []DependentObjectReference:
		var exp []DependentObjectReference
		if err := k8sjson.Unmarshal(expectedJSON, &exp); err != nil {
			return comparison{}, fmt.Errorf("failed to unmarshal expected JSON into []DependentObjectReference: %w", err)
		}
		act = append([]DependentObjectReference(nil), act...)
		SortDependencies(exp)
		SortDependencies(act)
		return rendered(semantic.DeepEqual(exp, act), exp, act), nil
	case []Component:
		var exp []Component
		if err := k8sjson.Unmarshal(expectedJSON, &exp); err != nil {
			return comparison{}, fmt.Errorf("failed to unmarshal expected JSON into []Component: %w", err)
		}
		act = append([]Component(nil), act...)
		sortComponents(exp)
		sortComponents(act)
		return rendered(semantic.DeepEqual(exp, act), exp, act), nil
	case *unstructured.Unstructured:
		var exp unstructured.Unstructured
		if err := k8sjson.Unmarshal(expectedJSON, &exp); err != nil {
			return comparison{}, fmt.Errorf("failed to unmarshal expected JSON into Unstructured: %w", err)
		}
		excluded := map[string]bool{}
		expObj := excludeFields(exp.Object, nil, excluded, true).(map[string]any)
		actObj := excludeFields(act.Object, nil, excluded, false).(map[string]any)
		equal := semantic.DeepEqual(&unstructured.Unstructured{Object: expObj}, &unstructured.Unstructured{Object: actObj})
		return rendered(equal, expObj, actObj), nil
	}
	actualJSON, err := k8sjson.Marshal(actual)
	if err != nil {
		return comparison{}, fmt.Errorf("failed to marshal actual value: %w", err)
	}
	return comparison{equal: bytes.Equal(expectedJSON, actualJSON), expected: indentJSON(expectedJSON), actual: indentJSON(actualJSON)}, nil
}

func rendered(equal bool, expected, actual any) comparison {
	return comparison{equal: equal, expected: renderJSON(expected), actual: renderJSON(actual)}
}

// renderJSON prints v as indented JSON for a diff.
func renderJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func indentJSON(b []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return string(b)
	}
	return buf.String()
}

// sortComponents sorts components by name, as the harness does.
func sortComponents(cs []Component) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
}

// excludeFields copies v without the excluded fields. Collecting (the
// expected side), it records the path of every field whose value is
// excludePlaceholder and leaves it out; otherwise it leaves out the fields
// at the recorded paths. Paths join keys and array indexes with dots, as
// the harness's processObjectWithExclusion does.
func excludeFields(v any, path []string, excluded map[string]bool, collecting bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p := append(path[:len(path):len(path)], k)
			key := strings.Join(p, ".")
			if collecting {
				if s, ok := e.(string); ok && s == excludePlaceholder {
					excluded[key] = true
					continue
				}
			} else if excluded[key] {
				continue
			}
			out[k] = excludeFields(e, p, excluded, collecting)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = excludeFields(e, append(path[:len(path):len(path)], strconv.Itoa(i)), excluded, collecting)
		}
		return out
	}
	return v
}

// statusValue is how a raw status is compared: as Karmada's
// runtime.RawExtension, whose JSON is the raw text.
func statusValue(raw []byte) *runtime.RawExtension { return &runtime.RawExtension{Raw: raw} }
