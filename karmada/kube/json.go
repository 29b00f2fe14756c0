package kube

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// This file encodes Lua values as JSON the way Karmada does: Karmada's
// resource interpreter turns every Lua result (and every table handed to a
// kube helper) into JSON with layeh.com/gopher-json before unmarshalling it
// into a Go type. Karmada's scripts are written against that encoder's
// quirks, so the karmada package must reproduce them exactly:
//
//   - an empty table is `[]`, whatever it was meant to be (fixup.go
//     then repairs what it can, as Karmada does);
//   - a table whose first key (in gopher-lua's Next order) is a number is
//     an array: its keys must be 1, 2, 3… in that order ("cannot encode
//     sparse array") and all numbers ("cannot encode mixed or invalid key
//     types");
//   - a table whose first key is a string is an object with string keys
//     only, printed with its keys sorted (encoding/json's map order);
//   - a table reached twice, through a cycle or merely shared by two
//     fields, is an error ("cannot encode recursively nested tables"):
//     gopher-json never forgets a table it has visited;
//   - numbers and strings are printed by encoding/json (float64 numbers,
//     HTML-escaped strings); NaN and ±Inf are errors; functions and
//     foreign userdata are errors.
//
// Two values exist only in karta's sandbox and are extensions: the null
// sentinel prints as null, and a lazy view prints as the table it would
// read as (its Go value with gopher-json's rules: nulls left out, empty
// containers as `[]`). An unfilled lazy table (Lazy) prints the same
// way, from its Go value: it is what the table would hold once filled.

// Messages of gopher-json's errors, kept word for word.
const (
	kubeErrNested      = "cannot encode recursively nested tables to JSON"
	kubeErrSparseArray = "cannot encode sparse array"
	kubeErrInvalidKeys = "cannot encode mixed or invalid key types"
)

// jkind is the kind of a node of an encoded JSON tree.
type jkind uint8

const (
	jScalar jkind = iota
	jArray
	jObject
)

// jnode is a JSON value as gopher-json printed it: objects keep their keys
// sorted, scalars their exact text. The empty-table fix-up edits this tree
// where Karmada edits the text with sjson, and printing it gives the same
// bytes Karmada's edits give.
type jnode struct {
	kind  jkind
	raw   []byte   // a scalar's JSON text
	keys  []string // an object's keys, sorted
	elems []*jnode // an object's values (parallel to keys) or an array's elements
}

// appendJSON prints the tree compactly, as encoding/json does.
func (n *jnode) appendJSON(buf *bytes.Buffer) {
	switch n.kind {
	case jScalar:
		buf.Write(n.raw)
	case jArray:
		buf.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				buf.WriteByte(',')
			}
			e.appendJSON(buf)
		}
		buf.WriteByte(']')
	case jObject:
		buf.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(jsonString(k))
			buf.WriteByte(':')
			n.elems[i].appendJSON(buf)
		}
		buf.WriteByte('}')
	}
}

func (n *jnode) bytes() []byte {
	var buf bytes.Buffer
	n.appendJSON(&buf)
	return buf.Bytes()
}

// jsonString is encoding/json's text of s (HTML-escaped, invalid UTF-8
// replaced), as gopher-json prints strings and map keys.
//
// A string of printable ASCII that encoding/json prints as is (no quote,
// backslash or HTML character) is quoted here without it: object keys and
// most values are such strings, and json.Marshal's encoder state costs
// more than the copy (BenchmarkKarmada's result conversion).
func jsonString(s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return b
		}
	}
	b := make([]byte, len(s)+2)
	b[0] = '"'
	copy(b[1:], s)
	b[len(b)-1] = '"'
	return b
}

// encodeKubeJSON returns the JSON text Karmada's gopher-json encoding gives lv
// (see the rules above). L is the state lv lives in; it identifies the
// null sentinel and views. Errors are *luaapi.ConvertError naming the Lua path
// (`result.spec.containers[2]`) and gopher-json's message.
func encodeKubeJSON(L *lua.LState, lv lua.LValue) ([]byte, error) {
	n, err := kubeEncode(L, lv, "result")
	if err != nil {
		return nil, err
	}
	return n.bytes(), nil
}

// kubeEncode encodes lv into a tree; root names it in error paths.
func kubeEncode(L *lua.LState, lv lua.LValue, root string) (*jnode, error) {
	e := &kubeEncoder{L: L, vs: luaapi.ValuesOf(L), root: root, visited: map[*lua.LTable]bool{}}
	return e.encode(lv)
}

type kubeEncoder struct {
	L       *lua.LState
	vs      *luaapi.Values
	root    string
	visited map[*lua.LTable]bool
	path    luaapi.Path
}

func (e *kubeEncoder) errorf(format string, args ...any) error {
	return e.path.Error(e.root, 1, format, args...)
}

func (e *kubeEncoder) encode(lv lua.LValue) (*jnode, error) {
	switch x := lv.(type) {
	case lua.LBool:
		return &jnode{raw: boolLiteral(bool(x))}, nil
	case lua.LNumber:
		return e.number(float64(x))
	case lua.LString:
		return &jnode{raw: jsonString(string(x))}, nil
	case *lua.LNilType:
		return &jnode{raw: jsonNull}, nil
	case *lua.LTable:
		return e.table(x)
	case *lua.LUserData:
		if x == e.vs.Null {
			return &jnode{raw: jsonNull}, nil
		}
		if v, ok := x.Value.(*luaapi.View); ok {
			return e.goValue(v.Value())
		}
		return nil, e.errorf("cannot encode userdata to JSON")
	}
	return nil, e.errorf("cannot encode %s to JSON", lv.Type())
}

// number prints f as encoding/json prints a float64.
func (e *kubeEncoder) number(f float64) (*jnode, error) {
	text, err := appendNumberText(nil, f)
	if err != nil {
		return nil, e.errorf("%s", err.Error())
	}
	return &jnode{raw: text}, nil
}

// appendNumberText appends encoding/json's text of f to dst.
func appendNumberText(dst []byte, f float64) ([]byte, error) {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		// An integer: encoding/json prints it in 'f' format below 1e21,
		// as strconv does (without json.Marshal's encoder state).
		return strconv.AppendFloat(dst, f, 'f', -1, 64), nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// The texts of the literals, shared by every node of one (nothing writes
// a node's text once it is made).
var (
	jsonNull  = []byte("null")
	jsonTrue  = []byte("true")
	jsonFalse = []byte("false")
)

func boolLiteral(b bool) []byte {
	if b {
		return jsonTrue
	}
	return jsonFalse
}

// table follows gopher-json: the first key decides array or object.
func (e *kubeEncoder) table(tb *lua.LTable) (*jnode, error) {
	if e.path.TooDeep() {
		// A script can nest tables deeper than the Go stack allows a
		// recursive walk; the value bridge refuses the same.
		return nil, e.path.DepthError(e.root, 1)
	}
	if e.visited[tb] {
		return nil, e.errorf(kubeErrNested)
	}
	e.visited[tb] = true
	if src, ok := luaapi.LazySource(e.L, tb); ok {
		// A lazy table the script never filled (Lazy): its Go value,
		// encoded as the table filling it would give. Its nested tables
		// do not exist yet, so none of them can have been met before.
		return e.goValue(src)
	}
	key, value := tb.Next(lua.LNil)
	switch key.Type() {
	case lua.LTNil:
		return &jnode{kind: jArray}, nil
	case lua.LTNumber:
		n := &jnode{kind: jArray}
		expected := lua.LNumber(1)
		for key != lua.LNil {
			if key.Type() != lua.LTNumber {
				return nil, e.errorf(kubeErrInvalidKeys)
			}
			if key != expected {
				return nil, e.errorf(kubeErrSparseArray)
			}
			e.path.Index(int(expected))
			el, err := e.encode(value)
			e.path.Pop()
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, el)
			expected++
			key, value = tb.Next(key)
		}
		return n, nil
	case lua.LTString:
		members := map[string]lua.LValue{}
		for key != lua.LNil {
			if key.Type() != lua.LTString {
				return nil, e.errorf(kubeErrInvalidKeys)
			}
			members[key.String()] = value
			key, value = tb.Next(key)
		}
		return e.object(members)
	}
	return nil, e.errorf(kubeErrInvalidKeys)
}

// object encodes members in encoding/json's map order: sorted keys. Values
// are encoded in that order too, so the table gopher-json meets first
// (and so which of two sharers fails) is the same.
func (e *kubeEncoder) object(members map[string]lua.LValue) (*jnode, error) {
	n := &jnode{kind: jObject, keys: make([]string, 0, len(members))}
	for k := range members {
		n.keys = append(n.keys, k)
	}
	sort.Strings(n.keys)
	n.elems = make([]*jnode, len(n.keys))
	for i, k := range n.keys {
		e.path.Key(k)
		el, err := e.encode(members[k])
		e.path.Pop()
		if err != nil {
			return nil, err
		}
		n.elems[i] = el
	}
	return n, nil
}

// goValue encodes the Go value of a view as gopher-json would encode the
// table Value makes of it: null members and elements are left out, and
// a container left empty is `[]`.
func (e *kubeEncoder) goValue(v any) (*jnode, error) {
	switch x := v.(type) {
	case nil:
		return &jnode{raw: jsonNull}, nil
	case bool:
		return &jnode{raw: boolLiteral(x)}, nil
	case string:
		return &jnode{raw: jsonString(x)}, nil
	case map[string]any:
		if e.path.TooDeep() {
			return nil, e.path.DepthError(e.root, 1) // as table() refuses the table
		}
		n := &jnode{kind: jObject}
		for k, el := range x {
			if el != nil {
				n.keys = append(n.keys, k)
			}
		}
		if len(n.keys) == 0 {
			return &jnode{kind: jArray}, nil
		}
		sort.Strings(n.keys)
		n.elems = make([]*jnode, len(n.keys))
		for i, k := range n.keys {
			e.path.Key(k)
			el, err := e.goValue(x[k])
			e.path.Pop()
			if err != nil {
				return nil, err
			}
			n.elems[i] = el
		}
		return n, nil
	case []any:
		if e.path.TooDeep() {
			return nil, e.path.DepthError(e.root, 1)
		}
		n := &jnode{kind: jArray}
		for _, el := range x {
			if el == nil {
				continue
			}
			e.path.Index(len(n.elems) + 1)
			j, err := e.goValue(el)
			e.path.Pop()
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, j)
		}
		return n, nil
	}
	f, ok := luaapi.GoNumber(v)
	if !ok {
		return nil, e.errorf("cannot encode Go type %T to JSON", v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, e.errorf("json: unsupported value: %v", f)
	}
	return e.number(f)
}
