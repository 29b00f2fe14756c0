package luaapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	lua "github.com/yuin/gopher-lua"
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

// KubeUnmarshal converts a Lua result into into (a pointer) exactly as
// Karmada's ConvertLuaResultInto does: gopher-json encoding (encodeKubeJSON),
// the empty-table fix-up against references, then encoding/json (so
// json.Unmarshaler types such as *unstructured.Unstructured and
// runtime.RawExtension apply their own rules).
func KubeUnmarshal(L *lua.LState, lv lua.LValue, into any, references ...any) error {
	rv := reflect.ValueOf(into)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("luaapi: KubeUnmarshal needs a non-nil pointer, not %T", into)
	}
	data, err := KubeResultJSON(L, lv, rv.Elem().Kind() == reflect.Struct, references...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return &ConvertError{Path: "result", Msg: err.Error()}
	}
	return nil
}

// KubeResultJSON is the JSON KubeUnmarshal unmarshals: lv encoded by
// encodeKubeJSON, then fixed up for a struct target (isStruct) against
// references, which are marshalled with encoding/json.
func KubeResultJSON(L *lua.LState, lv lua.LValue, isStruct bool, references ...any) ([]byte, error) {
	root, err := kubeEncode(L, lv, "result")
	if err != nil {
		return nil, err
	}
	if err := kubeFixEmpty(root, isStruct, references); err != nil {
		return nil, err
	}
	return root.bytes(), nil
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
	emptyArrays, emptyObjects := map[string]bool{}, map[string]bool{}
	for _, ref := range references {
		data, err := json.Marshal(ref)
		if err != nil {
			return fmt.Errorf("json marshal reference failed: %w", err)
		}
		n, err := parseJNode(data)
		if err != nil {
			return err
		}
		collectEmpty(n, "", false, emptyArrays, emptyObjects)
	}
	repairEmpty(root, "", false, emptyArrays, emptyObjects)
	return nil
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
