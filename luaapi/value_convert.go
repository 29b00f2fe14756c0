package luaapi

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// MaxExactInt is 2^53, the bound within which a Lua number (a float64)
// represents every integer exactly.
const MaxExactInt = 1 << 53

// MaxDepth is the deepest nesting of arrays and objects that FromLua and
// ToLuaTable convert. Both walk recursively, and a script can build a
// table nested a million deep in a few instructions: unbounded, the walk
// ran for minutes (the cycle check is linear in the depth) or overflowed
// the Go stack, which kills the process. Real objects nest a few dozen
// levels; object.Decode already refuses more than 200.
const MaxDepth = 1000

// tooDeep is the error of a value nested deeper than MaxDepth. Its path
// names the first steps only: the whole path would be thousands of
// characters on one line.
func tooDeep(root string, path []pathSeg, base int) error {
	return &ConvertError{
		Path: formatPath(root, path[:min(len(path), 8)], base) + "…",
		Msg:  fmt.Sprintf("nesting deeper than %d levels", MaxDepth),
	}
}

// ConvertError is a value that cannot cross between Go and Lua as JSON. Path
// names where it sits: the Lua path for FromLua (`result.items[2].x`, with
// Lua's 1-based indexes) and the JSON path for ToLuaTable (`value.items[1]`,
// 0-based).
type ConvertError struct {
	Path string
	Msg  string
}

func (e *ConvertError) Error() string { return e.Path + ": " + e.Msg }

// ConvertOptions tunes FromLuaWith.
type ConvertOptions struct {
	// Root names the converted value in error paths; "result" when empty.
	Root string
	// Number converts a Lua number; nil applies FromLua's policy (NaN and
	// ±Inf are errors, integral values within ±2^53 are int64, others
	// float64).
	Number func(f float64) (any, error)
	// View converts the Go value a view wraps; nil returns it unchanged, so
	// the result aliases the view's value.
	View func(v any) (any, error)
	// Lazy converts the Go value an unfilled JSON lazy table stands for
	// (lazy_json.go); nil applies NormalizeJSON, which gives what
	// converting the filled table would.
	Lazy func(v any) (any, error)
}

// FromLua converts a JSON value in Lua to its Go form: nil, bool, int64
// (integral numbers within ±2^53, -0 included), float64 (other finite
// numbers), string, []any and map[string]any.
//
// A view becomes the very Go value it wraps (no copy), an untouched JSON
// lazy table its Go value normalized (ConvertOptions.Lazy; lazy_json.go),
// and any other lazy table what its filled table converts to. A table becomes an
// array or an object by its marker; an unmarked table is an array when its
// keys are exactly 1..n, an object when they are strings (an empty one is
// an object). Shared sub-tables are fine. Mixed keys, sparse arrays, NaN and
// ±Inf, functions, nil, userdata other than views and Null, and cycles are
// errors of type *ConvertError naming the Lua path, e.g. result.items[2].x.
func FromLua(L *lua.LState, lv lua.LValue) (any, error) {
	return FromLuaWith(L, lv, ConvertOptions{})
}

// FromLuaWith is FromLua with options.
func FromLuaWith(L *lua.LState, lv lua.LValue, opts ConvertOptions) (any, error) {
	if opts.Root == "" {
		opts.Root = "result"
	}
	if opts.Number == nil {
		opts.Number = exactNumber
	}
	c := fromLua{vs: ValuesOf(L), opts: &opts}
	c.meter, _ = L.Context().(*callContext)
	return c.conv(lv)
}

// exactNumber is FromLua's number policy.
func exactNumber(f float64) (any, error) {
	switch {
	case math.IsNaN(f):
		return nil, fmt.Errorf("NaN is not a JSON number")
	case math.IsInf(f, 0):
		return nil, fmt.Errorf("%v is not a JSON number", f)
	case f == math.Trunc(f) && math.Abs(f) <= MaxExactInt:
		return int64(f), nil
	}
	return f, nil
}

// pathSeg is one step of a conversion path: an object key or a Lua index.
type pathSeg struct {
	key   string
	index int
	isKey bool
}

type fromLua struct {
	vs   *Values
	opts *ConvertOptions
	// path and ancestors describe the table being converted; they are only
	// formatted when an error occurs.
	path      []pathSeg
	ancestors []*lua.LTable
	// meter is the running call, charged for every table converted: a
	// table shared n times is copied n times, so a value built by
	// doubling would otherwise expand without bound.
	meter *callContext
	// views holds the conversions of the views met so far.
	views map[*View]any
}

// charge charges the running call for a converted table of n entries.
func (c *fromLua) charge(n int) error {
	if c.meter == nil {
		return nil
	}
	if err := c.meter.ChargeSteps(int64(n) + 1); err != nil {
		return err
	}
	return c.meter.ChargeMemory(tableBytes(n))
}

// tableBytes estimates a Go array or map of n elements.
func tableBytes(n int) int64 { return 48 + 64*int64(n) }

func (c *fromLua) errorf(format string, args ...any) error {
	return &ConvertError{Path: formatPath(c.opts.Root, c.path, 1), Msg: fmt.Sprintf(format, args...)}
}

func (c *fromLua) conv(lv lua.LValue) (any, error) {
	switch x := lv.(type) {
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		v, err := c.opts.Number(float64(x))
		if err != nil {
			return nil, c.errorf("%s", err.Error())
		}
		return v, nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		if lz := c.vs.lazy; lz != nil && x.Metatable == lua.LValue(lz.meta) {
			// A JSON lazy table the script left untouched is its
			// normalized Go value, as a view is (lazy_json.go); any
			// other lazy table converts as its filled table.
			if src, ok := lz.src[x]; ok && src.rules.json {
				return c.lazy(src.v)
			}
			lz.fill(lz.L, x)
		}
		return c.table(x)
	case *lua.LUserData:
		if x == c.vs.Null {
			return nil, nil
		}
		switch w := x.Value.(type) {
		case *View:
			if c.opts.View == nil {
				return w.Value(), nil
			}
			// A view may be referenced many times (`[., .]`); its
			// conversion walks its whole value, so it runs once.
			if v, ok := c.views[w]; ok {
				return v, nil
			}
			if err := c.charge(0); err != nil {
				return nil, err
			}
			v, err := c.opts.View(w.Value())
			if err != nil {
				return nil, c.errorf("%s", err.Error())
			}
			if c.views == nil {
				c.views = map[*View]any{}
			}
			c.views[w] = v
			return v, nil
		case foreign:
			return nil, c.errorf("Go value of type %T is not JSON", w.v)
		}
		return nil, c.errorf("userdata is not a JSON value")
	}
	return nil, c.errorf("Lua %s is not a JSON value", lv.Type().String())
}

// lazy converts the Go value of an unfilled JSON lazy table.
func (c *fromLua) lazy(v any) (any, error) {
	f := c.opts.Lazy
	if f == nil {
		f = NormalizeJSON
	}
	n, err := f(v)
	if err != nil {
		return nil, c.errorf("%s", err.Error())
	}
	return n, nil
}

func (c *fromLua) table(tb *lua.LTable) (any, error) {
	if len(c.ancestors) >= MaxDepth {
		return nil, tooDeep(c.opts.Root, c.path, 1)
	}
	for _, a := range c.ancestors {
		if a == tb {
			return nil, c.errorf("cycle: the table contains itself")
		}
	}
	c.ancestors = append(c.ancestors, tb)
	defer func() { c.ancestors = c.ancestors[:len(c.ancestors)-1] }()
	if c.vs.TableKind(tb) == KindArray {
		return c.array(tb)
	}
	return c.object(tb)
}

func (c *fromLua) array(tb *lua.LTable) (any, error) {
	n := tb.Len()
	count := 0
	var stray lua.LValue
	tb.ForEach(func(k, _ lua.LValue) {
		count++
		if _, ok := k.(lua.LNumber); !ok && stray == nil {
			stray = k
		}
	})
	if stray != nil {
		return nil, c.errorf("mixed array and object keys (key %s)", luaKeyString(stray))
	}
	if count != n {
		return nil, c.errorf("sparse array: %d entries but length %d", count, n)
	}
	if err := c.charge(n); err != nil {
		return nil, err
	}
	out := make([]any, n)
	for i := range n {
		c.path = append(c.path, pathSeg{index: i + 1})
		v, err := c.conv(tb.RawGetInt(i + 1))
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (c *fromLua) object(tb *lua.LTable) (any, error) {
	m := make(map[string]any)
	var badKey bool
	// ForEach visits hash keys in random order; the error reported is that
	// of the first failing key in key order, so that the message is
	// deterministic. Every key is converted once: converting the failing
	// ones again to find the first (as this did) doubled the work at each
	// level of nesting, 2^depth for a deep failure.
	var firstKey string
	var firstErr error
	var chargeErr error
	tb.ForEach(func(k, v lua.LValue) {
		if badKey || chargeErr != nil {
			return
		}
		if chargeErr = c.charge(1); chargeErr != nil {
			return
		}
		s, ok := k.(lua.LString)
		if !ok {
			badKey = true
			return
		}
		c.path = append(c.path, pathSeg{key: string(s), isKey: true})
		x, err := c.conv(v)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			if firstErr == nil || string(s) < firstKey {
				firstKey, firstErr = string(s), err
			}
			return
		}
		m[string(s)] = x
	})
	if chargeErr != nil {
		return nil, chargeErr
	}
	if badKey {
		return nil, c.keyError(tb, tb.Metatable == lua.LValue(c.vs.ObjectMT))
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return m, nil
}

// keyError reports the first non-string key of an object table.
func (c *fromLua) keyError(tb *lua.LTable, marked bool) error {
	var keys []string
	var bad []lua.LValue
	tb.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok {
			keys = append(keys, string(s))
		} else {
			bad = append(bad, k)
		}
	})
	sort.Slice(bad, func(i, j int) bool { return luaKeyString(bad[i]) < luaKeyString(bad[j]) })
	_, isNum := bad[0].(lua.LNumber)
	switch {
	case marked:
		return c.errorf("non-string key %s in an object", luaKeyString(bad[0]))
	case isNum && len(keys) == 0:
		return c.errorf("sparse array: no element at index 1 (key %s)", luaKeyString(bad[0]))
	}
	return c.errorf("mixed array and object keys (key %s)", luaKeyString(bad[0]))
}

func luaKeyString(k lua.LValue) string {
	if s, ok := k.(lua.LString); ok {
		return strconv.Quote(string(s))
	}
	return k.String()
}

// formatPath renders root plus segments; base is the first array index (1
// for Lua paths, 0 for JSON paths).
func formatPath(root string, path []pathSeg, base int) string {
	var sb strings.Builder
	sb.WriteString(root)
	for _, s := range path {
		switch {
		case !s.isKey:
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(s.index + base - 1))
			sb.WriteByte(']')
		case isIdentifier(s.key):
			sb.WriteByte('.')
			sb.WriteString(s.key)
		default:
			sb.WriteByte('[')
			sb.WriteString(strconv.Quote(s.key))
			sb.WriteByte(']')
		}
	}
	return sb.String()
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// ToLuaTable converts a decoded JSON value eagerly into real Lua values for
// user scripts: map[string]any becomes an object table and []any an array
// table, both marked, recursively. A null member of an object is absent,
// and a null element of an array is Null(L); a top-level nil is Null(L).
// Numbers are converted as by ToLuaView. Unsupported Go types and NaN or
// ±Inf are errors of type *ConvertError naming the JSON path
// (`value.items[0]`).
func ToLuaTable(L *lua.LState, v any) (lua.LValue, error) {
	c := toTable{L: L, vs: ValuesOf(L)}
	return c.conv(v)
}

// ToLuaTableCharged is ToLuaTable for values the running call made (the
// outputs of a script's jq): every table is charged to the call's budget
// and memory guard before it is made, so a value that shares subtrees
// cannot expand into more tables than the call may create.
func ToLuaTableCharged(L *lua.LState, v any) (lua.LValue, error) {
	c := toTable{L: L, vs: ValuesOf(L)}
	c.meter, _ = L.Context().(*callContext)
	return c.conv(v)
}

type toTable struct {
	L     *lua.LState
	vs    *Values
	path  []pathSeg
	meter *callContext // nil: not charged
}

// What a converted table costs, measured on gopher-lua 1.1 (a table made
// with its hash part holds a map, a key slice and a key index besides the
// struct): an object of n keys about 650 + 150n bytes, an array about
// 100 + 16n. The guard's constructor prices (guard.go) are for tables a
// script fills itself and grow as it does.
const (
	convertedObjectCost = 700
	convertedKeyCost    = 160
	convertedArrayCost  = 128
	convertedSlotCost   = 24
)

// charge charges the running call for a Lua table of n entries.
func (c *toTable) charge(n int, object bool) error {
	if c.meter == nil {
		return nil
	}
	if err := c.meter.ChargeSteps(int64(n) + 1); err != nil {
		return err
	}
	cost := convertedArrayCost + n*convertedSlotCost
	if object {
		cost = convertedObjectCost + n*convertedKeyCost
	}
	return c.meter.ChargeMemory(int64(cost))
}

func (c *toTable) errorf(format string, args ...any) error {
	return &ConvertError{Path: formatPath("value", c.path, 0), Msg: fmt.Sprintf(format, args...)}
}

func (c *toTable) conv(v any) (lua.LValue, error) {
	switch x := v.(type) {
	case nil:
		return c.vs.Null, nil
	case bool:
		return lua.LBool(x), nil
	case string:
		return lua.LString(x), nil
	case map[string]any:
		if len(c.path) >= MaxDepth {
			return nil, tooDeep("value", c.path, 0)
		}
		if err := c.charge(len(x), true); err != nil {
			return nil, err
		}
		tb := c.vs.NewObject(c.L, len(x))
		// Map order is random: the error reported is that of the first
		// failing key in key order. Each value is converted once (see
		// fromLua.object).
		var firstKey string
		var firstErr error
		for k, e := range x {
			if e == nil {
				continue
			}
			c.path = append(c.path, pathSeg{key: k, isKey: true})
			lv, err := c.conv(e)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				if firstErr == nil || k < firstKey {
					firstKey, firstErr = k, err
				}
				continue
			}
			tb.RawSetString(k, lv)
		}
		if firstErr != nil {
			return nil, firstErr
		}
		return tb, nil
	case []any:
		if len(c.path) >= MaxDepth {
			return nil, tooDeep("value", c.path, 0)
		}
		if err := c.charge(len(x), false); err != nil {
			return nil, err
		}
		tb := c.vs.NewArray(c.L, len(x))
		for i, e := range x {
			c.path = append(c.path, pathSeg{index: i + 1})
			lv, err := c.conv(e)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, err
			}
			tb.RawSetInt(i+1, lv)
		}
		return tb, nil
	}
	f, ok := GoNumber(v)
	if !ok {
		if view, ok := v.(*View); ok {
			return c.conv(view.Value())
		}
		return nil, c.errorf("unsupported Go type %T", v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, c.errorf("%v is not a JSON number", v)
	}
	return lua.LNumber(f), nil
}
