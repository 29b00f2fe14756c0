package interpreter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// decodeResult converts a hook's Lua result into a typed result, checking
// it against the result's schema: unknown keys and wrong types are errors.
// It goes through JSON, which is fine: it only runs for scripts' results,
// never for the generated hooks' Go fast path.
func decodeResult(L *lua.LState, v lua.LValue, dst any) error {
	return decodeResultWith(L, v, dst, nil)
}

// decodeResultWith is decodeResult with a typed reader of the converted
// result tried first: fast reads the exact shape into dst itself and
// reports false for anything else, which goes through JSON as before.
func decodeResultWith(L *lua.LState, v lua.LValue, dst any, fast func(g any) bool) error {
	g, err := luaapi.FromLua(L, v)
	if err != nil {
		return resultError(err)
	}
	g = fitEmptyTables(L, v, g, reflect.TypeOf(dst))
	if fast != nil && fast(g) {
		return nil
	}
	return decodeJSONValue(g, dst)
}

// fitEmptyTables gives the empty tables of a result the kind its schema
// wants: an empty table's kind comes from its marker, else from the
// result's schema, else it is an object. FromLua makes an unmarked empty
// table an object; where t, the Go type decoded into, has a list, it
// becomes an empty list, so that a script may write `matched = {}` or
// `return {}`. g is FromLua's conversion of lv (fresh maps and slices
// wherever lv is a table), walked in step with lv and t.
func fitEmptyTables(L *lua.LState, lv lua.LValue, g any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tb, ok := lv.(*lua.LTable)
	if !ok {
		// A view is the input's own value; a scalar has no kind to fit.
		return g
	}
	if _, lazy := luaapi.LazySource(L, tb); lazy {
		// An untouched lazy table is its Go value, not a copy, whose
		// empty objects and arrays have their kinds already.
		return g
	}
	switch t.Kind() {
	case reflect.Slice:
		switch x := g.(type) {
		case map[string]any:
			if len(x) == 0 && tb.Metatable != lua.LValue(luaapi.ObjectMT(L)) {
				return []any{}
			}
		case []any:
			for i := range x {
				x[i] = fitEmptyTables(L, tb.RawGetInt(i+1), x[i], t.Elem())
			}
		}
	case reflect.Map:
		if m, ok := g.(map[string]any); ok {
			for k, e := range m {
				m[k] = fitEmptyTables(L, tb.RawGetString(k), e, t.Elem())
			}
		}
	case reflect.Struct:
		if m, ok := g.(map[string]any); ok {
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if e, ok := m[name]; ok && name != "" && name != "-" {
					m[name] = fitEmptyTables(L, tb.RawGetString(name), e, f.Type)
				}
			}
		}
	}
	return g
}

// resultError is a hook result that does not convert from Lua. A
// *luaapi.ConvertError names the place already ("result.items[2].x: ...");
// prefixing it again printed "result: result: ...".
func resultError(err error) error {
	var ce *luaapi.ConvertError
	if errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("result: %w", err)
}

func decodeJSONValue(g any, dst any) error {
	b, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("result does not have the hook's shape: %w", err)
	}
	return nil
}

// decodeStatus converts an InterpretStatus result and checks its status
// words.
func decodeStatus(L *lua.LState, v lua.LValue, res *StatusResult) error {
	if err := decodeResult(L, v, res); err != nil {
		return err
	}
	if !validStatus(res.Status) {
		return fmt.Errorf("result: unknown status %q (want one of %s)", res.Status, statusWords())
	}
	for _, m := range res.Matched {
		if !validStatus(m) || m == karta.StatusUndefined {
			return fmt.Errorf("result: matched: unknown status %q (want one of %s)", m, statusWords())
		}
	}
	if res.Matched == nil {
		res.Matched = []karta.Status{}
	}
	if res.Conditions == nil {
		res.Conditions = []Condition{}
	}
	return nil
}

func validStatus(s karta.Status) bool {
	if s == karta.StatusUndefined {
		return true
	}
	for _, p := range karta.StatusPrecedence {
		if s == p {
			return true
		}
	}
	return false
}

func statusWords() string {
	var b bytes.Buffer
	for _, p := range karta.StatusPrecedence {
		b.WriteString(string(p) + ", ")
	}
	b.WriteString(string(karta.StatusUndefined))
	return b.String()
}

// DecodeRevisions reads a revisions list (docs/cli.md `karta revise`): a JSON
// array of {component, instance, type, patch} objects; unknown keys are
// errors. A revision without a type keeps Type empty: a merge patch.
func DecodeRevisions(v any) ([]Revision, error) { return decodeRevisions(v, "", true) }

// DecodeRevisionsWithType is DecodeRevisions with def the type of the
// revisions that do not say (karta revise --type; "" is PatchMerge).
// Every decoded revision has its Type set.
func DecodeRevisionsWithType(v any, def PatchType) ([]Revision, error) {
	t, err := ParsePatchType(string(def))
	if err != nil {
		return nil, fmt.Errorf("default patch type: %w", err)
	}
	return decodeRevisions(v, t, true)
}

const revisionShape = "{component, instance, type, patch}"

// decodeRevisions decodes revisions; with checkPatches, each patch is
// checked against its type too (the Lua path leaves that to reviseSpec,
// so that its errors are the Go path's).
func decodeRevisions(v any, def PatchType, checkPatches bool) ([]Revision, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("revisions must be a list of %s, got %s", revisionShape, describe(v))
	}
	revs := make([]Revision, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("revisions[%d] must be an object %s, got %s", i, revisionShape, describe(e))
		}
		for _, k := range sortedKeys(m) {
			if k != "component" && k != "instance" && k != "type" && k != "patch" {
				return nil, fmt.Errorf("revisions[%d]: unknown field %q (want component, instance, type, patch)", i, k)
			}
		}
		comp, ok := m["component"].(string)
		if !ok || comp == "" {
			return nil, fmt.Errorf("revisions[%d].component: required: the name of a pod-bearing component", i)
		}
		inst, ok := m["instance"].(string)
		if !ok && m["instance"] != nil {
			return nil, fmt.Errorf("revisions[%d].instance must be a string (\"\", an instance id, or \"*\"), got %s", i, describe(m["instance"]))
		}
		typ := def
		if t, present := m["type"]; present && t != nil {
			s, ok := t.(string)
			if !ok {
				return nil, fmt.Errorf("revisions[%d].type must be a string (merge, strategic or json), got %s", i, describe(t))
			}
			typ = PatchType(s)
		}
		revs[i] = Revision{Component: comp, Instance: inst, Type: typ, Patch: m["patch"]}
		if !checkPatches {
			continue
		}
		if _, err := preparePatch(&revs[i]); err != nil {
			return nil, fmt.Errorf("revisions[%d].%w", i, err)
		}
	}
	return revs, nil
}
