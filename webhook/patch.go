package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/kartalua/karta/object"
)

// PatchOperation is one RFC 6902 operation. Only add, remove and replace
// are produced.
type PatchOperation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// MarshalJSON writes value for add and replace even when it is null.
func (p PatchOperation) MarshalJSON() ([]byte, error) {
	if p.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{p.Op, p.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{p.Op, p.Path, p.Value})
}

// CreatePatch returns the JSON Patch (RFC 6902) that turns the JSON
// document from into to: object members are removed, added or diffed
// recursively, in key order; arrays are diffed element by element, with
// the extra elements removed from the end or appended; any other
// difference is a replace. Numbers compare by their literal, so 1 and
// 1.0 differ (a harmless replace). No operations means equal documents.
func CreatePatch(from, to []byte) ([]PatchOperation, error) {
	a, err := decodeJSON(from)
	if err != nil {
		return nil, fmt.Errorf("original document: %w", err)
	}
	b, err := decodeJSON(to)
	if err != nil {
		return nil, fmt.Errorf("result document: %w", err)
	}
	var ops []PatchOperation
	return diffValue(ops, "", a, b), nil
}

func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func diffValue(ops []PatchOperation, path string, a, b any) []PatchOperation {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			return diffObject(ops, path, av, bv)
		}
	case []any:
		if bv, ok := b.([]any); ok {
			return diffArray(ops, path, av, bv)
		}
	default:
		if equalScalar(a, b) {
			return ops
		}
	}
	return append(ops, PatchOperation{Op: "replace", Path: path, Value: b})
}

func equalScalar(a, b any) bool {
	switch av := a.(type) {
	case nil:
		return b == nil
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case json.Number:
		bv, ok := b.(json.Number)
		return ok && av == bv
	}
	return false
}

func diffObject(ops []PatchOperation, path string, a, b map[string]any) []PatchOperation {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := path + "/" + object.EscapePointerToken(k)
		av, inA := a[k]
		bv, inB := b[k]
		switch {
		case !inB:
			ops = append(ops, PatchOperation{Op: "remove", Path: p})
		case !inA:
			ops = append(ops, PatchOperation{Op: "add", Path: p, Value: bv})
		default:
			ops = diffValue(ops, p, av, bv)
		}
	}
	return ops
}

func diffArray(ops []PatchOperation, path string, a, b []any) []PatchOperation {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ops = diffValue(ops, path+"/"+strconv.Itoa(i), a[i], b[i])
	}
	for i := len(a) - 1; i >= n; i-- { // from the end, so indices stay valid
		ops = append(ops, PatchOperation{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
	}
	for i := n; i < len(b); i++ {
		ops = append(ops, PatchOperation{Op: "add", Path: path + "/" + strconv.Itoa(i), Value: b[i]})
	}
	return ops
}
