package kube

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// unstructuredObject is the Object unstructured.Unstructured's
// UnmarshalJSON gives for n's JSON text, read from the tree, with its
// numbers decoded as apimachinery's JSON decoder does (an integer's text
// that fits int64 is an int64, any other number a float64). ok is false
// where UnmarshalJSON would fail — not an object, or no kind in its
// group, version and kind — so that the caller takes the text and its
// error.
func (n *jnode) unstructuredObject() (map[string]any, bool) {
	if n.kind != jObject {
		return nil, false
	}
	v, ok := n.goValue()
	if !ok {
		return nil, false
	}
	obj := v.(map[string]any)
	if !hasKind(obj) {
		return nil, false
	}
	return obj, true
}

// goValue decodes the tree as apimachinery's JSON decoder decodes its
// text into an interface value; ok is false for a scalar it does not
// expect (the caller then decodes the text).
func (n *jnode) goValue() (any, bool) {
	switch n.kind {
	case jObject:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			if !utf8.ValidString(k) {
				return nil, false // the text holds U+FFFD in its place
			}
			v, ok := n.elems[i].goValue()
			if !ok {
				return nil, false
			}
			m[k] = v // keys are unique: the encoder made them from a table
		}
		return m, true
	case jArray:
		a := make([]any, len(n.elems))
		for i, el := range n.elems {
			v, ok := el.goValue()
			if !ok {
				return nil, false
			}
			a[i] = v
		}
		return a, true
	}
	switch raw := string(n.raw); {
	case raw == "null":
		return nil, true
	case raw == "true":
		return true, true
	case raw == "false":
		return false, true
	case raw != "" && raw[0] == '"':
		return n.stringValue()
	default:
		return numberOfText(raw)
	}
}

// numberOfText is the number apimachinery's JSON decoder reads from a
// number's text: an int64 where the text parses as one, else a float64.
func numberOfText(raw string) (any, bool) {
	if i, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return i, true
	}
	if f, err := strconv.ParseFloat(raw, 64); err == nil {
		return f, true
	}
	return nil, false
}

// hasKind reports whether Unstructured's UnmarshalJSON accepts obj: it
// refuses an object without a kind in its group, version and kind.
func hasKind(obj map[string]any) bool {
	return (&unstructured.Unstructured{Object: obj}).GroupVersionKind().Kind != ""
}

// stringValue is the string a scalar's JSON text holds; ok is false when
// the node is not a string. The encoder's text is encoding/json's, so a
// string without escapes is its text between the quotes.
func (n *jnode) stringValue() (string, bool) {
	raw := n.raw
	if n.kind != jScalar || len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	plain := utf8.Valid(inner)
	for _, c := range inner {
		if c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}
