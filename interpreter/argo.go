package interpreter

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/argohealth"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// argoStatuses maps Argo CD health words to generic statuses (docs/karta.md,
// "Overrides and the Argo CD form").
// The words and the reading of a script's result are package argo's, so
// that `karta argo health` and this override agree.
var argoStatuses = map[string]karta.Status{
	argohealth.StatusHealthy:     karta.StatusRunning,
	argohealth.StatusProgressing: karta.StatusInitializing,
	argohealth.StatusDegraded:    karta.StatusDegraded,
	argohealth.StatusSuspended:   karta.StatusSuspended,
	argohealth.StatusMissing:     karta.StatusUndefined,
	argohealth.StatusUnknown:     karta.StatusUndefined,
}

// argoStatus is InterpretStatus when an override is an Argo CD health
// script: the script's word decides the status; the phase and conditions
// still come from the Karta's status definition (its plan, run on this
// call).
func (p *Program) argoStatus(ctx context.Context, obj *unstructured.Unstructured) (*StatusResult, error) {
	var res StatusResult
	var health argohealth.Health
	err := p.withState(ctx, HookInterpretStatus, func(ctx context.Context, sd *stateData) error {
		var err error
		if health, err = sd.runArgo(obj.Object); err != nil {
			return err
		}
		// The phase and conditions: the status plan on this call.
		r, err := runAlgorithm(sd.L, sd, func(ev evaluator) (*StatusResult, error) {
			return p.status.run(ctx, ev.(*directEvaluator), obj.Object)
		})
		if err == nil {
			res = *r
		}
		return err
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
	if err := argohealth.CheckStatus(word); err != nil {
		return "", err
	}
	if word == "" {
		return karta.StatusUndefined, nil
	}
	st, ok := argoStatuses[word]
	if !ok {
		return "", fmt.Errorf("Argo CD health status %q has no generic status (a karta bug)", word)
	}
	return st, nil
}

// runArgo runs the Argo CD health script with the object as the global
// obj, in a fresh environment.
func (sd *stateData) runArgo(obj map[string]any) (argohealth.Health, error) {
	L := sd.L
	env := luaapi.NewEnv(L)
	t, err := luaapi.ToLuaTable(L, obj)
	if err != nil {
		return argohealth.Health{}, fmt.Errorf("object: %w", err)
	}
	env.RawSetString("obj", t)
	L.Push(luaapi.Instantiate(L, sd.p.argo.proto, env))
	L.Call(0, 1)
	v := L.Get(-1)
	L.Pop(1)
	return argohealth.FromLua(v)
}
