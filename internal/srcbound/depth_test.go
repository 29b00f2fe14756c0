package srcbound_test

import "reflect"

// astDepth is the depth of a syntax tree (gopher-lua's or gojq's): the
// most pointers, interfaces and slices on a path from v, each counted once.
func astDepth(v any) int { return depthOf(reflect.ValueOf(v)) }

func depthOf(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return 1 + depthOf(v.Elem())
	case reflect.Slice:
		most := 0
		for i := range v.Len() {
			most = max(most, depthOf(v.Index(i)))
		}
		return most
	case reflect.Struct:
		most := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				most = max(most, depthOf(v.Field(i)))
			}
		}
		return most
	}
	return 0
}
