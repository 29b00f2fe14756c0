package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/luaapi"
)

// This file is Karmada's repair of gopher-json's empty tables
// (convertEmptySliceToEmptyStructPartly in Karmada's luavm), reproduced
// because Karmada's scripts and tests rely on its outcome:
//
//  1. A result that is exactly `[]` becomes `{}` when it is unmarshalled
//     into a struct (an empty table returned for an object).
//  2. Otherwise every empty array in the result is looked up, by its path
//     without array indexes ("spec.containers.env"), in the references (the
//     call's input objects, e.g. desired and observed for Retain): a path
//     that is an empty object there becomes `{}`, a path that is an empty
//     array there stays `[]`, and any other empty array is deleted. With no
//     references (most operations) every nested empty table is deleted.
//
// Paths are dotted strings as in Karmada, so a key containing a dot can
// match another path, as it does there. Karmada applies the edits with
// sjson, which misreads keys holding '.', '*', '?' or '\'; here they are
// applied to the tree itself, at the exact place. Two deletions in one
// array happen in Karmada in a random order, which can shift one onto the
// wrong element; here both elements go, which is one of Karmada's outcomes.

// Unmarshal converts a Lua result into into (a pointer) exactly as
// Karmada's ConvertLuaResultInto does: gopher-json encoding (encodeKubeJSON),
// the empty-table fix-up against references, then encoding/json (so
// json.Unmarshaler types such as *unstructured.Unstructured and
// runtime.RawExtension apply their own rules).
func Unmarshal(L *lua.LState, lv lua.LValue, into any, references ...any) error {
	rv := reflect.ValueOf(into)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("luaapi: Unmarshal needs a non-nil pointer, not %T", into)
	}
	if u, ok := into.(*unstructured.Unstructured); ok {
		// The object built from the tables, where the tree would give it
		// (unstructured_direct.go).
		if tb, ok := lv.(*lua.LTable); ok {
			if obj, ok := unstructuredDirect(L, tb, references); ok {
				u.Object = obj
				return nil
			}
		}
	}
	if tb, ok := lv.(*lua.LTable); ok && len(references) == 0 {
		// An unfilled lazy table, decoded from its Go value
		// (typed.go) where the tree route would decode it.
		if src, ok := luaapi.LazySource(L, tb); ok && decodeTypedGo(src, rv) {
			return nil
		}
	}
	root, err := kubeResultTree(L, lv, rv.Elem().Kind() == reflect.Struct, references...)
	if err != nil {
		return err
	}
	if u, ok := into.(*unstructured.Unstructured); ok {
		// What Unstructured's UnmarshalJSON would read from the text, read
		// from the tree (the JSON text and its decoding were a third of a
		// Karmada Retain call); anything it would refuse takes the text.
		if obj, ok := root.unstructuredObject(); ok {
			u.Object = obj
			return nil
		}
	}
	// What encoding/json would decode from the text, decoded from the
	// tree (typed.go); anything it declines takes the text.
	if decodeTyped(root, rv) {
		return nil
	}
	if err := json.Unmarshal(root.bytes(), into); err != nil {
		return &luaapi.ConvertError{Path: "result", Msg: err.Error()}
	}
	return nil
}

// kubeUnmarshalText is Unmarshal without references by Karmada's
// route: the text, then encoding/json.
func kubeUnmarshalText(L *lua.LState, lv lua.LValue, into any) error {
	data, err := ResultJSON(L, lv, reflect.ValueOf(into).Elem().Kind() == reflect.Struct)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return &luaapi.ConvertError{Path: "result", Msg: err.Error()}
	}
	return nil
}

// ResultJSON is the JSON Unmarshal unmarshals: lv encoded by
// encodeKubeJSON, then fixed up for a struct target (isStruct) against
// references, which are marshalled with encoding/json.
func ResultJSON(L *lua.LState, lv lua.LValue, isStruct bool, references ...any) ([]byte, error) {
	root, err := kubeResultTree(L, lv, isStruct, references...)
	if err != nil {
		return nil, err
	}
	return root.bytes(), nil
}

// kubeResultTree is ResultJSON's tree, before it is printed.
func kubeResultTree(L *lua.LState, lv lua.LValue, isStruct bool, references ...any) (*jnode, error) {
	root, err := kubeEncode(L, lv, "result")
	if err != nil {
		return nil, err
	}
	if err := kubeFixEmpty(root, isStruct, references); err != nil {
		return nil, err
	}
	return root, nil
}

// fixEmptyJSON applies the fix-up to JSON text (such as encodeKubeJSON's) and
// returns the repaired text.
func fixEmptyJSON(data []byte, isStruct bool, references ...any) ([]byte, error) {
	root, err := parseJNode(data)
	if err != nil {
		return nil, err
	}
	if err := kubeFixEmpty(root, isStruct, references); err != nil {
		return nil, err
	}
	return root.bytes(), nil
}

func kubeFixEmpty(root *jnode, isStruct bool, references []any) error {
	if root.kind == jArray && len(root.elems) == 0 {
		if isStruct {
			root.kind = jObject
		}
		return nil
	}
	// repairEmpty only acts on empty arrays below the root: without one,
	// the references' paths are not needed (they are still checked to
	// marshal, as Karmada marshals them).
	need := hasEmptyArray(root)
	var emptyArrays, emptyObjects map[string]bool
	if need {
		emptyArrays, emptyObjects = map[string]bool{}, map[string]bool{}
	}
	for _, ref := range references {
		// The JSON text of a reference made of JSON's own Go types is
		// walked without being written (marshalling the call's objects and
		// reading them back was most of a Retain call); anything else is
		// marshalled as in Karmada, which also gives its errors.
		if collectEmptyGo(ref, "", false, emptyArrays, emptyObjects) {
			continue
		}
		data, err := json.Marshal(ref)
		if err != nil {
			return fmt.Errorf("json marshal reference failed: %w", err)
		}
		if !need {
			continue
		}
		n, err := parseJNode(data)
		if err != nil {
			return err
		}
		collectEmpty(n, "", false, emptyArrays, emptyObjects)
	}
	if need {
		repairEmpty(root, "", false, emptyArrays, emptyObjects)
	}
	return nil
}

// hasEmptyArray says whether an empty array is anywhere below n.
func hasEmptyArray(n *jnode) bool {
	for _, child := range n.elems {
		switch {
		case child.kind == jArray && len(child.elems) == 0:
			return true
		case child.kind != jScalar && hasEmptyArray(child):
			return true
		}
	}
	return false
}

// collectEmptyGo is collectEmpty over the JSON text of v without writing
// it, for v made of JSON's own Go types (maps of string keys, []any,
// strings, bools, nil, finite numbers) or an *unstructured.Unstructured
// of them (its MarshalJSON writes its Object). It returns false, having
// recorded nothing, when v holds anything else: the caller marshals it.
// With nil maps it only checks.
func collectEmptyGo(v any, path string, nested bool, emptyArrays, emptyObjects map[string]bool) bool {
	if u, ok := v.(*unstructured.Unstructured); ok {
		if u == nil {
			return false
		}
		v = u.Object
	}
	if !jsonNative(v, 0) {
		return false
	}
	if emptyArrays != nil {
		walkEmptyGo(v, path, nested, emptyArrays, emptyObjects)
	}
	return true
}

// jsonNative says whether v is made of JSON's own Go types, whose JSON
// text walkEmptyGo reads without writing it. Beyond maxNativeDepth it
// says no (encoding/json then decides).
func jsonNative(v any, depth int) bool {
	if depth > maxNativeDepth {
		return false
	}
	switch x := v.(type) {
	case nil, string, bool, int, int32, int64:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case map[string]any:
		for _, e := range x {
			if !jsonNative(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !jsonNative(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

const maxNativeDepth = 10000

// walkEmptyGo is collectEmpty on v's JSON text: a nil map or slice is
// JSON null, a scalar.
func walkEmptyGo(v any, path string, nested bool, emptyArrays, emptyObjects map[string]bool) {
	visit := func(p string, childNested bool, child any) {
		switch c := child.(type) {
		case []any:
			switch {
			case c == nil:
			case len(c) == 0:
				emptyArrays[p] = true
			default:
				walkEmptyGo(c, p, childNested, emptyArrays, emptyObjects)
			}
		case map[string]any:
			switch {
			case c == nil:
			case len(c) == 0:
				emptyObjects[p] = true
			default:
				walkEmptyGo(c, p, childNested, emptyArrays, emptyObjects)
			}
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			visit(joinPath(path, k, !nested), true, e)
		}
	case []any:
		for _, e := range x {
			visit(path, nested, e)
		}
	}
}

// joinPath appends key to a dotted path, as Karmada's strings.Join does;
// top says path is still the root (no key yet).
func joinPath(path, key string, top bool) string {
	if top {
		return key
	}
	return path + "." + key
}

// collectEmpty records the paths of the empty arrays and objects in a
// reference. Array elements share their array's path (no index), as in
// Karmada's traverseToFindEmptyField; nested says a key is in path.
func collectEmpty(n *jnode, path string, nested bool, emptyArrays, emptyObjects map[string]bool) {
	for i, child := range n.elems {
		p := path
		childNested := nested
		if n.kind == jObject {
			p, childNested = joinPath(path, n.keys[i], !nested), true
		}
		switch {
		case child.kind == jArray && len(child.elems) == 0:
			emptyArrays[p] = true
		case child.kind == jObject && len(child.elems) == 0:
			emptyObjects[p] = true
		case child.kind != jScalar:
			collectEmpty(child, p, childNested, emptyArrays, emptyObjects)
		}
	}
}

// repairEmpty turns each empty array below n into an empty object, keeps
// it, or deletes it (see the file comment), as Karmada's
// traverseToFindEmptyFieldNeededModify decides.
func repairEmpty(n *jnode, path string, nested bool, emptyArrays, emptyObjects map[string]bool) {
	kept := 0
	for i, child := range n.elems {
		p := path
		childNested := nested
		if n.kind == jObject {
			p, childNested = joinPath(path, n.keys[i], !nested), true
		}
		drop := false
		switch {
		case child.kind == jArray && len(child.elems) == 0:
			switch {
			case emptyObjects[p]:
				child.kind = jObject
			case !emptyArrays[p]:
				drop = true
			}
		case child.kind != jScalar:
			repairEmpty(child, p, childNested, emptyArrays, emptyObjects)
		}
		if drop {
			continue
		}
		n.elems[kept] = child
		if n.kind == jObject {
			n.keys[kept] = n.keys[i]
		}
		kept++
	}
	n.elems = n.elems[:kept]
	if n.kind == jObject {
		n.keys = n.keys[:kept]
	}
}

// parseJNode reads JSON text into a tree, keeping scalars' text and
// objects' key order.
func parseJNode(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readJNode(dec)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("invalid JSON: more than one value")
	}
	return n, nil
}

func readJNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			n := &jnode{kind: jArray}
			for dec.More() {
				el, err := readJNode(dec)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, el)
			}
			_, err := dec.Token() // ]
			return n, err
		case '{':
			n := &jnode{kind: jObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				el, err := readJNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, kt.(string))
				n.elems = append(n.elems, el)
			}
			_, err := dec.Token() // }
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return &jnode{raw: []byte(t.String())}, nil
	case string:
		return &jnode{raw: jsonString(t)}, nil
	case bool:
		return &jnode{raw: []byte(fmt.Sprint(t))}, nil
	case nil:
		return &jnode{raw: []byte("null")}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}
