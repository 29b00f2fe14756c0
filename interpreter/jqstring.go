package interpreter

import "github.com/kartalua/karta/internal/third_party/gojq"

// jqToString is jq's tostring: strings pass through, anything else is
// compact JSON with sorted keys, numbers spelt as gojq spells them.
func jqToString(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := gojq.Marshal(jqInput(v))
	if err != nil {
		return "", err
	}
	return string(b), nil
}
