package interpreter

import "fmt"

// Type checks of values read from the object: only JSON types
// are checked, the values themselves are returned as they are — but for
// an empty array where an object is expected, or an empty object where
// an array is, which read as the empty value of the type expected: the
// exports cannot tell the two apart (both are the empty Lua table), and
// karta answers as they do (docs/jq.md, "Karmada's values").

// isEmptyObject reports whether v is {}. Read where a list of conditions
// is expected, it is no conditions: in every Lua path (the exports, Karmada's
// and Argo CD's runtimes) an empty object and an empty array are one value,
// the empty table, so no exported script can tell `conditions: {}` (what a Go
// controller's nil map encodes to) from `[]`, and karta answers as they do.
func isEmptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// isEmptyArray reports whether v is []. Read where an object is expected (a
// condition), it is the empty object, for the same reason: the exports
// cannot tell it from {}.
func isEmptyArray(v any) bool {
	a, ok := v.([]any)
	return ok && len(a) == 0
}

// viewObject is v where the view reads an object: v itself, or a new
// empty object for [] — the exports cannot tell an empty array from an
// empty object (both are the empty Lua table), so karta reads it as they
// do (docs/jq.md, "Karmada's values").
func viewObject(v any) (map[string]any, bool) {
	if isEmptyArray(v) {
		return map[string]any{}, true
	}
	m, ok := v.(map[string]any)
	return m, ok
}

func asObject(v any, at string) (map[string]any, error) {
	m, ok := viewObject(v)
	if !ok {
		return nil, fmt.Errorf("%s must yield an object, got %s", at, describe(v))
	}
	return m, nil
}

func asObjectOrNull(v any, at string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	return asObject(v, at)
}

func asArray(v any, at string) ([]any, error) {
	if isEmptyObject(v) {
		return []any{}, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must yield an array, got %s", at, describe(v))
	}
	return a, nil
}

func asString(v any, at string) (*string, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%s must yield a string, got %s", at, describe(v))
	}
	return &s, nil
}

// asStringMap checks a labels or annotations map: an object of strings.
func asStringMap(v any, at string) (map[string]any, error) {
	m, err := asObject(v, at)
	if err != nil {
		return nil, err
	}
	for k, e := range m {
		if _, ok := e.(string); !ok {
			return nil, fmt.Errorf("%s: the value of %q must be a string, got %s", at, k, describe(e))
		}
	}
	return m, nil
}
