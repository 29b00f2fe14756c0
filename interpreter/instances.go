package interpreter

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// instanceIDs converts the outputs of an instanceIdPath into ids:
// strings as they are, numbers through jq tostring; null, "", booleans,
// arrays and objects are errors, and so is a duplicate id.
func instanceIDs(component string, outputs []any) ([]string, error) {
	ids := make([]string, 0, len(outputs))
	// A few ids are checked against each other; many through a set.
	var seen map[string]bool
	if len(outputs) > 16 {
		seen = make(map[string]bool, len(outputs))
	}
	var dups []string
	for i, v := range outputs {
		id, err := instanceID(v)
		if err != nil {
			return nil, fmt.Errorf("component %q: instanceIdPath output %d: %w", component, i+1, err)
		}
		if seen != nil {
			if seen[id] {
				dups = append(dups, id)
			}
			seen[id] = true
		} else if slices.Contains(ids, id) {
			dups = append(dups, id)
		}
		ids = append(ids, id)
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("component %q: instanceIdPath yields duplicate id(s) [%s]", component, strings.Join(dups, " "))
	}
	return ids, nil
}

// instanceID converts one id value: a non-empty string, or a number
// through jq tostring (3 → "3", 1e21 → "1e+21").
func instanceID(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "", fmt.Errorf("an instance id may not be empty")
		}
		return x, nil
	case int, int64, float64, json.Number:
		return jqNumberString(x)
	default:
		return "", fmt.Errorf("an instance id must be a string or a number, got %s", describe(v))
	}
}

// jqNumberString renders a number as jq's tostring does.
func jqNumberString(v any) (string, error) {
	switch x := v.(type) {
	case int64:
		if x >= math.MinInt && x <= math.MaxInt {
			v = int(x)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			v = int(i)
		} else if f, err := x.Float64(); err == nil {
			v = f
		} else {
			return "", fmt.Errorf("invalid number %s", x)
		}
	}
	b, err := gojq.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// zipError is the error when a per-instance path yields a
// number of values other than the number of ids.
// instanceIDList is the ids of insts, for errors.
func instanceIDList(insts []instance) []string {
	ids := make([]string, len(insts))
	for i, in := range insts {
		ids[i] = in.id
	}
	return ids
}

func zipError(component, field string, got int, ids []string) error {
	return fmt.Errorf("component %q: %s yields %d value(s) for %d id(s) [%s]",
		component, field, got, len(ids), strings.Join(ids, " "))
}
