package interpreter

import "fmt"

// Type checks of values read from the object: only JSON types
// are checked, the values themselves are returned as they are — but for
// an empty array where an object is expected, or an empty object where
// an array is, which read as the empty value of the type expected: the
// exports cannot tell the two apart (both are the empty Lua table), and
// karta answers as they do (docs/jq.md, "Karmada's values").

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
