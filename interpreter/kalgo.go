package interpreter

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/kartalua/karta/luaapi"
)

// The generated hooks a script calls as karta.generated.<Hook> whose work
// is an algorithm over the Karta's paths: GetPodSpecs, GetGangGroups and
// ReviseSpec on the call's evaluator (runAlgorithm), Suspend and Resume on
// gojq under this call's context.

// karta.generated.GetPodSpecs(obj)
func (sd *stateData) luaGetPodSpecs(L *lua.LState) int {
	obj := objectArg(L, 1, "GetPodSpecs: obj")
	res, err := runAlgorithm(L, sd, func(ev evaluator) (*PodSpecs, error) { return sd.p.podSpecs(L.Context(), ev, obj) })
	if err != nil {
		raise(L, err)
	}
	// The answer goes to the script as JSON lazy tables, of its Go JSON
	// value (podspecs_lua.go).
	lv, err := luaapi.NewLazyJSON(L, podSpecsValue(res))
	if err != nil {
		raise(L, fmt.Errorf("%s: %w", HookGetPodSpecs, err))
	}
	L.Push(lv)
	return 1
}

// karta.generated.GetGangGroups(obj, pods)
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
	res, err := runAlgorithm(L, sd, func(ev evaluator) (*GangResult, error) {
		return sd.p.gang.gangGroups(L.Context(), ev, obj, pods)
	})
	if err != nil {
		raise(L, err)
	}
	return sd.deliver(L, HookGetGangGroups, func() (any, error) { return jsonValue(res) })
}

// karta.generated.ReviseSpec(obj, revisions)
func (sd *stateData) luaReviseSpec(L *lua.LState) int {
	obj := objectArg(L, 1, "ReviseSpec: obj")
	revs, err := decodeRevisions(goArg(L, 2, "ReviseSpec: revisions"), "", false)
	if err != nil {
		raise(L, err)
	}
	type revision struct {
		obj      map[string]any
		warnings []ReviseWarning
	}
	res, err := runAlgorithm(L, sd, func(ev evaluator) (revision, error) {
		dev := ev.(*directEvaluator)
		if err := sd.p.chargeRevisions(L.Context(), dev, revs); err != nil {
			return revision{}, err
		}
		revised, _, warnings, err := sd.p.model.revise(L.Context(), dev, obj, revs)
		return revision{revised, warnings}, err
	})
	if err != nil {
		raise(L, err)
	}
	revised, warnings := res.obj, res.warnings
	noteWarnings(L.Context(), warnings)
	return sd.deliver(L, HookReviseSpec, func() (any, error) { return revised, nil })
}

// karta.generated.Suspend(obj) and karta.generated.Resume(obj)
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

// runAlgorithm runs a generated hook's Go algorithm for a script that
// called karta.generated.<Hook>, as the Go API runs it for a hook no
// script overrides: on the call's evaluator (eval_direct.go), each
// expression on its chosen back end, the exact one metered by this Lua
// call's own context. An override that only adds to the generated answer
// then costs its own Lua and the conversions; the answer is the Go API's.
// A panic is not recovered here: the protected Lua call reports it.
func runAlgorithm[T any](L *lua.LState, sd *stateData, f func(ev evaluator) (T, error)) (T, error) {
	ctx := L.Context()
	ev := sd.p.newEvaluator(ctx, ctx)
	res, err := f(ev)
	return res, ev.finish(err)
}
