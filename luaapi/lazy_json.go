package luaapi

import (
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// JSON lazy tables are what a Karta script receives in place of ToLuaTable's
// eager tables (its hook's object, the answer of karta.generated.<Hook>):
// lazy tables (lazy.go) that fill as ToLuaTable converts — objects and
// arrays marked, a null member absent, a null element Null — so that a
// script observes exactly the eager tables, but a call converts only the
// levels the script touches.
//
// What the script leaves untouched crosses back without tables: FromLua
// gives an unfilled JSON lazy table's Go value as FromLua of the filled
// tables would (NormalizeJSON of it: copied only where a null member or a
// number's Go type differs), or, with ConvertOptions.Lazy, as the caller
// wants it — a Program's generated hooks take the object itself, as the Go API's
// algorithms do, so that an object the script hands back untouched to
// karta.generated.GetPodSpecs costs nothing.

// jsonLazyRules mark a lazy table as a JSON lazy table.
var jsonLazyRules = LazyRules{json: true}

// NewLazyJSON converts v for a script as ToLuaTable does, but lazily; see
// above. Its errors are ToLuaTable's, found by a walk of v before anything
// is handed out, so that they do not depend on what the script reads. L
// must come from NewState.
func NewLazyJSON(L *lua.LState, v any) (lua.LValue, error) {
	lz := lazyOf(L)
	if lz == nil {
		panic("luaapi: NewLazyJSON needs a state made by NewState")
	}
	if _, _, err := normalizeJSON(v, false, 0); err != nil {
		return nil, err.convertError()
	}
	if v == nil {
		return ValuesOf(L).Null, nil
	}
	if w, ok := v.(*View); ok {
		v = w.Value()
	}
	return lz.value(v, &jsonLazyRules), nil
}

// NormalizeJSON returns what FromLua(ToLuaTable(v)) gives, without the
// tables: null members of objects dropped, numbers as FromLua makes them
// (int64 when integral within ±2^53, else float64), views unwrapped. It
// copies only the objects and arrays that change, so an already normal
// value comes back as itself, allocation-free. Its errors are
// ToLuaTable's.
func NormalizeJSON(v any) (any, error) {
	n, _, err := normalizeJSON(v, true, 0)
	if err != nil {
		return nil, err.convertError()
	}
	return n, nil
}

// normError is a normalization error on its way up: its path is collected
// in reverse as the walk unwinds, so that the walk keeps no path of its own
// (and allocates none) while nothing fails.
type normError struct {
	rev  []pathSeg
	msg  string
	deep bool // nesting beyond MaxDepth: the path is cut as tooDeep cuts it
}

func (e *normError) at(seg pathSeg) *normError {
	e.rev = append(e.rev, seg)
	return e
}

// convertError is the *ConvertError ToLuaTable reports for e.
func (e *normError) convertError() error {
	path := make([]pathSeg, len(e.rev))
	for i, s := range e.rev {
		path[len(path)-1-i] = s
	}
	if e.deep {
		return tooDeep("value", path, 0)
	}
	return &ConvertError{Path: formatPath("value", path, 0), Msg: e.msg}
}

// normalizeJSON returns v normalized and whether that is a new value
// (false: v itself). Without build it only checks v: it reports the errors
// and whether v would change, and returns v's own objects and arrays.
func normalizeJSON(v any, build bool, depth int) (any, bool, *normError) {
	switch x := v.(type) {
	case nil, bool, string:
		return v, false, nil
	case int64:
		if x > MaxExactInt || x < -MaxExactInt {
			return float64(x), true, nil
		}
		return v, false, nil
	case map[string]any:
		if depth >= MaxDepth {
			return nil, false, &normError{deep: true}
		}
		return normalizeObject(x, build, depth+1)
	case []any:
		if depth >= MaxDepth {
			return nil, false, &normError{deep: true}
		}
		n, changed, err := normalizeArray(x, build, depth+1)
		if !changed {
			return v, false, err // not x: boxing the slice again allocates
		}
		return n, true, err
	case *View:
		n, _, err := normalizeJSON(x.Value(), build, depth)
		return n, true, err
	}
	f, ok := GoNumber(v)
	if !ok {
		return nil, false, &normError{msg: fmt.Sprintf("unsupported Go type %T", v)}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false, &normError{msg: fmt.Sprintf("%v is not a JSON number", v)}
	}
	if _, ok := v.(float64); ok && (f != math.Trunc(f) || math.Abs(f) > MaxExactInt) {
		return v, false, nil // FromLua's float64 (exactNumber), and boxing it again allocates
	}
	n, _ := exactNumber(f)
	return n, true, nil
}

func normalizeObject(x map[string]any, build bool, depth int) (any, bool, *normError) {
	var out map[string]any // the copy, once a member changes
	// Map order is random: the error reported is that of the first failing
	// key in key order, as ToLuaTable's.
	var firstKey string
	var firstErr *normError
	for k, e := range x {
		var n any
		changed := e == nil
		if e != nil {
			var err *normError
			n, changed, err = normalizeJSON(e, build, depth)
			if err != nil {
				if firstErr == nil || k < firstKey {
					firstKey, firstErr = k, err
				}
				continue
			}
		}
		if !build {
			continue
		}
		if changed && out == nil {
			// The members met so far are normal; the others are
			// replaced below when they change.
			out = make(map[string]any, len(x))
			for k2, e2 := range x {
				if e2 != nil {
					out[k2] = e2
				}
			}
		}
		if changed {
			if n == nil {
				delete(out, k)
			} else {
				out[k] = n
			}
		}
	}
	if firstErr != nil {
		return nil, false, firstErr.at(pathSeg{key: firstKey, isKey: true})
	}
	if out == nil {
		return x, false, nil
	}
	return out, true, nil
}

func normalizeArray(x []any, build bool, depth int) ([]any, bool, *normError) {
	var out []any // the copy, once an element changes
	for i, e := range x {
		n, changed, err := normalizeJSON(e, build, depth)
		if err != nil {
			return nil, false, err.at(pathSeg{index: i + 1})
		}
		if changed && out == nil && build {
			out = make([]any, len(x))
			copy(out, x)
		}
		if out != nil {
			out[i] = n
		}
	}
	if out == nil {
		return x, false, nil
	}
	return out, true, nil
}
