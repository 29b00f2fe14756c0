package karta

import (
	"bytes"
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
	v, err := decodeJSON(a.Value.Raw)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON value %s: %w", a.Value.Raw, err)
	}
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	inner, err := decodeJSON([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("the string %q is not JSON text (write '\"%s\"' for a JSON string)", s, s)
	}
	return inner, nil
}

// decodeJSON decodes one JSON value keeping numbers as json.Number, so a
// value written by Suspend keeps its spelling (and integers beyond 2^53
// their digits).
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}
