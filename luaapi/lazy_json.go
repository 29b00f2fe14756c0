package luaapi

import (
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
// wants it — the K helpers take the object itself, as the Go API's
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
	c := toTable{}
	if _, _, err := c.normalize(v); err != nil {
		return nil, err
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
	c := toTable{build: true}
	n, _, err := c.normalize(v)
	return n, err
}

// normalize returns v normalized and whether that is a new value (false:
// v itself). Without c.build it only checks v: it reports the errors and
// whether v would change, and returns v's own objects and arrays.
func (c *toTable) normalize(v any) (any, bool, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return v, false, nil
	case int64:
		if x > MaxExactInt || x < -MaxExactInt {
			return float64(x), true, nil
		}
		return v, false, nil
	case map[string]any:
		return c.normalizeObject(x)
	case []any:
		return c.normalizeArray(x)
	case *View:
		n, _, err := c.normalize(x.Value())
		return n, true, err
	}
	f, ok := GoNumber(v)
	if !ok {
		return nil, false, c.errorf("unsupported Go type %T", v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false, c.errorf("%v is not a JSON number", v)
	}
	n, _ := exactNumber(f)
	if g, ok := v.(float64); ok {
		if h, ok := n.(float64); ok && math.Float64bits(g) == math.Float64bits(h) {
			return v, false, nil
		}
	}
	return n, true, nil
}

func (c *toTable) normalizeObject(x map[string]any) (any, bool, error) {
	if len(c.path) >= MaxDepth {
		return nil, false, tooDeep("value", c.path, 0)
	}
	var out map[string]any // the copy, once a member changes
	// Map order is random: the error reported is that of the first failing
	// key in key order, as ToLuaTable's.
	var firstKey string
	var firstErr error
	for k, e := range x {
		var n any
		changed := e == nil
		if e != nil {
			c.path = append(c.path, pathSeg{key: k, isKey: true})
			var err error
			n, changed, err = c.normalize(e)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				if firstErr == nil || k < firstKey {
					firstKey, firstErr = k, err
				}
				continue
			}
		}
		if !c.build {
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
		return nil, false, firstErr
	}
	if out == nil {
		return x, false, nil
	}
	return out, true, nil
}

func (c *toTable) normalizeArray(x []any) (any, bool, error) {
	if len(c.path) >= MaxDepth {
		return nil, false, tooDeep("value", c.path, 0)
	}
	var out []any // the copy, once an element changes
	for i, e := range x {
		c.path = append(c.path, pathSeg{index: i + 1})
		n, changed, err := c.normalize(e)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, false, err
		}
		if changed && out == nil && c.build {
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
