package kube

import (
	"encoding/json"
	"math"
	"sort"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// Value converts a Go value into Lua the way Karmada hands values to
// its scripts: Karmada marshals each argument (object, status items, a
// kube helper's result) to JSON and decodes it with gopher-json's
// DecodeValue, so
//
//   - objects and arrays become plain tables (no kind marker: an empty one
//     is just {});
//   - a null object member is absent, and a null array element is dropped
//     (gopher-lua's Append skips nil), so later elements move down;
//   - every number becomes a Lua number (a float64), as JSON decoding gives;
//   - a nil v is Lua nil.
//
// Object keys are inserted in sorted order, so pairs() visits them in the
// same order on every call (Karmada's order is Go's random map order).
// Go types other than JSON's (structs, typed slices) go through
// encoding/json first, as in Karmada. NaN and ±Inf cannot be JSON and are
// *luaapi.ConvertError.
func Value(L *lua.LState, v any) (lua.LValue, error) {
	c := kubeValue{L: L}
	return c.conv(v)
}

type kubeValue struct {
	L    *lua.LState
	path luaapi.Path
}

func (c *kubeValue) conv(v any) (lua.LValue, error) {
	switch x := v.(type) {
	case nil:
		return lua.LNil, nil
	case bool:
		return lua.LBool(x), nil
	case string:
		return lua.LString(x), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		tb := c.L.CreateTable(0, len(x))
		for _, k := range keys {
			c.path.Key(k)
			lv, err := c.conv(x[k])
			c.path.Pop()
			if err != nil {
				return nil, err
			}
			if lv != lua.LNil {
				tb.RawSetString(k, lv)
			}
		}
		return tb, nil
	case []any:
		tb := c.L.CreateTable(len(x), 0)
		for i, e := range x {
			c.path.Index(i + 1)
			lv, err := c.conv(e)
			c.path.Pop()
			if err != nil {
				return nil, err
			}
			tb.Append(lv) // nil is skipped, as in gopher-json
		}
		return tb, nil
	case *luaapi.View:
		return c.conv(x.Value())
	}
	if f, ok := luaapi.GoNumber(v); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, c.path.Error("value", 1, "json: unsupported value: NaN or ±Inf")
		}
		return lua.LNumber(f), nil
	}
	// Any other Go type: as Karmada does, by way of its JSON.
	data, err := json.Marshal(v)
	if err != nil {
		return nil, c.path.Error("value", 1, "%s", err)
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return nil, c.path.Error("value", 1, "%s", err)
	}
	return c.conv(generic)
}
