// Package jsonpatch is karta's one home of RFC 6902 JSON Patch: the
// operation type every patch karta prints or answers with is made of, JSON
// pointers, and Create, the patch between two JSON documents.
//
// karta writes its own generator rather than using a library's because its
// patches must be deterministic (members in key order, array removals from
// the end), so that answers and goldens are reproducible; and because
// ReviseSpec builds its patch from the changes it already computed on the
// objects in place, sharing untouched subtrees, without marshalling them.
// Numbers compare by their literal in both: a write that only re-spells a
// number (1 → 1.0) is an operation.
package jsonpatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/kartalua/karta/object"
)

// Create returns the JSON Patch (RFC 6902) that turns the JSON
// document from into to: object members are removed, added or diffed
// recursively, in key order; arrays are diffed element by element, with
// the extra elements removed from the end or appended; any other
// difference is a replace. Numbers compare by their literal, so 1 and
// 1.0 differ (a harmless replace). No operations means equal documents.
func Create(from, to []byte) ([]Operation, error) {
	a, err := decodeJSON(from)
	if err != nil {
		return nil, fmt.Errorf("original document: %w", err)
	}
	b, err := decodeJSON(to)
	if err != nil {
		return nil, fmt.Errorf("result document: %w", err)
	}
	var ops []Operation
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

func diffValue(ops []Operation, path string, a, b any) []Operation {
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
	return append(ops, Operation{Op: "replace", Path: path, Value: b})
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

func diffObject(ops []Operation, path string, a, b map[string]any) []Operation {
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
			ops = append(ops, Operation{Op: "remove", Path: p})
		case !inA:
			ops = append(ops, Operation{Op: "add", Path: p, Value: bv})
		default:
			ops = diffValue(ops, p, av, bv)
		}
	}
	return ops
}

func diffArray(ops []Operation, path string, a, b []any) []Operation {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ops = diffValue(ops, path+"/"+strconv.Itoa(i), a[i], b[i])
	}
	for i := len(a) - 1; i >= n; i-- { // from the end, so indices stay valid
		ops = append(ops, Operation{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
	}
	for i := n; i < len(b); i++ {
		ops = append(ops, Operation{Op: "add", Path: path + "/" + strconv.Itoa(i), Value: b[i]})
	}
	return ops
}
