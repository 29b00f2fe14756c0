package karta

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// sortByDocumentOrder sorts problems into the order of their fields in a
// Karta document, so that the rules can be grouped by topic in the code
// while users read the problems top to bottom. The order of a field is that
// of its declaration in the Go types (the order of the CRD schema and of
// the examples), list entries go by index, and a parent comes before its
// fields. Problems at the same field keep the order the rules found them
// in.
func sortByDocumentOrder(ps Problems) {
	keys := make(map[string][]int, len(ps))
	for _, p := range ps {
		if _, ok := keys[p.Field]; !ok {
			keys[p.Field] = documentPosition(p.Field)
		}
	}
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return slices.Compare(keys[a.Field], keys[b.Field])
	})
}

// unknownField sorts after every known field of its parent.
const unknownField = 1 << 30

// documentPosition turns a field path such as
// spec.structureDefinition.childComponents[1].ownerRef into the positions
// of its steps in the Karta types. The first step the types do not know
// (an unknown field, or anything inside a string such as spec.luaScript)
// gets unknownField and ends the key, so that problems below it keep the
// order their checker gave them.
func documentPosition(path string) []int {
	var pos []int
	t := reflect.TypeOf(Karta{})
	for _, step := range splitDocumentPath(path) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case step.isIndex && t.Kind() == reflect.Slice:
			pos = append(pos, step.index)
			t = t.Elem()
		case !step.isIndex && t.Kind() == reflect.Struct:
			i, ft := jsonFieldPosition(t, step.name)
			if ft == nil {
				return append(pos, unknownField)
			}
			pos = append(pos, i)
			t = ft
		default:
			return append(pos, unknownField)
		}
	}
	return pos
}

// docStep is one step of a field path: a field name or a list index.
type docStep struct {
	name    string
	index   int
	isIndex bool
}

// splitDocumentPath splits a path in field.Path's notation. A bracketed
// step that is not a number (a map key) is kept as a name.
func splitDocumentPath(path string) []docStep {
	var steps []docStep
	for _, part := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			steps = append(steps, docStep{name: name})
		}
		for rest != "" {
			var inner string
			inner, rest, _ = strings.Cut(rest, "]")
			rest = strings.TrimPrefix(rest, "[")
			if i, err := strconv.Atoi(inner); err == nil {
				steps = append(steps, docStep{index: i, isIndex: true})
			} else {
				steps = append(steps, docStep{name: inner})
			}
		}
	}
	return steps
}

// jsonFieldPosition returns the declaration position of the field of
// struct type t whose JSON name is name, and the field's type; nil when t
// has no such field.
func jsonFieldPosition(t reflect.Type, name string) (int, reflect.Type) {
	for i, f := range jsonFields(t) {
		if f.Name == name {
			return i, f.Type
		}
	}
	return 0, nil
}

var jsonFieldsCache sync.Map // reflect.Type → []reflect.StructField

// jsonFields lists the fields of t under their JSON names (in Name), in
// declaration order, with inline embedded structs flattened in place.
func jsonFields(t reflect.Type) []reflect.StructField {
	if cached, ok := jsonFieldsCache.Load(t); ok {
		return cached.([]reflect.StructField)
	}
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case tag == "" && f.Anonymous:
			out = append(out, jsonFields(f.Type)...)
		case tag != "":
			f.Name = tag
			out = append(out, f)
		}
	}
	jsonFieldsCache.Store(t, out)
	return out
}
