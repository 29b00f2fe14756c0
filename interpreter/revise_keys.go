package interpreter

import (
	"reflect"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// podTemplateKeys are the field names of core/v1's PodTemplateSpec, at any
// depth, each boxed once: the view paths of a revision's changes are
// mostly made of them, and boxing a string into a path element was an
// allocation per element per change. Read-only after it is built.
var podTemplateKeys = sync.OnceValue(func() map[string]any {
	keys := map[string]any{}
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				keys[name] = name
			}
			visit(f.Type)
		}
	}
	visit(reflect.TypeFor[corev1.PodTemplateSpec]())
	return keys
})

// boxKey returns k as a path element, without allocating for the field
// names of a pod template.
func boxKey(k string) any {
	if b, ok := podTemplateKeys()[k]; ok {
		return b
	}
	return k
}
