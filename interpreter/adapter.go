package interpreter

import (
	"context"
	"fmt"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/programapi"
	"github.com/kartalua/karta/karta"
)

// What karta's adapters (package karmada) need of a Program beyond the
// public API, through internal/programapi: see that package.
func init() {
	programapi.Of = func(p any) programapi.Program { return adapterView{p.(*Program)} }
}

// adapterView is a Program seen by an adapter.
type adapterView struct{ p *Program }

var _ programapi.Program = adapterView{}

func (a adapterView) Name() string { return a.p.name }

func (a adapterView) GVK() schema.GroupVersionKind { return a.p.gvk }

func (a adapterView) Karta() *karta.Karta { return a.p.karta }

func (a adapterView) Overridden(hook string) bool { return a.p.overridden[Hook(hook)] }

func (a adapterView) ArgoHealth() bool { return a.p.argo != nil }

func (a adapterView) WithState(ctx context.Context, hook string, f func(ctx context.Context, s programapi.State) error) error {
	return a.p.withState(ctx, Hook(hook), func(ctx context.Context, sd *stateData) error {
		return f(ctx, adapterState{sd})
	})
}

func (a adapterView) ReviseReplica(ctx context.Context, obj map[string]any, n int64) (map[string]any, error) {
	res, err := a.p.runGo(ctx, HookReviseReplica, func(ctx context.Context, _ evaluator) (any, error) {
		revised, _, err := a.p.model.reviseReplica(ctx, obj, n)
		return revised, err
	})
	if err != nil {
		return nil, err
	}
	return res.(map[string]any), nil
}

func (a adapterView) Analysis(expr string) (*jqexpr.Analysis, error) {
	return a.p.model.exprs.analysis(expr)
}

func (a adapterView) Overrides() []programapi.Override {
	out := make([]programapi.Override, len(a.p.overrides))
	for i, o := range a.p.overrides {
		out[i] = programapi.Override{Chunk: o.chunk, Source: o.source, Globals: o.globals, Argo: o.argo}
	}
	return out
}

// Model describes the component model's shape, built once: adapters ask
// for it on every request.
func (a adapterView) Model() *programapi.Model {
	am := &a.p.adapterModel
	am.once.Do(func() { am.m = a.p.describeModel() })
	return am.m
}

func (p *Program) describeModel() *programapi.Model {
	m := p.model
	out := &programapi.Model{MaxReplicas: maxReplicas}
	byModel := map[*compModel]*programapi.Component{}
	for _, c := range m.comps {
		d := &programapi.Component{Name: c.c.Name, Index: c.index, InstanceIDPath: c.c.InstanceIDPath, Style: c.style}
		if c.replicas != nil {
			d.ReplicasPath = c.replicas.expr
		}
		if c.spec != nil {
			d.Spec = &programapi.Path{Field: c.spec.field, Expr: c.spec.expr}
		}
		if c.meta != nil {
			d.Metadata = &programapi.Path{Field: c.meta.field, Expr: c.meta.expr}
		}
		for _, f := range c.fragments {
			d.Fragments = append(d.Fragments, programapi.Fragment{Key: f.key, Path: programapi.Path{Field: f.p.field, Expr: f.p.expr}})
		}
		for _, n := range c.nodes {
			at := make([]string, len(n.at))
			for i, k := range n.at {
				at[i] = k.(string) // view paths of a fragmented definition are keys only
			}
			d.Nodes = append(d.Nodes, programapi.ViewNode{At: at, Key: c.keyOf(n.p), Containers: n.containers})
		}
		if c.parent != nil {
			d.Parent = byModel[c.parent]
		}
		byModel[c] = d
		out.Components = append(out.Components, d)
	}
	if c, err := m.replicaComponent(); err == nil {
		out.ReplicaComponent = byModel[c]
	}
	return out
}

// adapterState is a pooled state held by an adapter's WithState call.
type adapterState struct{ sd *stateData }

func (s adapterState) L() *lua.LState { return s.sd.L }

func (s adapterState) Override(ctx context.Context, hook string) (*lua.LFunction, error) {
	env, err := s.sd.loadOverrides(ctx)
	if err != nil {
		return nil, err
	}
	fn, _ := env.RawGetString(hook).(*lua.LFunction)
	return fn, nil
}

func (s adapterState) Units(ctx context.Context, obj map[string]any, component string, scaled bool) ([]programapi.Unit, error) {
	p := s.sd.p
	c := p.model.byName[component]
	ev := luaEvaluator{s.sd}
	if scaled {
		units, err := p.replicaUnits(ctx, ev, c, obj)
		if err != nil {
			return nil, err
		}
		out := make([]programapi.Unit, len(units))
		for i, u := range units {
			out[i] = programapi.Unit{ID: u.inst.id, Replicas: u.replicas, View: u.view}
		}
		return out, nil
	}
	insts, err := p.model.instancesWith(ctx, ev, c, obj)
	if err != nil {
		return nil, err
	}
	var out []programapi.Unit
	for i := range insts {
		if !insts[i].present {
			continue
		}
		view, _, err := c.view(&insts[i])
		if err != nil {
			return out, fmt.Errorf("component %q instance %q: %w", c.c.Name, insts[i].id, err)
		}
		out = append(out, programapi.Unit{ID: insts[i].id, View: view})
	}
	return out, nil
}

// scaledAncestor reports whether a component above c has a replicas path,
// whose count multiplies c's.
func (c *compModel) scaledAncestor() bool {
	for a := c.parent; a != nil; a = a.parent {
		if a.scale != nil && a.scale.replicas != nil {
			return true
		}
	}
	return false
}

// ancestorFactor is the product of the replicas (1 if undefined) of c's
// scaled ancestors, each of which must have a single instance.
func (p *Program) ancestorFactor(ctx context.Context, ev evaluator, c *compModel, obj map[string]any) (int64, error) {
	factor := int64(1)
	for a := c.parent; a != nil; a = a.parent {
		if a.scale == nil || a.scale.replicas == nil {
			continue
		}
		insts, err := p.model.instancesWith(ctx, ev, a, obj)
		if err != nil {
			return 0, err
		}
		scales, err := p.scales(ctx, ev, a, obj, insts)
		if err != nil {
			return 0, err
		}
		if len(scales) != 1 {
			return 0, fmt.Errorf("component %q: its scaled ancestor %q has %d instances, not one", c.c.Name, a.c.Name, len(scales))
		}
		if r := scales[0].Replicas; r != nil {
			factor *= *r
		}
	}
	return factor, nil
}

// replicaUnit is one present instance of a pod-bearing component with its
// workload-wide replica count and PodTemplateSpec view.
type replicaUnit struct {
	inst     instance
	replicas int64
	view     map[string]any
}

// replicaUnits resolves the present instances of c: each one's replicas (1
// if undefined) times the replicas of c's scaled ancestors, and its view.
// A scaled ancestor must have a single instance, whose replicas (1 if
// undefined) it contributes.
func (p *Program) replicaUnits(ctx context.Context, ev evaluator, c *compModel, obj map[string]any) ([]replicaUnit, error) {
	factor, err := p.ancestorFactor(ctx, ev, c, obj)
	if err != nil {
		return nil, err
	}
	insts, err := p.model.instancesWith(ctx, ev, c, obj)
	if err != nil {
		return nil, err
	}
	scales, err := p.scales(ctx, ev, c, obj, insts)
	if err != nil {
		return nil, err
	}
	var out []replicaUnit
	for i := range insts {
		if !insts[i].present {
			continue
		}
		n := int64(1)
		if scales[i] != nil && scales[i].Replicas != nil {
			n = *scales[i].Replicas
		}
		view, _, err := c.view(&insts[i])
		if err != nil {
			return nil, fmt.Errorf("component %q instance %q: %w", c.c.Name, insts[i].id, err)
		}
		out = append(out, replicaUnit{inst: insts[i], replicas: n * factor, view: view})
	}
	return out, nil
}
