package interpreter

import (
	"context"
	"fmt"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/karta"
)

// What an adapter needs of a Program beyond its hooks, to answer another
// runtime's operations for the Karta in that runtime's convention
// (package karmada) or to export it (internal/luaexport): the model's
// shape (Shape, shape.go), the checked form it was compiled from
// (Checked), its script chunks (Scripts), a pooled state to run its own
// algorithm on under the Program's limits (WithState), and the one
// revision Karmada asks for (ReviseReplica). They are the Program's public
// API: an adapter reaches nothing else of it.

// ArgoHealth reports whether a script is an Argo CD health script (which
// answers InterpretStatus, and Overridden(HookInterpretHealth) with it).
func (p *Program) ArgoHealth() bool { return p.argo != nil }

// Checked is the checked Karta the Program was compiled from; callers must
// not change it.
func (p *Program) Checked() *karta.Checked { return p.model.exprs.checked }

// Scripts are the Program's script chunks, in load order.
func (p *Program) Scripts() []ScriptChunk {
	out := make([]ScriptChunk, len(p.overrides))
	for i, o := range p.overrides {
		out[i] = ScriptChunk{Chunk: o.chunk, Source: o.source, Globals: o.globals, Argo: o.argo}
	}
	return out
}

// Shape is the component model's shape, built once (adapters ask for it on
// every request); callers must not change it.
func (p *Program) Shape() *Shape {
	am := &p.adapterModel
	am.once.Do(func() { am.m = p.describeModel() })
	return am.m
}

// WithState runs f on a pooled state as hook, under the Program's limits
// (the deadline measured from here). A failure comes back as the Program's
// hooks report theirs: a *luaapi.LimitError or a *HookError naming the
// Karta and the hook; an error f returns that already is a HookError is
// kept as it is.
func (p *Program) WithState(ctx context.Context, hook Hook, f func(ctx context.Context, s *PooledState) error) error {
	return p.withState(ctx, hook, func(ctx context.Context, sd *stateData) error {
		return f(ctx, &PooledState{sd})
	})
}

// ReviseReplica writes n through the replicasPath of the component whose
// replicas the workload scales by (Shape's ReplicaComponent: the root's,
// else the only pod-bearing component's), leaving the rest of obj
// untouched. It is Karmada's ReviseReplica; scripts do not change it.
func (p *Program) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, n int64) (*unstructured.Unstructured, error) {
	res, err := runHook(ctx, p, HookReviseReplica, func(ctx context.Context, ev evaluator) (map[string]any, error) {
		revised, _, err := p.model.reviseReplica(metered(ctx, ev), obj.Object, n)
		return revised, err
	})
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: res}, nil
}

func (p *Program) describeModel() *Shape {
	m := p.model
	out := &Shape{MaxReplicas: maxReplicas}
	byModel := map[*compModel]*ComponentShape{}
	for _, c := range m.comps {
		d := &ComponentShape{Name: c.c.Name, Index: c.index, InstanceIDPath: c.c.InstanceIDPath, IDsFromReferences: c.idsFromRefs, Style: c.style}
		if c.replicas != nil {
			d.ReplicasPath = c.replicas.expr
		}
		if c.spec != nil {
			d.Spec = &ShapePath{Field: c.spec.field, Expr: c.spec.expr}
		}
		if c.meta != nil {
			d.Metadata = &ShapePath{Field: c.meta.field, Expr: c.meta.expr}
		}
		for _, f := range c.fragments {
			d.Fragments = append(d.Fragments, ShapeFragment{Key: f.key, ShapePath: ShapePath{Field: f.p.field, Expr: f.p.expr}})
		}
		for _, n := range c.nodes {
			at := make([]string, len(n.at))
			for i, k := range n.at {
				at[i] = k.(string) // view paths of a fragmented definition are keys only
			}
			d.Nodes = append(d.Nodes, ShapeNode{At: at, Key: c.keyOf(n.p), Containers: n.containers})
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

// PooledState is a pooled state held by one WithState call; it must not
// be kept after the call.
type PooledState struct{ sd *stateData }

// L is the state.
func (s *PooledState) L() *lua.LState { return s.sd.L }

// Override loads the scripts into a fresh environment and returns their
// global function hook, or nil.
func (s *PooledState) Override(ctx context.Context, hook Hook) (*lua.LFunction, error) {
	env, err := s.sd.loadOverrides(ctx)
	if err != nil {
		return nil, err
	}
	fn, _ := env.RawGetString(string(hook)).(*lua.LFunction)
	return fn, nil
}

// Units evaluates the present instances of the pod-bearing component named
// component on obj, each path on the back end chosen for it (the hooks'
// evaluator), metered by this WithState call. Each unit's Replicas is its
// own (1 when undefined) times those of the component's scaled ancestors.
func (s *PooledState) Units(ctx context.Context, obj map[string]any, component string) ([]Unit, error) {
	p := s.sd.p
	c := p.model.byName[component]
	dev := p.newEvaluator(ctx, ctx)
	units, err := p.replicaUnits(ctx, dev, c, obj)
	if err != nil {
		return nil, dev.finish(err)
	}
	out := make([]Unit, len(units))
	for i, u := range units {
		out[i] = Unit{ID: u.inst.id, Replicas: u.replicas, View: u.view}
	}
	return out, dev.finish(nil)
}

// DependencyUnits is the present instances without scaling (Replicas 0,
// no replicas path evaluated), reading of a fragmented component only its
// dependencyFragments (the others are null in the views): the instances
// as GetDependencies reads them. When an instance's view fails the units
// before it come back with the error.
func (s *PooledState) DependencyUnits(ctx context.Context, obj map[string]any, component string) ([]Unit, error) {
	p := s.sd.p
	c := p.model.byName[component]
	dev := p.newEvaluator(ctx, ctx)
	units, err := s.viewUnits(ctx, dev, c, obj, dependencySources)
	return units, dev.finish(err)
}

// viewUnits is the present instances of c with their views, the paths
// read says evaluated; when an instance's view fails the units before it
// come back with the error.
func (s *PooledState) viewUnits(ctx context.Context, ev evaluator, c *compModel, obj map[string]any, read instanceReading) ([]Unit, error) {
	insts, err := s.sd.p.model.instancesInto(ctx, ev, c, obj, nil, read)
	if err != nil {
		return nil, err
	}
	var out []Unit
	for i := range insts {
		if !insts[i].present {
			continue
		}
		view, _, err := c.view(&insts[i])
		if err != nil {
			return out, fmt.Errorf("component %q instance %q: %w", c.c.Name, insts[i].id, err)
		}
		out = append(out, Unit{ID: insts[i].id, View: view})
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
		scales, err := p.scales(ctx, ev, a, obj, insts, replicasOnly)
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
	if c.absent(len(insts)) {
		return nil, nil // absent (instancesInto): its scales are not read either
	}
	scales, err := p.scales(ctx, ev, c, obj, insts, replicasOnly)
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
