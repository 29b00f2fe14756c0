package argo

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// Values cross between Go and an Argo CD script the way Argo CD's util/lua
// moves them: the object goes in by its decodeValue, results come out by
// layeh.com/gopher-json's encoding (which Argo CD then unmarshals). Both
// rules are reproduced here, quirks included, because what a script sees
// and what its result means depend on them.

// Errors of the encoding, in gopher-json's words.
var (
	errNested      = errors.New("cannot encode recursively nested tables to JSON")
	errSparseArray = errors.New("cannot encode sparse array")
	errInvalidKeys = errors.New("cannot encode mixed or invalid key types")
	errTooDeep     = fmt.Errorf("cannot encode tables nested deeper than %d levels", luaapi.MaxDepth)
)

// toLua converts the object for a script as Argo CD's decodeValue does:
// objects and arrays become plain tables (no markers: an empty one is just
// an empty table), a null member is absent, a null array element is left
// out (gopher-lua's Append skips nil, so later elements move up), numbers
// become Lua numbers. A Go value of another type is an error here (Argo CD
// would turn it into nil silently; karta's decoders never make one).
func toLua(L *lua.LState, v any, depth int) (lua.LValue, error) {
	switch x := v.(type) {
	case nil:
		return lua.LNil, nil
	case bool:
		return lua.LBool(x), nil
	case string:
		return lua.LString(x), nil
	case map[string]any:
		if depth >= luaapi.MaxDepth {
			return nil, errTooDeepObject
		}
		tb := L.CreateTable(0, len(x))
		for k, e := range x {
			lv, err := toLua(L, e, depth+1)
			if err != nil {
				return nil, err
			}
			if lv != lua.LNil {
				tb.RawSetString(k, lv)
			}
		}
		return tb, nil
	case []any:
		if depth >= luaapi.MaxDepth {
			return nil, errTooDeepObject
		}
		tb := L.CreateTable(len(x), 0)
		for _, e := range x {
			lv, err := toLua(L, e, depth+1)
			if err != nil {
				return nil, err
			}
			tb.Append(lv)
		}
		return tb, nil
	}
	if f, ok := luaapi.GoNumber(v); ok {
		return lua.LNumber(f), nil
	}
	return nil, &luaapi.ConvertError{Path: "obj", Msg: fmt.Sprintf("a %T is not a JSON value", v)}
}

var errTooDeepObject = &luaapi.ConvertError{Path: "obj", Msg: fmt.Sprintf("nested deeper than %d levels", luaapi.MaxDepth)}

// argoRules are toLua's rules for lazy tables (luaapi.NewLazy): members in
// Go's map order, as toLua inserts them (lazy scalars are toLua's).
var argoRules = luaapi.LazyRules{}

// checkObject is the error toLua(v) would return, without converting: a
// value nested too deep, or a Go value that is not JSON.
func checkObject(v any, depth int) error {
	switch x := v.(type) {
	case nil, bool, string:
		return nil
	case map[string]any:
		if depth >= luaapi.MaxDepth {
			return errTooDeepObject
		}
		for _, e := range x {
			if err := checkObject(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if depth >= luaapi.MaxDepth {
			return errTooDeepObject
		}
		for _, e := range x {
			if err := checkObject(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if _, ok := luaapi.GoNumber(v); ok {
		return nil
	}
	return &luaapi.ConvertError{Path: "obj", Msg: fmt.Sprintf("a %T is not a JSON value", v)}
}

// fromLua is gopher-json's Encode followed by encoding/json's decoding into
// an interface{}: the JSON value a script's result stands for, as
// map[string]any, []any, float64, string, bool or nil.
//
// As in gopher-json, an empty table is an empty array; a table whose first
// key (in gopher-lua's iteration order) is a number is an array and must
// hold exactly the keys 1..n; one whose first key is a string is an object
// and must hold only string keys; a table met twice — a cycle, or the same
// table under two keys — is an error. Functions, userdata, threads and
// channels are errors, and so are NaN and the infinities (encoding/json
// refuses them). Strings that are not UTF-8 get U+FFFD for each bad byte,
// as encoding/json writes them.
//
// A lazy table the script never touched (luaapi.LazySource) is read
// straight from its Go value, as goJSON: what converting it to tables and
// encoding them gives, without the tables.
func fromLua(L *lua.LState, v lua.LValue) (any, error) {
	e := encoder{L: L, visited: map[*lua.LTable]bool{}}
	return e.value(v, 0)
}

type encoder struct {
	L       *lua.LState
	visited map[*lua.LTable]bool
}

func (e *encoder) value(v lua.LValue, depth int) (any, error) {
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, &json.UnsupportedValueError{Str: fmt.Sprint(f)}
		}
		return f, nil
	case lua.LString:
		return validUTF8(string(x)), nil
	case *lua.LTable:
		return e.table(x, depth)
	}
	return nil, fmt.Errorf("cannot encode %s to JSON", v.Type())
}

func (e *encoder) table(tb *lua.LTable, depth int) (any, error) {
	if e.visited[tb] {
		return nil, errNested
	}
	e.visited[tb] = true
	if depth >= luaapi.MaxDepth {
		return nil, errTooDeep
	}
	if src, ok := luaapi.LazySource(e.L, tb); ok {
		return goJSON(src, depth)
	}
	key, val := tb.Next(lua.LNil)
	switch key.Type() {
	case lua.LTNil:
		return []any{}, nil
	case lua.LTNumber:
		arr := make([]any, 0, tb.Len())
		want := lua.LNumber(1)
		for key != lua.LNil {
			n, ok := key.(lua.LNumber)
			if !ok {
				return nil, errInvalidKeys
			}
			if n != want {
				return nil, errSparseArray
			}
			x, err := e.value(val, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, x)
			want++
			key, val = tb.Next(key)
		}
		return arr, nil
	case lua.LTString:
		obj := make(map[string]any)
		for key != lua.LNil {
			s, ok := key.(lua.LString)
			if !ok {
				return nil, errInvalidKeys
			}
			x, err := e.value(val, depth+1)
			if err != nil {
				return nil, err
			}
			obj[validUTF8(string(s))] = x
			key, val = tb.Next(key)
		}
		return obj, nil
	}
	return nil, errInvalidKeys
}

// goJSON is toLua of v (which checkObject accepted) at depth followed by
// fromLua of the tables it makes: an object or array without members is an
// empty array (an empty table), null members and elements are left out,
// numbers are float64 (NaN and the infinities are errors), strings valid
// UTF-8. It builds new maps and slices: the caller may change them.
func goJSON(v any, depth int) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		return validUTF8(x), nil
	case map[string]any:
		if depth >= luaapi.MaxDepth {
			return nil, errTooDeep
		}
		obj := make(map[string]any, len(x))
		for k, e := range x {
			if e == nil {
				continue
			}
			j, err := goJSON(e, depth+1)
			if err != nil {
				return nil, err
			}
			obj[validUTF8(k)] = j
		}
		if len(obj) == 0 {
			return []any{}, nil
		}
		return obj, nil
	case []any:
		if depth >= luaapi.MaxDepth {
			return nil, errTooDeep
		}
		arr := make([]any, 0, len(x))
		for _, e := range x {
			if e == nil {
				continue
			}
			j, err := goJSON(e, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, j)
		}
		return arr, nil
	}
	f, _ := luaapi.GoNumber(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &json.UnsupportedValueError{Str: fmt.Sprint(f)}
	}
	return f, nil
}

// validUTF8 is s as encoding/json writes it: each byte that is not part of
// valid UTF-8 becomes U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b = append(b, r) // RuneError for a bad byte, with n == 1
		i += n
	}
	return string(b)
}
