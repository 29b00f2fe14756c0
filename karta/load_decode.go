package karta

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/kartalua/karta/internal/suggest"
	"github.com/kartalua/karta/internal/yamlerr"
)

// This file turns one checked document into a Karta: YAML node → generic
// value → JSON → strictly decoded Karta, translating every library error
// into a LoadError with a field path and a line.

// libraryPanic is a panic of the YAML library, turned into an error so that
// Load never panics. It is kept as the LoadError's cause so that tests and
// the fuzz target can tell it from an ordinary YAML error.
type libraryPanic = yamlerr.LibraryPanic

// recoverLibrary turns a panic of the YAML library into an error. The
// library recovers its own errors; anything else that escapes is a bug in
// it, and the user should get an error rather than a crash.
func recoverLibrary(err *error) {
	if r := recover(); r != nil {
		*err = &libraryPanic{Value: r}
	}
}

// nextDocument parses the next document of the stream into a node tree.
// It returns io.EOF after the last one.
func nextDocument(dec *yaml.Decoder) (*yaml.Node, error) {
	return yamlerr.Next(dec)
}

// decodeNode decodes a node into v with the YAML library, which expands
// aliases and merge keys within its alias budget.
func decodeNode(n *yaml.Node, v any) (err error) {
	defer recoverLibrary(&err)
	return n.Decode(v)
}

// parseError describes an error of the YAML parser (yamlerr owns the line
// and the message). depthLimit is the nesting limit in force, used when
// the parser gave up on depth first.
func parseError(err error, depthLimit int) *LoadError {
	var lp *libraryPanic
	if errors.As(err, &lp) {
		return &LoadError{Message: lp.Error(), err: err}
	}
	line, msg := yamlerr.Split(err.Error())
	if strings.HasPrefix(msg, "exceeded max depth") {
		e := depthError(min(depthLimit, yamlMaxDepth), line)
		e.err = err
		return e
	}
	return &LoadError{Line: line, Message: "invalid YAML: " + msg, err: err}
}

// decodeErrors describes an error of the YAML decoder (as opposed to the
// parser): type errors, one per line, or a whole-document failure such as
// excessive aliasing, which has no line.
func decodeErrors(err error) []*LoadError {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		out := make([]*LoadError, 0, len(te.Errors))
		for _, text := range te.Errors {
			l, msg := yamlerr.Split(text)
			out = append(out, &LoadError{Line: l, Message: msg, err: err})
		}
		return out
	}
	var lp *libraryPanic
	if errors.As(err, &lp) {
		return []*LoadError{{Message: lp.Error(), err: err}}
	}
	l, msg := yamlerr.Split(err.Error())
	if msg == "document contains excessive aliasing" {
		msg = "the document's aliases (*name) expand to far more than the document itself, as in an alias bomb; write the values out instead"
	}
	return []*LoadError{{Line: l, Message: msg, err: err}}
}

// decodeGeneric decodes a checked document into maps, lists and scalars,
// without the top-level status (Load ignores it).
func decodeGeneric(root *yaml.Node) (map[string]any, []*LoadError) {
	var v any
	if err := decodeNode(root, &v); err != nil {
		return nil, decodeErrors(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		// checkNodes has made sure of string keys; this guards the rest.
		return nil, []*LoadError{{Line: root.Line, Message: "the document's keys must all be strings"}}
	}
	delete(m, "status")
	normalizeNumbers(m)
	return m, nil
}

// normalizeNumbers turns floats with an integral value into integers. YAML
// reads 1.0 or -0.0 as a float, JSON writes it as 1 or -0, and YAML reads
// that back as an integer; normalizing once makes loading a Karta that was
// re-marshalled give the same result. Its recursion is bounded by the
// depth check.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x)
		}
	}
	return v
}

// wantGVK says which apiVersion and kind a Karta document has.
var wantGVK = fmt.Sprintf("a Karta has apiVersion %s and kind %s (or the legacy apiVersion %s and kind %s)",
	SchemeGroupVersion, KindKarta, LegacySchemeGroupVersion, KindResourceInterface)

// checkGVK reports a document that is not a Karta, before typed decoding
// would report the fields of, say, a Deployment one by one.
func checkGVK(root *yaml.Node, obj map[string]any) []*LoadError {
	av, hasAV := obj["apiVersion"].(string)
	kind, hasKind := obj["kind"].(string)
	if obj["apiVersion"] == nil && obj["kind"] == nil {
		return []*LoadError{{Line: root.Line, Message: "apiVersion and kind are missing; is this a Karta? " + wantGVK}}
	}
	var errs []*LoadError
	for _, f := range []struct {
		name string
		ok   bool
	}{{"apiVersion", hasAV}, {"kind", hasKind}} {
		if f.ok {
			continue
		}
		node, line := nodeAt(root, fieldPath{{key: f.name}})
		if obj[f.name] == nil {
			errs = append(errs, &LoadError{Field: f.name, Line: line, Message: "missing; " + wantGVK})
		} else {
			errs = append(errs, &LoadError{Field: f.name, Line: line, Message: fmt.Sprintf("expected string, got %s", strings.TrimPrefix(strings.TrimPrefix(kindName(node), "a "), "an "))})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if IsKartaGVK(schema.FromAPIVersionAndKind(av, kind)) {
		return nil
	}
	_, line := nodeAt(root, fieldPath{{key: "apiVersion"}})
	return []*LoadError{{Line: line, Message: fmt.Sprintf("not a Karta: found apiVersion %q and kind %q; %s", av, kind, wantGVK)}}
}

// decodeKarta decodes a generic document into a Karta, strictly: unknown
// fields and type mismatches are errors with field paths.
func decodeKarta(root *yaml.Node, obj map[string]any) (*Karta, []*LoadError) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, []*LoadError{{Line: root.Line, Message: fmt.Sprintf("cannot convert the document to JSON: %v", err), err: err}}
	}
	var k Karta
	strictErrs, err := sigsjson.UnmarshalStrict(data, &k, sigsjson.DisallowUnknownFields)
	if err != nil {
		// The decoder reports one such error, the first it meets.
		return nil, []*LoadError{typeError(root, obj, data, err)}
	}
	if len(strictErrs) == 0 {
		if e := checkTimes(root, &k); e != nil {
			return nil, []*LoadError{e}
		}
		return &k, nil
	}
	out := make([]*LoadError, 0, len(strictErrs))
	for _, e := range strictErrs {
		out = append(out, strictError(root, e))
	}
	// The JSON had its keys sorted; users read top to bottom.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return nil, out
}

// strictError describes an unknown field found by strict decoding.
func strictError(root *yaml.Node, err error) *LoadError {
	var fe sigsjson.FieldError
	if !errors.As(err, &fe) {
		return &LoadError{Line: root.Line, Message: err.Error(), err: err}
	}
	flat := fe.FieldPath()
	kind, _, _ := strings.Cut(err.Error(), " ") // "unknown" or "duplicate"
	path, ok := matchStrictPath(root, flat)
	if !ok {
		name := flat[strings.LastIndexAny(flat, ".]")+1:]
		return &LoadError{Field: flat, Line: root.Line, Message: fmt.Sprintf("%s field %q", kind, name), err: err}
	}
	_, line := nodeAt(root, path)
	msg := fmt.Sprintf("%s field %q", kind, path.last())
	if kind == "unknown" {
		msg += didYouMean(path.last(), fieldNamesAt(reflect.TypeFor[Karta](), flat))
	}
	return &LoadError{Field: path.String(), Line: line, Message: msg, err: err}
}

// didYouMean suggests the field closest to an unknown one: within half its
// length in edits (at least two), so that ownerName finds ownerRef and
// fragmentedPodDefinition finds fragmentedPodSpecDefinition, but an
// unrelated word suggests nothing.
func didYouMean(name string, fields []string) string {
	if f, ok := suggest.Closest(name, fields, max(2, len(name)/2)); ok {
		return fmt.Sprintf("; did you mean %q?", f)
	}
	return ""
}

// fieldNamesAt returns the JSON field names of the struct that holds the
// last step of a strict decoder's field path (a.b[1].c), starting from t.
func fieldNamesAt(t reflect.Type, flat string) []string {
	steps := strings.Split(flat, ".")
	for _, step := range steps[:len(steps)-1] {
		name, _, _ := strings.Cut(step, "[")
		if t = elem(t); t.Kind() != reflect.Struct {
			return nil
		}
		if _, t = jsonFieldPosition(t, name); t == nil {
			return nil
		}
	}
	if t = elem(t); t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for _, f := range jsonFields(t) {
		out = append(out, f.Name)
	}
	return out
}

// elem strips pointers, slices and maps down to the element type.
func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t
}

// typeError describes the error that stopped typed decoding: a value of
// the wrong type, or a value a field's own decoder rejected.
func typeError(root *yaml.Node, obj map[string]any, data []byte, err error) *LoadError {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		if path, raw, ok := badTime(obj); ok {
			_, line := nodeAt(root, path)
			return &LoadError{Field: path.String(), Line: line, Message: fmt.Sprintf(
				"invalid time %s; write it in RFC 3339 form, like \"2025-01-02T15:04:05Z\"", raw), err: err}
		}
		return &LoadError{Line: root.Line, Message: fmt.Sprintf("invalid value: %v", err), err: err}
	}
	field := te.Field
	var node *yaml.Node
	line := 0
	if path, ok := jsonPathAtOffset(data, te.Offset); ok {
		field = path.String()
		node, line = nodeAt(root, path)
	}
	want := typeName(te.Type)
	msg := fmt.Sprintf("expected %s, got %s", want, valueName(te.Value))
	// YAML reads True, 1.10 or 0123 as a boolean or a number; the user
	// most likely meant the text as written.
	if n := resolve(node); want == "string" && n != nil && n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!bool", "!!int", "!!float":
			msg += fmt.Sprintf(" (quote it: %s)", strconv.Quote(n.Value))
		}
	}
	return &LoadError{Field: field, Line: line, Message: msg, err: err}
}

// typeName names a Go type in the user's terms.
func typeName(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Map, reflect.Struct:
		return "map"
	}
	return "a value"
}

// valueName names the JSON value of an UnmarshalTypeError ("bool",
// "object", "number 1.5", ...) in the user's terms.
func valueName(v string) string {
	switch v {
	case "bool":
		return "boolean"
	case "object":
		return "map"
	case "array":
		return "list"
	}
	return v
}

// badTime finds a metadata timestamp that metav1.Time rejects. Such a
// field decodes with a parser of its own, whose error carries no field
// path, so the candidates are tried one by one.
func badTime(obj map[string]any) (fieldPath, string, bool) {
	meta := fieldPath{{key: "metadata"}}
	candidates := []fieldPath{meta.child("creationTimestamp"), meta.child("deletionTimestamp")}
	if m, ok := obj["metadata"].(map[string]any); ok {
		if fields, ok := m["managedFields"].([]any); ok {
			for i := range fields {
				candidates = append(candidates, meta.child("managedFields").at(i).child("time"))
			}
		}
	}
	for _, p := range candidates {
		v, ok := valueAt(obj, p)
		if !ok || v == nil {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			continue
		}
		var t metav1.Time
		if t.UnmarshalJSON(raw) != nil {
			return p, string(raw), true
		}
	}
	return nil, "", false
}

// valueAt follows a field path through a generic document.
func valueAt(v any, path fieldPath) (any, bool) {
	for _, e := range path {
		if e.isIndex {
			list, ok := v.([]any)
			if !ok || e.index >= len(list) {
				return nil, false
			}
			v = list[e.index]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[e.key]; !ok {
			return nil, false
		}
	}
	return v, true
}

// checkTimes rejects metadata timestamps outside the years 0000-9999 in
// UTC. RFC 3339 parsing accepts, say, year 0000 with a positive offset,
// but the result re-marshals to a year -1 that no parser reads back.
func checkTimes(root *yaml.Node, k *Karta) *LoadError {
	meta := fieldPath{{key: "metadata"}}
	times := []struct {
		path fieldPath
		t    *metav1.Time
	}{
		{meta.child("creationTimestamp"), &k.CreationTimestamp},
		{meta.child("deletionTimestamp"), k.DeletionTimestamp},
	}
	for i := range k.ManagedFields {
		times = append(times, struct {
			path fieldPath
			t    *metav1.Time
		}{meta.child("managedFields").at(i).child("time"), k.ManagedFields[i].Time})
	}
	for _, c := range times {
		if c.t == nil || c.t.IsZero() {
			continue
		}
		if y := c.t.UTC().Year(); y < 0 || y > 9999 {
			_, line := nodeAt(root, c.path)
			return &LoadError{Field: c.path.String(), Line: line, Message: "the time is out of range: in UTC it must fall in the years 0000 to 9999"}
		}
	}
	return nil
}
