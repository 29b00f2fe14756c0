package interpreter

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// maxReplicas is the largest replica count (the range of Kubernetes' int32
// replica fields).
const maxReplicas = math.MaxInt32

// scaleValue converts one output of a scale path: null is nil, an
// integral number or a string of decimal digits with an optional sign (as
// Knative's annotations hold) is that integer; anything else, or a value
// outside 0…2147483647, is an error.
func scaleValue(v any) (*int64, error) {
	n, ok, err := scaleInt(v)
	if !ok || err != nil {
		return nil, err
	}
	return &n, nil
}

// scaleInt is scaleValue without the pointer: ok is false for null.
func scaleInt(v any) (int64, bool, error) {
	var n int64
	switch x := v.(type) {
	case nil:
		return 0, false, nil
	case int:
		n = int64(x)
	case int64:
		n = x
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) {
			return 0, false, fmt.Errorf("%v is not an integer", x)
		}
		if x < 0 || x > maxReplicas {
			return 0, false, fmt.Errorf("%v is out of range 0…%d", x, maxReplicas)
		}
		n = int64(x)
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return 0, false, fmt.Errorf("%s is not an integer", x)
		}
		n = i
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		if err != nil || !isDecimal(x) {
			return 0, false, fmt.Errorf("string %q is not a decimal integer", x)
		}
		n = i
	default:
		return 0, false, fmt.Errorf("%s is not a number", describe(v))
	}
	if n < 0 || n > maxReplicas {
		return 0, false, fmt.Errorf("%d is out of range 0…%d", n, maxReplicas)
	}
	return n, true, nil
}

// isDecimal accepts an optional sign followed by ASCII digits only
// (ParseInt alone would also accept "0x10"-free forms like "+0", which is
// fine, but not underscores or spaces; this keeps the rule explicit).
func isDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// describe names the JSON type of a value for messages, with the value
// when it is short.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case string:
		return fmt.Sprintf("string %q", x)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	default:
		return fmt.Sprintf("%v", x)
	}
}
