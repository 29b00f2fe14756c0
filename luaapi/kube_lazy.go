package luaapi

import (
	"encoding/json"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// KubeLazy is KubeValue, lazily: a map[string]any or []any made only of
// JSON values becomes a lazy table (NewLazy) that converts itself one level
// at a time, by KubeValue's rules (nulls left out, numbers as Lua numbers,
// members inserted in sorted order so that pairs visits them as it visits
// KubeValue's tables). A script that reads obj.spec.replicas converts obj
// and its spec, and leaves the rest of the object in Go.
//
// Whatever would make KubeValue fail (NaN or ±Inf) or take another route
// (a Go type that is not JSON's, which KubeValue converts by way of its
// JSON; a *View) is found first, on the whole value, and then KubeValue
// converts it eagerly: results and errors are KubeValue's either way.
//
// KubeUnmarshal and the kube helpers read an unfilled lazy table straight
// from its Go value. The caller calls EndLazy when it is done with the
// call's results. In a state NewState did not make, KubeLazy is KubeValue.
func KubeLazy(L *lua.LState, v any) (lua.LValue, error) {
	if lazyOf(L) == nil {
		return KubeValue(L, v)
	}
	if !kubePlain(v) {
		// A Go type of its own (Karmada's status items): KubeValue
		// converts its JSON, which is JSON's Go values.
		if g, ok := kubeGeneric(v); ok {
			return NewLazy(L, g, &kubeLazyRules), nil
		}
		return KubeValue(L, v)
	}
	return NewLazy(L, v, &kubeLazyRules), nil
}

// kubeGeneric is the JSON value KubeValue converts v by way of, for a Go
// value of a type of its own (not JSON's, not a number, not a *View);
// ok is false for anything else or when encoding/json fails.
func kubeGeneric(v any) (any, bool) {
	switch v.(type) {
	case nil, bool, string, map[string]any, []any, *View:
		return nil, false
	}
	if _, ok := GoNumber(v); ok {
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

// kubeLazyRules are KubeValue's rules for lazy tables.
var kubeLazyRules = LazyRules{SortKeys: true}

// kubePlain reports whether KubeValue converts v without an error and
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
	f, ok := GoNumber(v)
	return ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}
