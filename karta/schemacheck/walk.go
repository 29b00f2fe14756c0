package schemacheck

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/kartalua/karta/internal/suggest"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// value is what the walk knows about one output of an expression: the
// schema node it comes from, or, for a value the expression computes, its
// JSON type. A value with neither is unknown, and why says why.
type value struct {
	// s is the schema of the value, nil when it is not read from the
	// object (or the schema stops describing it).
	s *structuralschema.Structural
	// path is s's place in the object, as a field path with [*] for array
	// items and .* for map values: spec.replicatedJobs[*].template.
	path string
	// typ is the JSON type of a computed value: null, boolean, number,
	// string, array or object.
	typ string
	// elems are the outputs an array literal was built from ([f]).
	elems []value
	// why says why an unknown value is unknown (entering
	// x-kubernetes-preserve-unknown-fields at PATH, a function the walk
	// does not model, …).
	why string
}

func (v value) known() bool { return v.s != nil || v.typ != "" }

// schemaType is the JSON type the schema gives the value: its type, or
// int-or-string.
func (v value) schemaType() string {
	switch {
	case v.s == nil:
		return ""
	case v.s.XIntOrString:
		return "int-or-string"
	}
	return v.s.Type
}

// finding is a refutation (an error) found while walking, at a schema
// path.
type finding struct {
	msg  string
	path string
}

// walker runs a jq syntax tree over schemas instead of values.
type walker struct {
	findings []finding
	seen     map[string]bool
	// vars are the values of the variables in scope: the references the
	// checker has schemas for ($name), and `TERM as $x` bindings.
	vars map[string][]value
}

func (w *walker) refute(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[msg] {
		return
	}
	w.seen[msg] = true
	w.findings = append(w.findings, finding{msg: msg, path: path})
}

func unknown(why string) value { return value{why: why} }

func computed(typ string) value { return value{typ: typ} }

// query walks q over the inputs and returns every output it may have.
func (w *walker) query(q *gojq.Query, in []value) []value {
	if q == nil {
		return in
	}
	if q.Term != nil {
		return w.term(q.Term, in)
	}
	if q.Left == nil || q.Right == nil {
		return []value{unknown("an expression the schema check does not model")}
	}
	switch q.Op {
	case gojq.OpPipe:
		if len(q.Patterns) > 0 { // TERM as $x | BODY: BODY runs on the same input, $x bound
			return w.bind(q.Patterns, w.query(q.Left, in), func() []value { return w.query(q.Right, in) })
		}
		return w.query(q.Right, w.query(q.Left, in))
	case gojq.OpComma, gojq.OpAlt:
		return append(w.query(q.Left, in), w.query(q.Right, in)...)
	case gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod:
		return arith(q.Op, w.query(q.Left, in), w.query(q.Right, in))
	case gojq.OpEq, gojq.OpNe, gojq.OpGt, gojq.OpLt, gojq.OpGe, gojq.OpLe, gojq.OpAnd, gojq.OpOr:
		w.query(q.Left, in)
		w.query(q.Right, in)
		return []value{computed("boolean")}
	}
	w.query(q.Left, in)
	w.query(q.Right, in)
	return []value{unknown("an update expression")}
}

// bind runs body with each plain variable of patterns ($x; not the
// destructuring forms, which stay unknown) bound to vals, and restores
// the variables it shadowed.
func (w *walker) bind(patterns []*gojq.Pattern, vals []value, body func() []value) []value {
	saved := map[string][]value{}
	for _, p := range patterns {
		if p.Name == "" {
			continue
		}
		if _, done := saved[p.Name]; done {
			continue
		}
		saved[p.Name] = w.vars[p.Name]
		if w.vars == nil {
			w.vars = map[string][]value{}
		}
		w.vars[p.Name] = vals
	}
	out := body()
	for name, old := range saved {
		if old == nil {
			delete(w.vars, name)
		} else {
			w.vars[name] = old
		}
	}
	return out
}

// arith is the result of an arithmetic operator: numbers stay numbers,
// strings, objects and arrays added stay strings, objects and arrays;
// anything else is not known.
func arith(op gojq.Operator, l, r []value) []value {
	typ := ""
	for _, v := range append(append([]value(nil), l...), r...) {
		t := v.typ
		if st := v.schemaType(); st != "" {
			t = st
			if t == "integer" || t == "int-or-string" {
				t = "number"
			}
		}
		switch {
		case t == "null":
			continue // null + x is x
		case typ == "":
			typ = t
		case typ != t:
			return []value{unknown("arithmetic on mixed types")}
		}
	}
	// Objects merge and arrays concatenate: a view's template + {spec: …}
	// is an object, its containers + [sidecar] an array.
	if typ == "number" || (op == gojq.OpAdd && (typ == "string" || typ == "object" || typ == "array")) {
		return []value{computed(typ)}
	}
	return []value{unknown("arithmetic on " + orWord(typ, "unknown values"))}
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// term walks one term and its suffixes.
func (w *walker) term(t *gojq.Term, in []value) []value {
	out := w.termBase(t, in)
	for _, s := range t.SuffixList {
		switch {
		case s.Index != nil:
			out = w.each(out, func(v value) []value { return w.index(v, s.Index, in) })
		case s.Iter:
			out = w.each(out, w.iterate)
		}
	}
	return out
}

func (w *walker) each(in []value, f func(value) []value) []value {
	var out []value
	for _, v := range in {
		out = append(out, f(v)...)
	}
	return out
}

func (w *walker) termBase(t *gojq.Term, in []value) []value {
	switch t.Type {
	case gojq.TermTypeIdentity:
		return in
	case gojq.TermTypeNull:
		return []value{computed("null")}
	case gojq.TermTypeTrue, gojq.TermTypeFalse:
		return []value{computed("boolean")}
	case gojq.TermTypeNumber:
		return []value{computed("number")}
	case gojq.TermTypeString:
		if t.Str != nil {
			for _, q := range t.Str.Queries {
				w.query(q, in)
			}
		}
		return []value{computed("string")}
	case gojq.TermTypeFormat:
		return []value{computed("string")}
	case gojq.TermTypeIndex:
		return w.each(in, func(v value) []value { return w.index(v, t.Index, in) })
	case gojq.TermTypeFunc:
		return w.call(t.Func, in)
	case gojq.TermTypeObject:
		if t.Object != nil {
			for _, kv := range t.Object.KeyVals {
				if kv.KeyQuery != nil {
					w.query(kv.KeyQuery, in)
				}
				if kv.Val != nil {
					w.query(kv.Val, in)
				}
			}
		}
		return []value{computed("object")}
	case gojq.TermTypeArray:
		var elems []value
		if t.Array != nil && t.Array.Query != nil {
			elems = w.query(t.Array.Query, in)
		}
		return []value{{typ: "array", elems: elems}}
	case gojq.TermTypeUnary:
		if t.Unary != nil {
			w.term(t.Unary.Term, in)
		}
		return []value{computed("number")}
	case gojq.TermTypeIf:
		return w.ifThen(t.If, in)
	case gojq.TermTypeTry:
		if t.Try == nil {
			return nil
		}
		return w.query(t.Try.Body, in)
	case gojq.TermTypeQuery:
		return w.query(t.Query, in)
	}
	// reduce, foreach, label: named as jq spells them (TermTypeReduce → reduce).
	return []value{unknown(strings.ToLower(strings.TrimPrefix(t.Type.GoString(), "gojq.TermType")) + " is not modelled")}
}

func (w *walker) ifThen(e *gojq.If, in []value) []value {
	if e == nil {
		return nil
	}
	w.query(e.Cond, in)
	out := w.query(e.Then, in)
	for _, el := range e.Elif {
		w.query(el.Cond, in)
		out = append(out, w.query(el.Then, in)...)
	}
	if e.Else != nil {
		return append(out, w.query(e.Else, in)...)
	}
	return append(out, in...)
}

// funcTypes are the jq builtins whose output type is known whatever their
// input; their arguments still run on the input.
var funcTypes = map[string]string{
	"length": "number", "utf8bytelength": "number", "tonumber": "number", "floor": "number", "ceil": "number",
	"round": "number", "sqrt": "number", "fabs": "number", "abs": "number", "pow": "number", "log": "number",
	"tostring": "string", "tojson": "string", "type": "string", "ascii_downcase": "string", "ascii_upcase": "string",
	"ltrimstr": "string", "rtrimstr": "string", "trim": "string", "ltrim": "string", "rtrim": "string", "join": "string",
	"sub": "string", "gsub": "string", "ascii": "string", "implode": "string", "todate": "string",
	"keys": "array", "keys_unsorted": "array", "to_entries": "array", "split": "array", "sort": "array",
	"sort_by": "array", "group_by": "array", "unique": "array", "unique_by": "array", "reverse": "array",
	"flatten": "array", "explode": "array", "paths": "array", "splits": "string",
	"has": "boolean", "contains": "boolean", "inside": "boolean", "test": "boolean", "startswith": "boolean",
	"endswith": "boolean", "any": "boolean", "all": "boolean", "in": "boolean", "isvalid": "boolean",
	"not": "boolean", "isinfinite": "boolean", "isnan": "boolean", "isnormal": "boolean",
	"from_entries": "object", "with_entries": "object", "fromjson": "", "tostream": "array",
}

// byElement are the builtins whose argument runs on each element of the
// input array, not on the input.
var byElement = map[string]bool{
	"sort_by": true, "group_by": true, "unique_by": true, "min_by": true, "max_by": true,
}

// passThrough are the builtins that output (some of) their input as it is.
var passThrough = map[string]bool{
	"values": true, "objects": true, "arrays": true, "strings": true, "numbers": true, "booleans": true,
	"nulls": true, "scalars": true, "iterables": true, "debug": true, "stderr": true,
}

// call walks a function call: its arguments run on the input (so their
// paths are checked too), and the builtins that select or reach into
// their input keep what the schema says of it.
func (w *walker) call(f *gojq.Func, in []value) []value {
	if f == nil {
		return nil
	}
	name, args := f.Name, f.Args
	if strings.HasPrefix(name, "$") {
		if v, ok := w.vars[name]; ok {
			return v
		}
		return []value{unknown("the variable " + name)}
	}
	switch {
	case name == "empty":
		return nil
	case name == "select" && len(args) == 1:
		w.query(args[0], in)
		return narrow(args[0], in)
	case passThrough[name] && len(args) == 0:
		return in
	case (name == "first" || name == "last") && len(args) == 1:
		return w.query(args[0], in)
	case (name == "first" || name == "last") && len(args) == 0:
		return w.each(in, func(v value) []value { return w.step(v, "number", "", false) })
	case name == "limit" && len(args) == 2:
		w.query(args[0], in)
		return w.query(args[1], in)
	case name == "map" && len(args) == 1:
		var out []value
		for _, v := range in {
			out = append(out, value{typ: "array", elems: w.query(args[0], w.iterate(v))})
		}
		return out
	case (name == "any" || name == "all") && len(args) == 2:
		// any(gen; cond): cond runs on gen's outputs, not on the input.
		w.query(args[1], w.query(args[0], in))
		return []value{computed("boolean")}
	case (name == "any" || name == "all") && len(args) == 1:
		w.query(args[0], w.each(in, w.iterate))
		return []value{computed("boolean")}
	case byElement[name] && len(args) == 1:
		// sort_by(f) and its kin run f on each element of the input.
		w.query(args[0], w.each(in, w.iterate))
		if typ := funcTypes[name]; typ != "" {
			return []value{computed(typ)}
		}
		return []value{unknown(name + "'s output is not modelled")}
	case name == "add" && len(args) == 0:
		return w.each(in, func(v value) []value { return arith(gojq.OpAdd, w.iterate(v), nil) })
	case name == "getpath" || name == "paths" || name == "path":
		for _, a := range args {
			w.query(a, in)
		}
		return []value{unknown(name + " reads paths the schema check cannot follow")}
	}
	for _, a := range args {
		w.query(a, in)
	}
	if typ, ok := funcTypes[name]; ok && typ != "" {
		return []value{computed(typ)}
	}
	return []value{unknown(fmt.Sprintf("%s/%d is not modelled", name, len(args)))}
}

// index walks one index step: .name, ."name", .[expr], .[n], .[a:b].
func (w *walker) index(v value, x *gojq.Index, in []value) []value {
	switch {
	case x.Name != "":
		return w.step(v, "string", x.Name, false)
	case x.Str != nil && x.Str.Queries == nil:
		return w.step(v, "string", x.Str.Str, false)
	case x.Str != nil:
		w.query(&gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeString, Str: x.Str}}, in)
		return w.step(v, "string", "", false)
	case x.IsSlice:
		if x.Start != nil {
			w.query(x.Start, in)
		}
		if x.End != nil {
			w.query(x.End, in)
		}
		return w.step(v, "number", "", true)
	case x.Start != nil:
		keys := w.query(x.Start, in)
		if x.Start.Term != nil && x.Start.Term.Type == gojq.TermTypeString && x.Start.Term.Str != nil && x.Start.Term.Str.Queries == nil {
			return w.step(v, "string", x.Start.Term.Str.Str, false)
		}
		kind := ""
		for _, k := range keys {
			switch {
			case k.typ == "number" || k.schemaType() == "integer":
				kind = "number"
			case k.typ == "string" || k.schemaType() == "string":
				kind = "string"
			}
		}
		if kind == "" {
			return []value{unknown("an index the schema check cannot tell")}
		}
		return w.step(v, kind, "", false)
	}
	return []value{unknown("an index the schema check does not model")}
}

// step indexes v by a key of the given kind: a string (name "" when it is
// computed) or a number, or a slice.
func (w *walker) step(v value, kind, name string, slice bool) []value {
	if v.s == nil {
		switch {
		case v.typ == "null":
			return []value{computed("null")}
		case v.typ == "array" && kind == "number" && !slice && len(v.elems) > 0:
			return v.elems
		case v.typ == "array" && slice:
			return []value{v}
		}
		return []value{unknown(orWord(v.why, "computed values are not checked"))}
	}
	s := v.s
	switch t := v.schemaType(); {
	case kind == "string" && (t == "object" || (t == "" && (len(s.Properties) > 0 || s.AdditionalProperties != nil))):
		return []value{w.field(v, name)}
	case kind == "string" && t == "":
		return []value{unknown(preserveWhy(v))}
	case kind == "number" && t == "array":
		if slice {
			return []value{v}
		}
		if s.Items == nil {
			return []value{unknown("the schema of " + v.path + " does not describe its items")}
		}
		return []value{{s: s.Items, path: v.path + "[*]"}}
	case kind == "number" && slice && t == "string":
		return []value{computed("string")}
	case kind == "number" && t == "":
		return []value{unknown(preserveWhy(v))}
	case kind == "string":
		w.refute(v.path, "%s is %s, not an object: it has no field %s", describePath(v.path), article(t), quoteField(name))
	case slice:
		w.refute(v.path, "%s is %s, not an array or a string: it cannot be sliced", describePath(v.path), article(t))
	default:
		w.refute(v.path, "%s is %s, not an array: it cannot be indexed by a number", describePath(v.path), article(t))
	}
	return nil
}

// field reads one field of an object schema.
func (w *walker) field(v value, name string) value {
	s := v.s
	child := joinPath(v.path, name)
	if name == "" {
		if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
			return value{s: s.AdditionalProperties.Structural, path: joinPath(v.path, "*")}
		}
		return unknown("a field name the schema check cannot tell")
	}
	if p, ok := s.Properties[name]; ok {
		if name == "metadata" && isBareObject(&p) {
			return value{s: objectMeta, path: child}
		}
		return value{s: &p, path: child}
	}
	if isRoot(v.path) || s.XEmbeddedResource {
		switch name {
		case "apiVersion", "kind":
			return value{s: stringSchema, path: child}
		case "metadata":
			return value{s: objectMeta, path: child}
		}
	}
	switch {
	case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
		return value{s: s.AdditionalProperties.Structural, path: joinPath(v.path, "*")}
	case s.AdditionalProperties != nil && s.AdditionalProperties.Bool:
		return unknown(describePath(v.path) + " allows any field")
	case s.XPreserveUnknownFields:
		return unknown(preserveWhy(v))
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	hint := ""
	if best, ok := suggest.Closest(name, names, max(2, len(name)/2)); ok {
		hint = fmt.Sprintf("; did you mean %q?", best)
	}
	has := "it has no fields"
	if len(names) > 0 {
		has = "it has: " + strings.Join(names, ", ")
	}
	w.refute(v.path, "%s has no field %s%s (%s)", describePath(v.path), quoteField(name), hint, has)
	return value{}
}

// iterate walks .[]: the items of an array, the values of an object.
func (w *walker) iterate(v value) []value {
	if v.s == nil {
		if v.typ == "array" && len(v.elems) > 0 {
			return v.elems
		}
		return []value{unknown(orWord(v.why, "computed values are not checked"))}
	}
	s := v.s
	switch t := v.schemaType(); t {
	case "array":
		if s.Items == nil {
			return []value{unknown("the schema of " + v.path + " does not describe its items")}
		}
		return []value{{s: s.Items, path: v.path + "[*]"}}
	case "object":
		var out []value
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p := s.Properties[n]
			out = append(out, value{s: &p, path: joinPath(v.path, n)})
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
			out = append(out, value{s: s.AdditionalProperties.Structural, path: joinPath(v.path, "*")})
		}
		if s.XPreserveUnknownFields || (s.AdditionalProperties != nil && s.AdditionalProperties.Structural == nil && s.AdditionalProperties.Bool) {
			out = append(out, unknown(preserveWhy(v)))
		}
		return out
	case "":
		return []value{unknown(preserveWhy(v))}
	}
	w.refute(v.path, "%s is %s, not an array: it cannot be iterated with []", describePath(v.path), article(v.schemaType()))
	return nil
}

func preserveWhy(v value) string {
	return "enters x-kubernetes-preserve-unknown-fields at " + describePath(v.path)
}

// isBareObject is a `type: object` with nothing else: how controller-gen
// writes an embedded ObjectMeta without crd:generateEmbeddedObjectMeta.
func isBareObject(s *structuralschema.Structural) bool {
	return s.Type == "object" && len(s.Properties) == 0 && s.AdditionalProperties == nil && !s.XPreserveUnknownFields
}

func joinPath(base, name string) string {
	switch {
	case name == "*":
		return base + ".*"
	case base == "":
		return name
	}
	return base + "." + name
}

// isRoot reports whether a schema path is an object's root: the
// workload's (""), or a referenced object's ($name, $name[*]).
func isRoot(p string) bool {
	return p == "" || (strings.HasPrefix(p, "$") && !strings.Contains(p, "."))
}

// describePath names a schema path in messages; the root is "the object".
func describePath(p string) string {
	if p == "" {
		return "the object"
	}
	return p
}

func quoteField(name string) string {
	if name == "" {
		return "(a computed name)"
	}
	return strconv.Quote(name)
}

func article(t string) string {
	switch t {
	case "":
		return "a value of any type"
	case "int-or-string":
		return "an int-or-string"
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

var stringSchema = &structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}

// objectMeta is the part of ObjectMeta a Karta may read: the API server
// keeps every field of the root's metadata (and of an embedded resource's),
// whatever the CRD's schema says of it.
var objectMeta = func() *structuralschema.Structural {
	str := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	integer := structuralschema.Structural{Generic: structuralschema.Generic{Type: "integer"}}
	stringMap := structuralschema.Structural{
		Generic:              structuralschema.Generic{Type: "object"},
		AdditionalProperties: &structuralschema.StructuralOrBool{Structural: &str},
	}
	anyObject := structuralschema.Structural{
		Generic:    structuralschema.Generic{Type: "object"},
		Extensions: structuralschema.Extensions{XPreserveUnknownFields: true},
	}
	return &structuralschema.Structural{
		Generic: structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{
			"name": str, "namespace": str, "generateName": str, "uid": str, "resourceVersion": str,
			"creationTimestamp": str, "deletionTimestamp": str, "generation": integer,
			"deletionGracePeriodSeconds": integer, "labels": stringMap, "annotations": stringMap,
			"finalizers":      {Generic: structuralschema.Generic{Type: "array"}, Items: &str},
			"ownerReferences": {Generic: structuralschema.Generic{Type: "array"}, Items: &anyObject},
			"managedFields":   {Generic: structuralschema.Generic{Type: "array"}, Items: &anyObject},
		},
	}
}()

// narrow keeps the inputs a select condition may let through, as far as
// its top-level conjuncts say: `type == "T"` keeps values the schema may
// give type T, and `has("k")` keeps objects that may have k. Anything else
// keeps every input.
func narrow(cond *gojq.Query, in []value) []value {
	var out []value
	for _, v := range in {
		if mayPass(cond, v) {
			out = append(out, v)
		}
	}
	return out
}

func mayPass(q *gojq.Query, v value) bool {
	if q == nil {
		return true
	}
	if q.Term == nil && q.Op == gojq.OpAnd {
		return mayPass(q.Left, v) && mayPass(q.Right, v)
	}
	if q.Term != nil && q.Term.Type == gojq.TermTypeQuery && len(q.Term.SuffixList) == 0 {
		return mayPass(q.Term.Query, v)
	}
	if v.s == nil {
		return true
	}
	t := v.schemaType()
	if want, ok := typeGuard(q); ok && t != "" {
		switch {
		case want == "number":
			return t == "integer" || t == "number" || t == "int-or-string"
		case want == "string" && t == "int-or-string":
			return true
		}
		return t == want
	}
	if key, ok := hasGuard(q); ok && t == "object" {
		if _, found := v.s.Properties[key]; found {
			return true
		}
		return v.s.XPreserveUnknownFields || v.s.AdditionalProperties != nil
	}
	return true
}

// typeGuard matches `type == "T"` (either way round).
func typeGuard(q *gojq.Query) (string, bool) {
	if q.Term != nil || q.Op != gojq.OpEq {
		return "", false
	}
	isType := func(x *gojq.Query) bool {
		return x.Term != nil && x.Term.Type == gojq.TermTypeFunc && x.Term.Func.Name == "type" &&
			len(x.Term.Func.Args) == 0 && len(x.Term.SuffixList) == 0
	}
	lit := func(x *gojq.Query) (string, bool) {
		if x.Term != nil && x.Term.Type == gojq.TermTypeString && x.Term.Str != nil && x.Term.Str.Queries == nil && len(x.Term.SuffixList) == 0 {
			return x.Term.Str.Str, true
		}
		return "", false
	}
	if isType(q.Left) {
		return lit(q.Right)
	}
	if isType(q.Right) {
		return lit(q.Left)
	}
	return "", false
}

// hasGuard matches `has("k")`.
func hasGuard(q *gojq.Query) (string, bool) {
	if q.Term == nil || q.Term.Type != gojq.TermTypeFunc || q.Term.Func.Name != "has" || len(q.Term.Func.Args) != 1 || len(q.Term.SuffixList) != 0 {
		return "", false
	}
	a := q.Term.Func.Args[0]
	if a.Term != nil && a.Term.Type == gojq.TermTypeString && a.Term.Str != nil && a.Term.Str.Queries == nil {
		return a.Term.Str.Str, true
	}
	return "", false
}
