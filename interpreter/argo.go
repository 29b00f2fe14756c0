package interpreter

import (
	"context"
	"fmt"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// argoStatuses maps Argo CD health words to generic statuses (SPEC §10.3).
var argoStatuses = map[string]karta.Status{
	"Healthy":     karta.StatusRunning,
	"Progressing": karta.StatusInitializing,
	"Degraded":    karta.StatusDegraded,
	"Suspended":   karta.StatusSuspended,
	"Missing":     karta.StatusUndefined,
	"Unknown":     karta.StatusUndefined,
}

// ArgoHealth is the result of an Argo CD health script.
type ArgoHealth struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// argoStatus is InterpretStatus when an override is an Argo CD health
// script: the script's word decides the status; the phase and conditions
// still come from the Karta's generated hook.
func (p *Program) argoStatus(ctx context.Context, obj *unstructured.Unstructured) (*StatusResult, error) {
	var res StatusResult
	var health ArgoHealth
	err := p.withState(ctx, HookInterpretStatus, func(ctx context.Context, sd *stateData) error {
		var err error
		if health, err = sd.runArgo(obj.Object); err != nil {
			return err
		}
		L := sd.L
		L.Push(sd.generated.RawGetString(string(HookInterpretStatus)))
		L.Push(luaapi.ToLuaView(L, obj.Object))
		L.Call(1, 1)
		v := L.Get(-1)
		L.Pop(1)
		return decodeStatus(L, v, &res)
	})
	if err != nil {
		return nil, err
	}
	st, err := argoToStatus(health.Status)
	if err != nil {
		return nil, p.hookError(HookInterpretStatus, err)
	}
	res.Status, res.Matched, res.Message = st, []karta.Status{}, health.Message
	if st != karta.StatusUndefined {
		res.Matched = []karta.Status{st}
	}
	return &res, nil
}

func argoToStatus(word string) (karta.Status, error) {
	if word == "" {
		return karta.StatusUndefined, nil
	}
	st, ok := argoStatuses[word]
	if !ok {
		return "", fmt.Errorf("Argo CD health status %q is not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown", word)
	}
	return st, nil
}

// runArgo runs the Argo CD health script with the object as the global
// obj, in a fresh environment.
func (sd *stateData) runArgo(obj map[string]any) (ArgoHealth, error) {
	L := sd.L
	env := luaapi.NewEnv(L)
	t, err := luaapi.ToLuaTable(L, obj)
	if err != nil {
		return ArgoHealth{}, fmt.Errorf("object: %w", err)
	}
	env.RawSetString("obj", t)
	L.Push(luaapi.Instantiate(L, sd.p.argo.proto, env))
	L.Call(0, 1)
	v := L.Get(-1)
	L.Pop(1)
	var h ArgoHealth
	if v == lua.LNil {
		return h, nil
	}
	tbl, ok := v.(*lua.LTable)
	if !ok {
		return h, fmt.Errorf("an Argo CD health script must return {status=..., message=...}, got %s", v.Type())
	}
	if s, ok := tbl.RawGetString("status").(lua.LString); ok {
		h.Status = string(s)
	} else if tbl.RawGetString("status") != lua.LNil {
		return h, fmt.Errorf("an Argo CD health script's status must be a string")
	}
	if m, ok := tbl.RawGetString("message").(lua.LString); ok {
		h.Message = string(m)
	}
	return h, nil
}
