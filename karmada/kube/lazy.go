package kube

import (
	"encoding/json"
	"math"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// Lazy is Value, lazily: a map[string]any or []any made only of
// JSON values becomes a lazy table (luaapi.NewLazy) that converts itself one level
// at a time, by Value's rules (nulls left out, numbers as Lua numbers,
// members inserted in sorted order so that pairs visits them as it visits
// Value's tables). A script that reads obj.spec.replicas converts obj
// and its spec, and leaves the rest of the object in Go.
//
// Whatever would make Value fail (NaN or ±Inf) or take another route
// (a Go type that is not JSON's, which Value converts by way of its
// JSON; a *luaapi.View) is found first, on the whole value, and then Value
// converts it eagerly: results and errors are Value's either way.
//
// Unmarshal and the kube helpers read an unfilled lazy table straight
// from its Go value. The caller calls luaapi.EndLazy when it is done with the
// call's results. In a state luaapi.NewState did not make, Lazy is Value.
func Lazy(L *lua.LState, v any) (lua.LValue, error) {
	if !luaapi.HasLazy(L) {
		return Value(L, v)
	}
	if !kubePlain(v) {
		// A Go type of its own (Karmada's status items): Value
		// converts its JSON, which is JSON's Go values.
		if g, ok := kubeGeneric(v); ok {
			return luaapi.NewLazy(L, g, &kubeLazyRules), nil
		}
		return Value(L, v)
	}
	return luaapi.NewLazy(L, v, &kubeLazyRules), nil
}

// kubeGeneric is the JSON value Value converts v by way of, for a Go
// value of a type of its own (not JSON's, not a number, not a *luaapi.View);
// ok is false for anything else or when encoding/json fails.
func kubeGeneric(v any) (any, bool) {
	switch v.(type) {
	case nil, bool, string, map[string]any, []any, *luaapi.View:
		return nil, false
	}
	if _, ok := luaapi.GoNumber(v); ok {
		return nil, false
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return nil, false
	}
	return generic, kubePlain(generic)
}

// kubeLazyRules are Value's rules for lazy tables.
var kubeLazyRules = luaapi.LazyRules{SortKeys: true}

// kubePlain reports whether Value converts v without an error and
// without a detour through encoding/json: JSON's Go values, finite numbers.
func kubePlain(v any) bool {
	switch x := v.(type) {
	case nil, bool, string:
		return true
	case map[string]any:
		for _, e := range x {
			if !kubePlain(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !kubePlain(e) {
				return false
			}
		}
		return true
	}
	f, ok := luaapi.GoNumber(v)
	return ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}
