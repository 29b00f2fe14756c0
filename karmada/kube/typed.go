package kube

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kartalua/karta/luaapi"
)

// This file decodes the tree Unmarshal builds (the JSON text Karmada
// prints, before it is printed) straight into a typed Go result, as
// encoding/json would decode the text: Karmada's ReplicaRequirements,
// components and dependencies, and the PodTemplateSpec of the kube
// helpers. Printing the text and scanning it back (twice: json.Unmarshal
// validates before it decodes) was about half of a typed result's
// conversion in BenchmarkKarmada's profile.
//
// It is written by hand, not taken from a library, because it must give
// exactly encoding/json's result on the text, and no library decodes a
// tree with encoding/json's rules. It covers what encoding/json does
// without an error on the values results hold, and declines (ok false)
// everything else, which then takes the text and encoding/json — so
// results and errors are encoding/json's either way
// (TestKubeTypedAgreesWithJSON, FuzzKubeTypedAgreesWithJSON):
//
//   - json.Unmarshaler types (resource.Quantity, metav1.Time,
//     IntOrString, runtime.RawExtension…) get their node's text, as
//     encoding/json hands them theirs; an error declines;
//   - structs match keys to fields by exact name (tag name, else Go
//     name); a key that only matches one case-insensitively declines
//     (encoding/json's fold rules are not reproduced), any other unknown
//     key is ignored; the fields of embedded structs are promoted, and a
//     struct where two fields would share a name (encoding/json's
//     dominance rules) or that embeds a pointer declines;
//   - null anywhere declines (encoding/json's null rules differ by kind);
//   - numbers into integer and float kinds are parsed as encoding/json
//     parses them; an error or overflow declines, as does any value of
//     the wrong JSON type, a []byte, an interface, an array, a map whose
//     key is not a plain string kind, a `,string` field, and any type
//     implementing encoding.TextUnmarshaler but not json.Unmarshaler.

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// typedKind is how a typedPlan decodes.
type typedKind uint8

const (
	typedUnsupported typedKind = iota
	typedUnmarshaler
	typedString
	typedBool
	typedInt
	typedUint
	typedFloat
	typedPointer
	typedSlice
	typedMap
	typedStruct
)

// typedPlan is how to decode into one Go type; plans are built once per
// type and cached.
type typedPlan struct {
	kind   typedKind
	t      reflect.Type
	elem   *typedPlan // pointer, slice and map elements
	fields []typedField
	byName map[string]int // exact key → fields index
}

type typedField struct {
	name  string
	index []int      // reflect.Value.FieldByIndex, through embedded structs
	plan  *typedPlan // nil: the field declines if its key is present
}

var typedPlans sync.Map // reflect.Type → *typedPlan

// planFor returns t's plan.
func planFor(t reflect.Type) *typedPlan {
	if p, ok := typedPlans.Load(t); ok {
		return p.(*typedPlan)
	}
	building := map[reflect.Type]*typedPlan{}
	p := buildPlan(t, building)
	for bt, bp := range building {
		typedPlans.LoadOrStore(bt, bp)
	}
	return p
}

func buildPlan(t reflect.Type, building map[reflect.Type]*typedPlan) *typedPlan {
	if p, ok := typedPlans.Load(t); ok {
		return p.(*typedPlan)
	}
	if p, ok := building[t]; ok {
		return p // a recursive type: filled in below, before use
	}
	p := &typedPlan{t: t}
	building[t] = p
	pt := reflect.PointerTo(t)
	switch {
	case t.Kind() != reflect.Pointer && pt.Implements(jsonUnmarshalerType):
		p.kind = typedUnmarshaler
		return p
	case t.Kind() != reflect.Pointer && pt.Implements(textUnmarshalerType):
		return p // unsupported
	}
	switch t.Kind() {
	case reflect.String:
		p.kind = typedString
	case reflect.Bool:
		p.kind = typedBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind = typedInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		p.kind = typedUint
	case reflect.Float32, reflect.Float64:
		p.kind = typedFloat
	case reflect.Pointer:
		p.kind, p.elem = typedPointer, buildPlan(t.Elem(), building)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return p // []byte is base64 text
		}
		p.kind, p.elem = typedSlice, buildPlan(t.Elem(), building)
	case reflect.Map:
		kt := t.Key()
		if kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(textUnmarshalerType) {
			return p
		}
		p.kind, p.elem = typedMap, buildPlan(t.Elem(), building)
	case reflect.Struct:
		if !structFields(p, t, building) {
			p.fields, p.byName = nil, nil
			return p
		}
		p.kind = typedStruct
	}
	return p
}

// structFields lists t's fields as encoding/json names them, the fields
// of embedded structs without a tag name promoted; false for a struct
// where encoding/json's dominance rules would decide between two fields
// of one name, or that embeds a pointer or a non-struct.
func structFields(p *typedPlan, t reflect.Type, building map[reflect.Type]*typedPlan) bool {
	p.byName = map[string]int{}
	if !addStructFields(p, t, nil, building) {
		return false
	}
	for i, f := range p.fields {
		if _, dup := p.byName[f.name]; dup {
			return false
		}
		p.byName[f.name] = i
	}
	return true
}

func addStructFields(p *typedPlan, t reflect.Type, prefix []int, building map[reflect.Type]*typedPlan) bool {
	if len(prefix) > 8 {
		return false
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validTagName(name) {
			name = "" // encoding/json ignores an invalid name
		}
		index := append(append([]int(nil), prefix...), i)
		if sf.Anonymous && name == "" {
			if sf.Type.Kind() != reflect.Struct {
				if !sf.IsExported() && sf.Type.Kind() != reflect.Pointer {
					continue // encoding/json ignores it
				}
				return false
			}
			if !addStructFields(p, sf.Type, index, building) {
				return false
			}
			continue
		}
		if !sf.IsExported() {
			if sf.Anonymous {
				return false
			}
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := typedField{name: name, index: index}
		if !hasOption(opts, "string") {
			f.plan = buildPlan(sf.Type, building)
		}
		p.fields = append(p.fields, f)
	}
	return true
}

// validTagName is encoding/json's isValidTag.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// decodeTyped decodes n into into (a non-nil pointer to a zero value) as
// json.Unmarshal decodes n's text; false, with *into left zero, where it
// declines.
func decodeTyped(n *jnode, into reflect.Value) bool {
	elem := into.Elem()
	if !elem.IsZero() {
		return false // json.Unmarshal merges into what is there
	}
	fresh := reflect.New(elem.Type()).Elem()
	if !planFor(elem.Type()).decode(n, fresh) {
		return false
	}
	elem.Set(fresh)
	return true
}

// decode decodes n into v (settable, zero); false declines.
func (p *typedPlan) decode(n *jnode, v reflect.Value) bool {
	if n.kind == jScalar && string(n.raw) == "null" {
		return false
	}
	switch p.kind {
	case typedUnmarshaler:
		u, ok := v.Addr().Interface().(json.Unmarshaler)
		return ok && u.UnmarshalJSON(n.text()) == nil
	case typedString:
		s, ok := n.stringValue()
		if ok {
			v.SetString(s)
		}
		return ok
	case typedBool:
		switch string(n.raw) {
		case "true":
			v.SetBool(true)
			return n.kind == jScalar
		case "false":
			return n.kind == jScalar
		}
		return false
	case typedInt:
		if !n.isNumber() {
			return false
		}
		i, err := strconv.ParseInt(string(n.raw), 10, 64)
		if err != nil || v.OverflowInt(i) {
			return false
		}
		v.SetInt(i)
		return true
	case typedUint:
		if !n.isNumber() {
			return false
		}
		u, err := strconv.ParseUint(string(n.raw), 10, 64)
		if err != nil || v.OverflowUint(u) {
			return false
		}
		v.SetUint(u)
		return true
	case typedFloat:
		if !n.isNumber() {
			return false
		}
		f, err := strconv.ParseFloat(string(n.raw), v.Type().Bits())
		if err != nil || v.OverflowFloat(f) {
			return false
		}
		v.SetFloat(f)
		return true
	case typedPointer:
		e := reflect.New(p.t.Elem())
		if !p.elem.decode(n, e.Elem()) {
			return false
		}
		v.Set(e)
		return true
	case typedSlice:
		if n.kind != jArray {
			return false
		}
		s := reflect.MakeSlice(p.t, len(n.elems), len(n.elems))
		for i, el := range n.elems {
			if !p.elem.decode(el, s.Index(i)) {
				return false
			}
		}
		v.Set(s)
		return true
	case typedMap:
		if n.kind != jObject {
			return false
		}
		m := reflect.MakeMapWithSize(p.t, len(n.keys))
		// SetMapIndex copies the key and the element: one of each serves
		// every member.
		key, e := reflect.New(p.t.Key()).Elem(), reflect.New(p.elem.t).Elem()
		for i, k := range n.keys {
			if !utf8.ValidString(k) {
				return false // its text holds U+FFFD instead
			}
			e.SetZero()
			if !p.elem.decode(n.elems[i], e) {
				return false
			}
			key.SetString(k)
			m.SetMapIndex(key, e)
		}
		v.Set(m)
		return true
	case typedStruct:
		if n.kind != jObject {
			return false
		}
		for i, k := range n.keys {
			fi, ok := p.byName[k]
			if !ok {
				if !utf8.ValidString(k) || p.foldMatch(k) {
					return false
				}
				continue // unknown: ignored
			}
			f := &p.fields[fi]
			if f.plan == nil || !f.plan.decode(n.elems[i], v.FieldByIndex(f.index)) {
				return false
			}
		}
		return true
	}
	return false
}

// foldMatch says whether key matches a field only case-insensitively
// (bytes.EqualFold, encoding/json's rule), which declines.
func (p *typedPlan) foldMatch(key string) bool {
	for _, f := range p.fields {
		if strings.EqualFold(f.name, key) {
			return true
		}
	}
	return false
}

// isNumber says whether n is a number's text.
func (n *jnode) isNumber() bool {
	if n.kind != jScalar || len(n.raw) == 0 {
		return false
	}
	c := n.raw[0]
	return c == '-' || c >= '0' && c <= '9'
}

// text is n's JSON text (a scalar's own bytes).
func (n *jnode) text() []byte {
	if n.kind == jScalar {
		return n.raw
	}
	return n.bytes()
}

// An unfilled lazy table (Lazy) handed to Unmarshal without
// references — the pod template a script passes to
// kube.accuratePodRequirements untouched — is decoded from its Go value
// by the same plans, with the encoder's and the fix-up's rules applied on
// the way instead of building the tree: a null member or element is
// left out, a member or element that encodes as an empty table (an empty
// map or slice, or one of nulls only) is deleted, and a number's text is
// the encoder's. Building the tree was most of such a call. What the
// tree route would decline, or what needs a container's text (a
// json.Unmarshaler given an object or array), declines here too, and
// the caller takes the tree.

// decodeTypedGo decodes src, the Go value of an unfilled lazy table, into
// into (a non-nil pointer to a zero value) as Unmarshal without
// references would decode the table; false, with *into left zero, where
// it declines.
func decodeTypedGo(src any, into reflect.Value) bool {
	elem := into.Elem()
	if !elem.IsZero() {
		return false
	}
	p := planFor(elem.Type())
	if goEncodesEmpty(src) {
		// The encoder's `[]`, which the fix-up makes `{}` for a struct.
		switch p.kind {
		case typedStruct:
			return true
		case typedSlice:
			elem.Set(reflect.MakeSlice(p.t, 0, 0))
			return true
		}
		return false
	}
	fresh := reflect.New(elem.Type()).Elem()
	if !p.decodeGo(src, fresh, 0) {
		return false
	}
	elem.Set(fresh)
	return true
}

// goEncodesEmpty says whether the encoder prints x as an empty table: a
// map or slice with no non-null member.
func goEncodesEmpty(x any) bool {
	switch c := x.(type) {
	case map[string]any:
		for _, e := range c {
			if e != nil {
				return false
			}
		}
		return true
	case []any:
		for _, e := range c {
			if e != nil {
				return false
			}
		}
		return true
	}
	return false
}

// goKept says whether the encoder and the fix-up keep a member or
// element x: not null, not an empty table.
func goKept(x any) bool {
	return x != nil && !goEncodesEmpty(x)
}

// maxGoDepth bounds decodeGo's recursion, far below luaapi.MaxDepth (where the
// encoder fails): deeper values decline.
const maxGoDepth = 100

// decodeGo is decode over a Go value (never nil, never an empty table:
// goKept) instead of its node.
func (p *typedPlan) decodeGo(x any, v reflect.Value, depth int) bool {
	if depth > maxGoDepth {
		return false
	}
	switch p.kind {
	case typedUnmarshaler:
		var text []byte
		switch s := x.(type) {
		case bool:
			text = boolLiteral(s)
		case string:
			text = jsonString(s)
		default:
			f, ok := luaapi.GoNumber(x)
			if !ok {
				return false // a container: its text would be needed
			}
			var err error
			if text, err = appendNumberText(nil, f); err != nil {
				return false
			}
		}
		u, ok := v.Addr().Interface().(json.Unmarshaler)
		return ok && u.UnmarshalJSON(text) == nil
	case typedString:
		s, ok := x.(string)
		if !ok || !utf8.ValidString(s) {
			return false // invalid UTF-8: the text holds U+FFFD instead
		}
		v.SetString(s)
		return true
	case typedBool:
		b, ok := x.(bool)
		v.SetBool(b)
		return ok
	case typedInt, typedUint, typedFloat:
		f, ok := luaapi.GoNumber(x)
		if !ok {
			return false
		}
		var buf [32]byte
		text, err := appendNumberText(buf[:0], f)
		if err != nil {
			return false
		}
		n := jnode{raw: text}
		return p.decode(&n, v)
	case typedPointer:
		e := reflect.New(p.t.Elem())
		if !p.elem.decodeGo(x, e.Elem(), depth+1) {
			return false
		}
		v.Set(e)
		return true
	case typedSlice:
		a, ok := x.([]any)
		if !ok {
			return false
		}
		kept := 0
		for _, el := range a {
			if goKept(el) {
				kept++
			}
		}
		s := reflect.MakeSlice(p.t, kept, kept)
		i := 0
		for _, el := range a {
			if !goKept(el) {
				continue
			}
			if !p.elem.decodeGo(el, s.Index(i), depth+1) {
				return false
			}
			i++
		}
		v.Set(s)
		return true
	case typedMap:
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		out := reflect.MakeMapWithSize(p.t, len(m))
		key, e := reflect.New(p.t.Key()).Elem(), reflect.New(p.elem.t).Elem()
		for k, el := range m {
			if !goKept(el) {
				continue
			}
			if !utf8.ValidString(k) {
				return false
			}
			e.SetZero()
			if !p.elem.decodeGo(el, e, depth+1) {
				return false
			}
			key.SetString(k)
			out.SetMapIndex(key, e)
		}
		v.Set(out)
		return true
	case typedStruct:
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		for k, el := range m {
			if !goKept(el) {
				continue
			}
			fi, ok := p.byName[k]
			if !ok {
				if !utf8.ValidString(k) || p.foldMatch(k) {
					return false
				}
				continue
			}
			f := &p.fields[fi]
			if f.plan == nil || !f.plan.decodeGo(el, v.FieldByIndex(f.index), depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
