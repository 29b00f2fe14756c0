package interpreter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// The Karmada resource interpreter hooks of a Program (docs/karta.md,
// "Hooks"), run in process. Each runs on a pooled state under the Program's
// limits. When a user chunk overrides the hook, the override is called with
// Karmada's calling convention and its result converted by Karmada's rules
// (luaapi.KubeUnmarshal); otherwise the Karta's own algorithm runs, with
// kube.accuratePodRequirements and kube.getPodDependencies called through
// the state's kube module so that results are exactly Karmada's.

// maxComponentName is the longest component name Karmada accepts.
const maxComponentName = 32

// GetReplicas is Karmada's InterpretReplica. It is defined when there is
// exactly one pod-bearing component and it has one present instance: the
// replicas are its own (1 if undefined) times those of its scaled
// ancestors, the requirements kube.accuratePodRequirements of its
// PodTemplateSpec view.
func (p *Program) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *karmada.ReplicaRequirements, error) {
	var (
		n   int32
		req *karmada.ReplicaRequirements
	)
	if p.overridden[HookGetReplicas] {
		err := p.callKarmada(ctx, HookGetReplicas, obj, nil, 2, func(L *lua.LState, res []lua.LValue) error {
			num, ok := res[0].(lua.LNumber)
			if !ok {
				return fmt.Errorf("result type %s is not number", res[0].Type())
			}
			n = int32(num)
			switch r := res[1].(type) {
			case *lua.LNilType:
				return nil
			case *lua.LTable:
				req = &karmada.ReplicaRequirements{}
				return luaapi.KubeUnmarshal(L, r, req)
			default:
				return fmt.Errorf("requires: %s is not a table", res[1].Type())
			}
		})
		return n, req, err
	}
	err := p.withState(ctx, HookGetReplicas, func(ctx context.Context, sd *stateData) error {
		c, err := p.model.singleBearing()
		if err != nil {
			return err
		}
		ev := luaEvaluator{sd}
		units, err := p.replicaUnits(ctx, ev, c, obj.Object)
		if err != nil {
			return err
		}
		if len(units) != 1 {
			ids := make([]string, len(units))
			for i, u := range units {
				ids[i] = u.inst.id
			}
			return &NotDefinedError{Karta: p.name, Hook: HookGetReplicas,
				Reason: fmt.Sprintf("component %q has %d present instances [%s], not one", c.c.Name, len(units), strings.Join(ids, " "))}
		}
		n = int32(units[0].replicas)
		r := &karmada.ReplicaRequirements{}
		if err := kubeCall(sd.L, "accuratePodRequirements", []any{units[0].view}, r); err != nil {
			return err
		}
		if !emptyRequirements(r.NodeClaim, r.ResourceRequest) || r.Namespace != "" || r.PriorityClassName != "" {
			req = r
		}
		return nil
	})
	if err != nil {
		return 0, nil, unwrapNotDefined(err)
	}
	return n, req, nil
}

// GetComponents is Karmada's InterpretComponent: one component per present
// instance of each pod-bearing component, named after the component, or
// after the instance id when the component has instances (at most 32
// characters and unique, else an error), with the workload-wide replicas
// and kube.accuratePodRequirements of the instance's view.
func (p *Program) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.Component, error) {
	var out []karmada.Component
	if p.overridden[HookGetComponents] {
		err := p.callKarmada(ctx, HookGetComponents, obj, nil, 1, decodeKarmadaList("components", &out))
		return out, err
	}
	err := p.withState(ctx, HookGetComponents, func(ctx context.Context, sd *stateData) error {
		ev := luaEvaluator{sd}
		seen := map[string]string{}
		bearing := false
		for _, c := range p.model.comps {
			if !c.podBearing() {
				continue
			}
			bearing = true
			units, err := p.replicaUnits(ctx, ev, c, obj.Object)
			if err != nil {
				return err
			}
			for _, u := range units {
				name := c.c.Name
				if c.ids != nil {
					name = u.inst.id
				}
				if len(name) > maxComponentName {
					return fmt.Errorf("component %q instance %q: the Karmada component name %q is longer than %d characters", c.c.Name, u.inst.id, name, maxComponentName)
				}
				if prev, dup := seen[name]; dup {
					return fmt.Errorf("component %q instance %q: the Karmada component name %q is already used by %s", c.c.Name, u.inst.id, name, prev)
				}
				seen[name] = fmt.Sprintf("component %q instance %q", c.c.Name, u.inst.id)
				var req karmada.ComponentReplicaRequirements
				if err := kubeCall(sd.L, "accuratePodRequirements", []any{u.view}, &req); err != nil {
					return fmt.Errorf("component %q instance %q: %w", c.c.Name, u.inst.id, err)
				}
				comp := karmada.Component{Name: name, Replicas: int32(u.replicas)}
				if !emptyRequirements(req.NodeClaim, req.ResourceRequest) || req.PriorityClassName != "" {
					comp.ReplicaRequirements = &req
				}
				out = append(out, comp)
			}
		}
		if !bearing {
			return &NotDefinedError{Karta: p.name, Hook: HookGetComponents, Reason: "no component is pod-bearing"}
		}
		return nil
	})
	if err != nil {
		return nil, unwrapNotDefined(err)
	}
	if out == nil {
		out = []karmada.Component{}
	}
	return out, nil
}

// ReviseReplica is Karmada's ReviseReplica: n written through the root's
// replicasPath if it has one, else through that of the only pod-bearing
// component, which must have one instance (model.replicaComponent).
func (p *Program) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, n int64) (*unstructured.Unstructured, error) {
	if p.overridden[HookReviseReplica] {
		out := &unstructured.Unstructured{}
		err := p.callKarmada(ctx, HookReviseReplica, obj, []any{n}, 1, func(L *lua.LState, res []lua.LValue) error {
			tb, ok := res[0].(*lua.LTable)
			if !ok {
				return fmt.Errorf("result: %s is not a table", res[0].Type())
			}
			return luaapi.KubeUnmarshal(L, tb, out, obj.Object)
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	res, err := p.runGo(ctx, HookReviseReplica, func(ctx context.Context, _ evaluator) (any, error) {
		revised, _, err := p.model.reviseReplica(ctx, obj.Object, n)
		if err != nil {
			return nil, err
		}
		return &unstructured.Unstructured{Object: revised}, nil
	})
	if err != nil {
		return nil, err
	}
	return res.(*unstructured.Unstructured), nil
}

// InterpretHealth is Karmada's InterpretHealth: true iff the primary
// status (InterpretStatus, an Argo CD health script included) is Running
// or Completed.
func (p *Program) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	if p.overridden[HookInterpretHealth] && p.argo == nil {
		var healthy bool
		err := p.callKarmada(ctx, HookInterpretHealth, obj, nil, 1, func(_ *lua.LState, res []lua.LValue) error {
			b, ok := res[0].(lua.LBool)
			if !ok {
				return fmt.Errorf("result type %s is not bool", res[0].Type())
			}
			healthy = bool(b)
			return nil
		})
		return healthy, err
	}
	st, err := p.InterpretStatus(ctx, obj)
	if err != nil {
		return false, err
	}
	return healthyStatus(st.Status), nil
}

func healthyStatus(s karta.Status) bool {
	return s == karta.StatusRunning || s == karta.StatusCompleted
}

// ReflectStatus is Karmada's InterpretStatus: the object's status, or {}
// when it has none (or it is not an object).
func (p *Program) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error) {
	if p.overridden[HookReflectStatus] {
		var status map[string]any
		err := p.callKarmada(ctx, HookReflectStatus, obj, nil, 1, func(L *lua.LState, res []lua.LValue) error {
			tb, ok := res[0].(*lua.LTable)
			if !ok {
				return fmt.Errorf("result: %s is not a table", res[0].Type())
			}
			raw, err := luaapi.KubeResultJSON(L, tb, true)
			if err != nil {
				return err
			}
			return json.Unmarshal(raw, &status)
		})
		if status == nil && err == nil {
			status = map[string]any{}
		}
		return status, err
	}
	res, err := p.runGo(ctx, HookReflectStatus, func(ctx context.Context, _ evaluator) (any, error) {
		if s, ok := obj.Object["status"].(map[string]any); ok {
			return s, nil
		}
		return map[string]any{}, nil
	})
	if err != nil {
		return nil, err
	}
	return res.(map[string]any), nil
}

// AggregateStatus is Karmada's AggregateStatus. The rule: among the items
// that were applied and carry a status, the member status whose generic
// status (InterpretStatus of desired with that status) is the most
// decisive by karta.StatusPrecedence (Failed, Completed, Resuming,
// Suspending, Suspended, Degraded, Running, Initializing, then Undefined)
// wins, the first such item in order on a tie; the result is desired with
// its status replaced by that member's. Without such an item, desired is
// returned unchanged.
func (p *Program) AggregateStatus(ctx context.Context, desired *unstructured.Unstructured, items []karmada.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	if p.overridden[HookAggregateStatus] {
		var extra any // nil items are Lua nil, as in Karmada
		if items != nil {
			extra = items
		}
		out := &unstructured.Unstructured{}
		err := p.callKarmada(ctx, HookAggregateStatus, desired, []any{extra}, 1, func(L *lua.LState, res []lua.LValue) error {
			tb, ok := res[0].(*lua.LTable)
			if !ok {
				return fmt.Errorf("result: %s is not a table", res[0].Type())
			}
			return luaapi.KubeUnmarshal(L, tb, out)
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	best, bestRank := map[string]any(nil), -1
	for i, it := range items {
		if !it.Applied || it.Status == nil || len(it.Status.Raw) == 0 {
			continue
		}
		var status map[string]any
		if err := json.Unmarshal(it.Status.Raw, &status); err != nil || status == nil {
			return nil, &HookError{Karta: p.name, Hook: HookAggregateStatus,
				Err: fmt.Errorf("statusItems[%d] (cluster %q): the status is not an object", i, it.ClusterName)}
		}
		member := desired.DeepCopy()
		member.Object["status"] = status
		st, err := p.InterpretStatus(ctx, member)
		if err != nil {
			return nil, &HookError{Karta: p.name, Hook: HookAggregateStatus,
				Err: fmt.Errorf("statusItems[%d] (cluster %q): %w", i, it.ClusterName, err)}
		}
		if r := statusRank(st.Status); best == nil || r < bestRank {
			best, bestRank = status, r
		}
	}
	out := desired.DeepCopy()
	if best != nil {
		out.Object["status"] = best
	}
	return out, nil
}

// statusRank is a status's place in karta.StatusPrecedence, Undefined last.
func statusRank(s karta.Status) int {
	if i := slices.Index(karta.StatusPrecedence, s); i >= 0 {
		return i
	}
	return len(karta.StatusPrecedence)
}

// GetDependencies is Karmada's InterpretDependency: the union of
// kube.getPodDependencies over the PodTemplateSpec views of the present
// instances, deduplicated and sorted (apiVersion, kind, namespace, name).
func (p *Program) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.DependentObjectReference, error) {
	var out []karmada.DependentObjectReference
	if p.overridden[HookGetDependencies] {
		err := p.callKarmada(ctx, HookGetDependencies, obj, nil, 1, decodeKarmadaList("dependencies", &out))
		return out, err
	}
	err := p.withState(ctx, HookGetDependencies, func(ctx context.Context, sd *stateData) error {
		ev := luaEvaluator{sd}
		var ns any
		if s := obj.GetNamespace(); s != "" {
			ns = s
		}
		seen := map[string]bool{}
		bearing := false
		for _, c := range p.model.comps {
			if !c.podBearing() {
				continue
			}
			bearing = true
			insts, err := p.model.instancesWith(ctx, ev, c, obj.Object)
			if err != nil {
				return err
			}
			for i := range insts {
				if !insts[i].present {
					continue
				}
				view, _, err := c.view(&insts[i])
				if err != nil {
					return fmt.Errorf("component %q instance %q: %w", c.c.Name, insts[i].id, err)
				}
				var deps []karmada.DependentObjectReference
				if err := kubeCall(sd.L, "getPodDependencies", []any{view, ns}, &deps); err != nil {
					return fmt.Errorf("component %q instance %q: %w", c.c.Name, insts[i].id, err)
				}
				for _, d := range deps {
					key, _ := json.Marshal(d)
					if !seen[string(key)] {
						seen[string(key)] = true
						out = append(out, d)
					}
				}
			}
		}
		if !bearing {
			return &NotDefinedError{Karta: p.name, Hook: HookGetDependencies, Reason: "no component is pod-bearing"}
		}
		return nil
	})
	if err != nil {
		return nil, unwrapNotDefined(err)
	}
	if out == nil {
		out = []karmada.DependentObjectReference{}
	}
	sortDependencies(out)
	return out, nil
}

func sortDependencies(deps []karmada.DependentObjectReference) {
	slices.SortStableFunc(deps, func(a, b karmada.DependentObjectReference) int {
		for _, c := range [][2]string{{a.APIVersion, b.APIVersion}, {a.Kind, b.Kind}, {a.Namespace, b.Namespace}, {a.Name, b.Name}} {
			if r := strings.Compare(c[0], c[1]); r != 0 {
				return r
			}
		}
		return 0
	})
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
	factor := int64(1)
	for a := c.parent; a != nil; a = a.parent {
		if a.scale == nil || a.scale.replicas == nil {
			continue
		}
		insts, err := p.model.instancesWith(ctx, ev, a, obj)
		if err != nil {
			return nil, err
		}
		scales, err := p.scales(ctx, ev, a, obj, insts)
		if err != nil {
			return nil, err
		}
		if len(scales) != 1 {
			return nil, fmt.Errorf("component %q: its scaled ancestor %q has %d instances, not one", c.c.Name, a.c.Name, len(scales))
		}
		if r := scales[0].Replicas; r != nil {
			factor *= *r
		}
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

// singleBearing is the only pod-bearing component, or a NotDefinedError
// for GetReplicas.
func (m *model) singleBearing() (*compModel, error) {
	var bearing []string
	var c *compModel
	for _, cm := range m.comps {
		if cm.podBearing() {
			bearing = append(bearing, cm.c.Name)
			c = cm
		}
	}
	if len(bearing) != 1 {
		return nil, &NotDefinedError{Karta: m.name, Hook: HookGetReplicas,
			Reason: fmt.Sprintf("there are %d pod-bearing components [%s], not one", len(bearing), strings.Join(bearing, " "))}
	}
	return c, nil
}

// emptyRequirements reports requirements that Karmada's result pipeline
// drops (it deletes a nested empty table): no node claim and
// no resource request. The in-process hooks drop them too, so that they
// agree with the exported customization.
func emptyRequirements(nc *karmada.NodeClaim, rl corev1.ResourceList) bool {
	return len(rl) == 0 && (nc == nil || (nc.HardNodeAffinity == nil && len(nc.NodeSelector) == 0 && len(nc.Tolerations) == 0))
}

// unwrapNotDefined returns a NotDefinedError inside err as is: it names
// the Karta and the hook already.
func unwrapNotDefined(err error) error {
	var nd *NotDefinedError
	if errors.As(err, &nd) {
		return nd
	}
	return err
}

// kubeCall calls the kube module's function fn with args (Go JSON values,
// nil as Lua nil) and converts its one result by Karmada's rules into
// into.
func kubeCall(L *lua.LState, fn string, args []any, into any) error {
	mod, ok := luaapi.KubeModule(L).(*lua.LTable)
	if !ok {
		return fmt.Errorf("kube module unavailable (a karta bug)")
	}
	f := mod.RawGetString(fn)
	largs := make([]lua.LValue, len(args))
	for i, a := range args {
		if a == nil {
			largs[i] = lua.LNil
			continue
		}
		v, err := luaapi.KubeValue(L, a)
		if err != nil {
			return fmt.Errorf("kube.%s: %w", fn, err)
		}
		largs[i] = v
	}
	if err := L.CallByParam(lua.P{Fn: f, NRet: 1, Protect: true}, largs...); err != nil {
		return fmt.Errorf("kube.%s: %w", fn, err)
	}
	res := L.Get(-1)
	L.Pop(1)
	if err := luaapi.KubeUnmarshal(L, res, into); err != nil {
		return fmt.Errorf("kube.%s: %w", fn, err)
	}
	return nil
}

// callKarmada calls a user chunk's override of a Karmada hook with
// Karmada's arguments: the object as Karmada passes it, then extra.
func (p *Program) callKarmada(ctx context.Context, h Hook, obj *unstructured.Unstructured, extra []any, nret int, decode func(L *lua.LState, res []lua.LValue) error) error {
	return p.withState(ctx, h, func(ctx context.Context, sd *stateData) error {
		L := sd.L
		env, err := sd.loadOverrides(ctx)
		if err != nil {
			return err
		}
		fn, ok := env.RawGetString(string(h)).(*lua.LFunction)
		if !ok {
			return ErrHookNotEnabled
		}
		args := make([]lua.LValue, 0, 1+len(extra))
		for _, e := range append([]any{obj.Object}, extra...) {
			if n, ok := e.(int64); ok {
				args = append(args, lua.LNumber(n))
				continue
			}
			if e == nil {
				args = append(args, lua.LNil)
				continue
			}
			v, err := luaapi.KubeValue(L, e)
			if err != nil {
				return err
			}
			args = append(args, v)
		}
		L.Push(fn)
		for _, a := range args {
			L.Push(a)
		}
		L.Call(len(args), nret)
		res := make([]lua.LValue, nret)
		for i := range res {
			res[i] = L.Get(-nret + i)
		}
		L.Pop(nret)
		return decode(L, res)
	})
}

// decodeKarmadaList decodes a script's list result (components,
// dependencies) as Karmada does: nil is none, a table goes through
// Karmada's result pipeline, anything else is an error.
func decodeKarmadaList(what string, out any) func(L *lua.LState, res []lua.LValue) error {
	return func(L *lua.LState, res []lua.LValue) error {
		switch r := res[0].(type) {
		case *lua.LNilType:
			return nil
		case *lua.LTable:
			return luaapi.KubeUnmarshal(L, r, out)
		default:
			return fmt.Errorf("%s: %s is not a table", what, res[0].Type())
		}
	}
}

// Retain is Karmada's Retain: what of the member cluster's observed object
// to keep in the desired one before it is applied. A Karta generates no
// Retain (Karmada's default applies); a script override may define one,
// as Karmada customizations do, and then it runs here — the same Retain
// the Karmada export carries. Without an override it is
// ErrHookNotEnabled.
func (p *Program) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !p.overridden[HookRetain] {
		return nil, &HookError{Karta: p.name, Hook: HookRetain, Err: ErrHookNotEnabled}
	}
	out := &unstructured.Unstructured{}
	err := p.callKarmada(ctx, HookRetain, desired, []any{observed.Object}, 1, func(L *lua.LState, res []lua.LValue) error {
		tb, ok := res[0].(*lua.LTable)
		if !ok {
			return fmt.Errorf("result: %s is not a table", res[0].Type())
		}
		return luaapi.KubeUnmarshal(L, tb, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
