package kartatest

import (
	"reflect"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// unknownFieldAt finds the first key of a test file that its Go type
// (Suite, reached through t) does not have, walking the YAML tree beside
// the type: encoding/json's strict error names the key but neither its
// path nor its line. It returns the key's field path (tests[0].status.statsu),
// its line, and the keys the mapping has room for.
func unknownFieldAt(n *yaml.Node, t reflect.Type, path string) (at string, line int, known []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch {
	case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
		return unknownFieldAt(n.Content[0], t, path)
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, c := range n.Content {
			if at, line, known := unknownFieldAt(c, t.Elem(), path+"["+strconv.Itoa(i)+"]"); line > 0 {
				return at, line, known
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := jsonFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			sub := k.Value
			if path != "" {
				sub = path + "." + k.Value
			}
			ft, ok := fields[k.Value]
			if !ok {
				names := make([]string, 0, len(fields))
				for name := range fields {
					names = append(names, name)
				}
				sort.Strings(names)
				return sub, k.Line, names
			}
			if at, line, known := unknownFieldAt(n.Content[i+1], ft, sub); line > 0 {
				return at, line, known
			}
		}
	}
	return "", 0, nil
}

// jsonFields maps a struct's JSON names to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f.Type
	}
	return out
}
