package karta

import (
	"encoding/json"
	"fmt"
)

// DecodedValue returns the JSON value a suspend or resume action assigns.
// A YAML/JSON string holds JSON text and is parsed ("true" is the boolean
// true, "\"true\"" the string); any other value is used as it is.
func (a *SuspendAction) DecodedValue() (any, error) {
	if len(a.Value.Raw) == 0 {
		return nil, fmt.Errorf("no value")
	}
	var v any
	if err := json.Unmarshal(a.Value.Raw, &v); err != nil {
		return nil, fmt.Errorf("invalid JSON value %s: %w", a.Value.Raw, err)
	}
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	var inner any
	if err := json.Unmarshal([]byte(s), &inner); err != nil {
		return nil, fmt.Errorf("the string %q is not JSON text (write '\"%s\"' for a JSON string)", s, s)
	}
	return inner, nil
}
