package argo

import (
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Argo CD reads a script's result by encoding it to JSON (gopher-json) and
// unmarshaling the text into its types. fromLua gives the JSON value the
// encoding stands for; the functions here read that value into the same
// types directly, without the text, for the shapes scripts return. Each
// reports false for anything else — a key that encoding/json's
// case-insensitive field matching would also take, a field of the wrong
// type, a resource without a kind — and the caller then takes the JSON
// path, which gives Argo CD's result or error. direct_test.go checks both
// paths agree.

// healthDirect is json.Unmarshal of x into a Health: "status" and
// "message" strings (null leaves the field empty); a field of another
// type is no assessment, as healthOf reads an *json.UnmarshalTypeError.
func healthDirect(x any) (Health, bool) {
	m, ok := x.(map[string]any)
	if !ok {
		return Health{}, false
	}
	var h Health
	typeError := false
	for k, v := range m {
		var field *string
		switch {
		case k == "status":
			field = &h.Status
		case k == "message":
			field = &h.Message
		case strings.EqualFold(k, "status") || strings.EqualFold(k, "message"):
			return Health{}, false
		default:
			continue
		}
		switch s := v.(type) {
		case string:
			*field = s
		case nil:
		default:
			typeError = true
		}
	}
	if typeError {
		return Health{}, true
	}
	if !validStatus(h.Status) {
		return Health{Status: StatusUnknown, Message: InvalidHealthStatus}, true
	}
	return h, true
}

// actionFields are the JSON fields of an Action.
var actionFields = []string{"name", "params", "disabled", "iconClass", "displayName"}

// actionDirect is json.Unmarshal of a discovered action's value into a,
// which holds the action's name and disabled flag already; an array (an
// empty table) leaves a as it is. It reports false for parameters and for
// anything but strings, a boolean disabled and nulls.
func actionDirect(v any, a *Action) bool {
	if _, isArray := v.([]any); isArray {
		return true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	out := *a
	for k, x := range m {
		var field *string
		switch k {
		case "name":
			field = &out.Name
		case "iconClass":
			field = &out.IconClass
		case "displayName":
			field = &out.DisplayName
		case "disabled":
			switch b := x.(type) {
			case bool:
				out.Disabled = b
			case nil:
			default:
				return false
			}
			continue
		default:
			for _, f := range actionFields {
				if strings.EqualFold(k, f) {
					return false // params, or a key encoding/json matches to a field
				}
			}
			continue
		}
		switch s := x.(type) {
		case string:
			*field = s
		case nil:
		default:
			return false
		}
	}
	*a = out
	return true
}

// actionResultDirect is actionResultJSON for a list of {operation,
// resource} whose operations are create or patch and whose resources have
// a kind, and for an object with a kind.
func actionResultDirect(x any) (*ActionResult, bool) {
	switch v := x.(type) {
	case map[string]any:
		obj, ok := unstructuredDirect(v)
		if !ok {
			return nil, false
		}
		return &ActionResult{OldStyle: true, Resources: []ImpactedResource{{Operation: OperationPatch, Object: obj}}}, true
	case []any:
		res := &ActionResult{}
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			for k := range m {
				if k != "resource" && k != "operation" && (strings.EqualFold(k, "resource") || strings.EqualFold(k, "operation")) {
					return nil, false
				}
			}
			op, _ := m["operation"].(string)
			if op != string(OperationCreate) && op != string(OperationPatch) {
				return nil, false
			}
			r, ok := m["resource"].(map[string]any)
			if !ok {
				return nil, false
			}
			obj, ok := unstructuredDirect(r)
			if !ok {
				return nil, false
			}
			res.Resources = append(res.Resources, ImpactedResource{Operation: Operation(op), Object: obj})
		}
		return res, true
	}
	return nil, false
}

// unstructuredDirect is Unstructured's UnmarshalJSON of m: numbers as
// PreserveInts decodes their JSON text, and an error (false here) when the
// object's kind is missing.
func unstructuredDirect(m map[string]any) (map[string]any, bool) {
	if (&unstructured.Unstructured{Object: m}).GroupVersionKind().Kind == "" {
		return nil, false
	}
	preserveInts(m)
	return m, true
}

// preserveInts turns, in place, each float64 whose JSON text has neither a
// fraction nor an exponent and parses as an int64 into that int64, as
// k8s.io/apimachinery's JSON decoding reads the text back. encoding/json
// writes integral values below 1e21 in plain digits, the shortest that
// read back as the same float64: exact below 2^53 (-0 is "-0", read as
// 0), and rounded beyond (2^62·1.5 is "6917529027641082000", -2^63
// "-9223372036854776000", which no int64 holds).
func preserveInts(v any) any {
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) {
			return v
		}
		if math.Abs(x) < 1<<53 {
			return int64(x)
		}
		if math.Abs(x) < 1e21 {
			if i, err := strconv.ParseInt(strconv.FormatFloat(x, 'f', -1, 64), 10, 64); err == nil {
				return i
			}
		}
	case map[string]any:
		for k, e := range x {
			x[k] = preserveInts(e)
		}
	case []any:
		for i, e := range x {
			x[i] = preserveInts(e)
		}
	}
	return v
}
