package kube

import (
	"math"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// unstructuredDirect builds the Object Unmarshal gives an Unstructured
// for the table tb (Retain's, ReviseReplica's and AggregateStatus's
// results) straight from the tables, without the encoded tree: what
// unstructuredObject reads from the tree, with the encoder's rules (an
// empty table, or a Go container with no non-null member, is an empty
// array; null members of Go values are left out, the null sentinel's
// kept) and the fix-up's (an empty array below the root becomes `{}`
// where the references hold an empty object at its path, stays `[]`
// where they hold an empty array, and is deleted elsewhere) applied on
// the way. Encoding the tree was most of such a result's conversion. It
// is written by hand because no library reads gopher-lua tables by
// gopher-json's and Karmada's rules (luaapi.FromLua has other ones:
// an empty table is an object there, shared tables are accepted, and
// integers beyond 2^53 are float64).
//
// ok is false wherever the tree route could end differently — an
// encoder error (a table met twice, a sparse or mixed table, NaN, a
// function, a depth near luaapi.MaxDepth), a string or key that is not valid
// UTF-8 (the text replaces it), a reference that is not made of JSON's
// own Go types (the fix-up marshals it, which can fail), a root that is
// not an object with a kind — and the caller takes the tree, which gives
// the same result or its error (TestKubeUnmarshalUnstructuredDirect).
func unstructuredDirect(L *lua.LState, tb *lua.LTable, references []any) (map[string]any, bool) {
	for _, ref := range references {
		if !collectEmptyGo(ref, "", false, nil, nil) {
			return nil, false
		}
	}
	d := &directObject{L: L, vs: luaapi.ValuesOf(L), refs: references, visited: map[*lua.LTable]bool{}}
	v, empty, ok := d.value(tb, 0)
	if !ok || empty {
		return nil, false
	}
	obj, isObject := v.(map[string]any)
	if !isObject {
		return nil, false
	}
	if !hasKind(obj) {
		return nil, false
	}
	return obj, true
}

type directObject struct {
	L       *lua.LState
	vs      *luaapi.Values
	refs    []any
	visited map[*lua.LTable]bool
	// The references' empty arrays and objects by path, collected the
	// first time an empty array needs them.
	emptyArrays, emptyObjects map[string]bool
	// path is the keys from the root to the member being converted
	// (array elements share their array's path, as in the fix-up). It is
	// joined into the fix-up's dotted text only when an empty array needs
	// its decision: joining every member's path was the most frequent
	// allocation of a result's conversion.
	path []string
}

// maxDirectDepth bounds the recursion, far below luaapi.MaxDepth (where the
// encoder fails): deeper values decline.
const maxDirectDepth = 100

// emptyAt is the fix-up's decision for an empty array at d.path below
// the root: its replacement, or keep false to delete it.
func (d *directObject) emptyAt() (v any, keep bool) {
	p := strings.Join(d.path, ".") // joinPath, key by key
	if d.emptyArrays == nil {
		d.emptyArrays, d.emptyObjects = map[string]bool{}, map[string]bool{}
		for _, ref := range d.refs {
			collectEmptyGo(ref, "", false, d.emptyArrays, d.emptyObjects)
		}
	}
	switch {
	case d.emptyObjects[p]:
		return map[string]any{}, true
	case d.emptyArrays[p]:
		return []any{}, true
	}
	return nil, false
}

// member adds a container's member or element at d.path: an empty array
// is decided by the fix-up.
func (d *directObject) member(v any, empty bool) (any, bool) {
	if empty {
		return d.emptyAt()
	}
	return v, true
}

// value converts lv at d.path; empty says the encoder prints it as an
// empty array.
func (d *directObject) value(lv lua.LValue, depth int) (v any, empty, ok bool) {
	switch x := lv.(type) {
	case lua.LBool:
		return bool(x), false, true
	case lua.LNumber:
		v, ok := directNumber(float64(x))
		return v, false, ok
	case lua.LString:
		s := string(x)
		return s, false, utf8.ValidString(s)
	case *lua.LUserData:
		if x == d.vs.Null {
			return nil, false, true
		}
		if view, isView := x.Value.(*luaapi.View); isView {
			return d.goValue(view.Value(), depth)
		}
		return nil, false, false
	case *lua.LTable:
		return d.table(x, depth)
	}
	return nil, false, false
}

func (d *directObject) table(tb *lua.LTable, depth int) (v any, empty, ok bool) {
	if depth > maxDirectDepth || d.visited[tb] {
		return nil, false, false
	}
	d.visited[tb] = true
	if src, isLazy := luaapi.LazySource(d.L, tb); isLazy {
		return d.goValue(src, depth)
	}
	key, value := tb.Next(lua.LNil)
	switch key.Type() {
	case lua.LTNil:
		return nil, true, true
	case lua.LTNumber:
		var a []any
		expected := lua.LNumber(1)
		for key != lua.LNil {
			if key != expected {
				return nil, false, false // sparse or mixed: an encoder error
			}
			el, elEmpty, ok := d.value(value, depth+1)
			if !ok {
				return nil, false, false
			}
			if el, keep := d.member(el, elEmpty); keep {
				a = append(a, el)
			}
			expected++
			key, value = tb.Next(key)
		}
		if a == nil {
			a = []any{} // every element deleted: `[]`, not the fix-up's concern
		}
		return a, false, true
	case lua.LTString:
		m := map[string]any{}
		for key != lua.LNil {
			k, isString := key.(lua.LString)
			if !isString || !utf8.ValidString(string(k)) {
				return nil, false, false
			}
			d.path = append(d.path, string(k))
			el, elEmpty, ok := d.value(value, depth+1)
			if !ok {
				return nil, false, false
			}
			if el, keep := d.member(el, elEmpty); keep {
				m[string(k)] = el
			}
			d.path = d.path[:len(d.path)-1]
			key, value = tb.Next(key)
		}
		return m, false, true
	}
	return nil, false, false
}

// goValue is value for a Go value (a lazy table's or a view's), as the
// encoder's goValue prints it.
func (d *directObject) goValue(v any, depth int) (out any, empty, ok bool) {
	if depth > maxDirectDepth {
		return nil, false, false
	}
	switch x := v.(type) {
	case nil:
		return nil, false, true
	case bool:
		return x, false, true
	case string:
		return x, false, utf8.ValidString(x)
	case map[string]any:
		if goEncodesEmpty(x) {
			return nil, true, true
		}
		m := make(map[string]any, len(x))
		for k, el := range x {
			if el == nil {
				continue
			}
			if !utf8.ValidString(k) {
				return nil, false, false
			}
			d.path = append(d.path, k)
			ev, elEmpty, ok := d.goValue(el, depth+1)
			if !ok {
				return nil, false, false
			}
			if ev, keep := d.member(ev, elEmpty); keep {
				m[k] = ev
			}
			d.path = d.path[:len(d.path)-1]
		}
		return m, false, true
	case []any:
		if goEncodesEmpty(x) {
			return nil, true, true
		}
		a := make([]any, 0, len(x))
		for _, el := range x {
			if el == nil {
				continue
			}
			ev, elEmpty, ok := d.goValue(el, depth+1)
			if !ok {
				return nil, false, false
			}
			if ev, keep := d.member(ev, elEmpty); keep {
				a = append(a, ev)
			}
		}
		return a, false, true
	}
	f, isNumber := luaapi.GoNumber(v)
	if !isNumber {
		return nil, false, false
	}
	n, ok := directNumber(f)
	return n, false, ok
}

// directNumber is the number unstructuredObject reads from the encoder's
// text of f: an int64 where the text parses as one, else a float64.
func directNumber(f float64) (any, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	var buf [32]byte
	text, err := appendNumberText(buf[:0], f)
	if err != nil {
		return nil, false
	}
	return numberOfText(string(text))
}
