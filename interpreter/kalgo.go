package interpreter

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// The K helpers behind the generated hooks whose work is an algorithm over
// the accessors. Each runs the engine's Go side with a luaEvaluator, so the
// jq paths are the generated Lua accessors of this state.

// K.GetPodSpecs(obj)
func (sd *stateData) luaGetPodSpecs(L *lua.LState) int {
	obj := objectArg(L, 1, "GetPodSpecs: obj")
	res, err := sd.p.podSpecs(L.Context(), luaEvaluator{sd}, obj)
	if err != nil {
		raise(L, err)
	}
	return sd.deliver(L, HookGetPodSpecs, func() (any, error) {
		v, err := jsonValue(res)
		if err != nil {
			return nil, err
		}
		return v.(map[string]any)["items"], nil
	})
}

// K.GetGangGroups(obj, pods)
func (sd *stateData) luaGetGangGroups(L *lua.LState) int {
	obj := objectArg(L, 1, "GetGangGroups: obj")
	podsV, ok := goArg(L, 2, "GetGangGroups: pods").([]any)
	if !ok && L.Get(2) != lua.LNil {
		raise(L, fmt.Errorf("GetGangGroups: pods must be an array of pods"))
	}
	pods := make([]map[string]any, len(podsV))
	for i, pv := range podsV {
		if pods[i], ok = pv.(map[string]any); !ok {
			raise(L, fmt.Errorf("GetGangGroups: pods[%d] must be an object", i))
		}
	}
	res, err := sd.p.gang.gangGroups(L.Context(), luaEvaluator{sd}, obj, pods)
	if err != nil {
		raise(L, err)
	}
	return sd.deliver(L, HookGetGangGroups, func() (any, error) { return jsonValue(res) })
}

// K.ReviseSpec(obj, revisions)
func (sd *stateData) luaReviseSpec(L *lua.LState) int {
	obj := objectArg(L, 1, "ReviseSpec: obj")
	revs, err := decodeRevisions(goArg(L, 2, "ReviseSpec: revisions"), "", false)
	if err != nil {
		raise(L, err)
	}
	revised, _, warnings, err := sd.p.model.reviseSpec(L.Context(), obj, revs)
	if err != nil {
		raise(L, err)
	}
	noteWarnings(L.Context(), warnings)
	return sd.deliver(L, HookReviseSpec, func() (any, error) { return revised, nil })
}

// K.Suspend(obj) and K.Resume(obj)
func (sd *stateData) luaSuspend(L *lua.LState, resume bool) int {
	h := HookSuspend
	if resume {
		h = HookResume
	}
	obj := objectArg(L, 1, string(h)+": obj")
	revised, _, err := sd.p.model.suspend(L.Context(), obj, resume)
	if err != nil {
		raise(L, err)
	}
	return sd.deliver(L, h, func() (any, error) { return revised, nil })
}
