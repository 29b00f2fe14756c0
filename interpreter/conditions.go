package interpreter

import (
	"fmt"

	"github.com/kartalua/karta/karta"
)

// conditions flattens the outputs of a conditionsDefinition path into
// conditions: each output must be null or an array of objects; an
// entry whose type field is missing or not a non-empty string is skipped;
// status, reason and message must each be a string or null. An empty field
// name (reason or message disabled) leaves that field nil.
func conditions(def *karta.ConditionsDefinition, outputs []any) ([]Condition, error) {
	// One allocation for the conditions and one for the strings their
	// fields point to (vals never grows past its capacity, so the
	// pointers into it stay valid).
	n := 0
	for _, o := range outputs {
		if arr, ok := o.([]any); ok {
			n += len(arr)
		}
	}
	out := make([]Condition, 0, n)
	vals := make([]string, 0, 3*n)
	field := func(obj map[string]any, name string) (*string, error) {
		s, ok, err := conditionValue(obj, name)
		if !ok || err != nil {
			return nil, err
		}
		vals = append(vals, s)
		return &vals[len(vals)-1], nil
	}
	for i, o := range outputs {
		if o == nil || isEmptyObject(o) {
			continue
		}
		arr, ok := o.([]any)
		if !ok {
			return nil, fmt.Errorf("conditionsDefinition.path output %d must be an array of objects or null, got %s", i+1, describe(o))
		}
		for j, e := range arr {
			if isEmptyArray(e) {
				continue // an empty table: no condition, as in the exports
			}
			obj, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("conditionsDefinition.path output %d: entry %d must be an object, got %s", i+1, j, describe(e))
			}
			typ, ok := obj[def.TypeFieldName].(string)
			if !ok || typ == "" {
				continue
			}
			c := Condition{Type: typ}
			var err error
			if c.Status, err = field(obj, def.StatusFieldName); err == nil {
				if c.Reason, err = field(obj, def.ReasonFieldName); err == nil {
					c.Message, err = field(obj, def.MessageFieldName)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("condition %q: %w", typ, err)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// conditionValue reads one condition field: ok is false for a disabled
// field (no name), an absent one or null; anything but a string is an
// error.
func conditionValue(obj map[string]any, name string) (string, bool, error) {
	if name == "" {
		return "", false, nil
	}
	switch v := obj[name].(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	default:
		return "", false, fmt.Errorf("field %q must be a string or null, got %s", name, describe(v))
	}
}

// lastOfType returns the last condition of each type: matching looks at the
// latest entry, as a controller that appends conditions means it.
func lastOfType(conds []Condition) map[string]*Condition {
	m := make(map[string]*Condition, len(conds))
	for i := range conds {
		m[conds[i].Type] = &conds[i]
	}
	return m
}

// conditionMatches is one byConditions entry: the type exists; a
// non-empty status must be equal; a non-empty reason requires a non-null,
// equal reason.
func conditionMatches(last map[string]*Condition, m karta.ConditionMatcher) bool {
	c, ok := last[m.Type]
	if !ok {
		return false
	}
	if m.Status != "" && (c.Status == nil || *c.Status != m.Status) {
		return false
	}
	if m.Reason != "" && (c.Reason == nil || *c.Reason != m.Reason) {
		return false
	}
	return true
}
