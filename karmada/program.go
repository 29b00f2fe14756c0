package karmada

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sjson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada/kube"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/luaapi"
)

// Program answers Karmada's resource interpreter operations for a Karta's
// Program, in process. Each runs on one of the Program's pooled states
// under its limits. When a script overrides the operation, the override
// is called with Karmada's calling convention and its result converted by
// Karmada's rules (kube.Unmarshal); otherwise the Karta's own
// algorithm runs, with kube.accuratePodRequirements and
// kube.getPodDependencies called through the state's kube module, so that
// results are exactly Karmada's — and exactly what the Karta exported by
// Export gives inside Karmada. Errors are the Program's: a
// *luaapi.LimitError, an *interpreter.HookError or an
// *interpreter.NotDefinedError naming the Karta and the hook.
//
// Each operation resolves the Karta's references (docs/karta.md,
// "References") for its object with the resolver its context carries
// (interpreter.WithResolver), warnings and bounds included, and binds
// them for the call, as a hook does on entry: karta serve answers Karmada
// with what its cache holds. Without a resolver they are absent.
type Program struct {
	p     *interpreter.Program
	model *interpreter.Shape
}

// ForProgram returns Karmada's operations for p.
func ForProgram(p *interpreter.Program) Program {
	return Program{p: p, model: p.Shape()}
}

// bind resolves the Karta's references for obj with the resolver ctx
// carries and binds them for the call (Program.BindReferences), as a hook
// does on entry; a limit it hits (referenced bytes) names hook h.
func (k Program) bind(ctx context.Context, h interpreter.Hook, obj *unstructured.Unstructured) (context.Context, error) {
	ctx, err := k.p.BindReferences(ctx, obj)
	var le *luaapi.LimitError
	if errors.As(err, &le) && le.Hook == "" {
		le.Hook = string(h)
	}
	return ctx, err
}

// singleBearing is replicaResource's component, or a NotDefinedError
// for GetReplicas with its reason.
func (k Program) singleBearing() (*interpreter.ComponentShape, error) {
	c, reason := replicaResource(k.model)
	if c == nil {
		return nil, &interpreter.NotDefinedError{Karta: k.p.Name(), Hook: interpreter.HookGetReplicas, Reason: reason}
	}
	return c, nil
}

// maxComponentName is the longest component name Karmada accepts.
const maxComponentName = 32

// GetReplicas is Karmada's InterpretReplica. It is defined when there is
// exactly one pod-bearing component, of one instance (Defines), and that
// instance is present: the
// replicas are its own (1 if undefined) times those of its scaled
// ancestors, the requirements kube.accuratePodRequirements of its
// PodTemplateSpec view.
func (k Program) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *ReplicaRequirements, error) {
	var (
		n   int32
		req *ReplicaRequirements
	)
	ctx, err := k.bind(ctx, interpreter.HookGetReplicas, obj)
	if err != nil {
		return 0, nil, err
	}
	if k.p.Overridden(interpreter.HookGetReplicas) {
		err := k.callOverride(ctx, interpreter.HookGetReplicas, obj, nil, 2, func(L *lua.LState, res []lua.LValue) error {
			num, ok := res[0].(lua.LNumber)
			if !ok {
				return fmt.Errorf("result type %s is not number", res[0].Type())
			}
			n = int32(num)
			switch r := res[1].(type) {
			case *lua.LNilType:
				return nil
			case *lua.LTable:
				req = &ReplicaRequirements{}
				return kube.Unmarshal(L, r, req)
			default:
				return fmt.Errorf("requires: %s is not a table", res[1].Type())
			}
		})
		return n, req, err
	}
	err = k.p.WithState(ctx, interpreter.HookGetReplicas, func(ctx context.Context, s *interpreter.PooledState) error {
		c, err := k.singleBearing()
		if err != nil {
			return err
		}
		units, err := s.Units(ctx, obj.Object, c.Name)
		if err != nil {
			return err
		}
		if len(units) != 1 {
			ids := make([]string, len(units))
			for i, u := range units {
				ids[i] = u.ID
			}
			return &interpreter.NotDefinedError{Karta: k.p.Name(), Hook: interpreter.HookGetReplicas,
				Reason: fmt.Sprintf("component %q has %d present instances [%s], not one", c.Name, len(units), strings.Join(ids, " "))}
		}
		n = int32(units[0].Replicas)
		// nil where the helper returns nil, as the export's requires.
		return kubeCall(s.L(), "accuratePodRequirements", []any{units[0].View}, &req)
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
func (k Program) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]Component, error) {
	var out []Component
	ctx, err := k.bind(ctx, interpreter.HookGetComponents, obj)
	if err != nil {
		return nil, err
	}
	if k.p.Overridden(interpreter.HookGetComponents) {
		err := k.callOverride(ctx, interpreter.HookGetComponents, obj, nil, 1, decodeKarmadaList("components", &out))
		return out, err
	}
	err = k.p.WithState(ctx, interpreter.HookGetComponents, func(ctx context.Context, s *interpreter.PooledState) error {
		seen := map[string]string{}
		bearing := false
		for _, c := range k.model.Components {
			if !c.PodBearing() {
				continue
			}
			bearing = true
			units, err := s.Units(ctx, obj.Object, c.Name)
			if err != nil {
				return err
			}
			for _, u := range units {
				name := c.Name
				if c.InstanceIDPath != "" {
					name = u.ID
				}
				if len(name) > maxComponentName {
					return fmt.Errorf("component %q instance %q: the Karmada component name %q is longer than %d characters", c.Name, u.ID, name, maxComponentName)
				}
				if prev, dup := seen[name]; dup {
					return fmt.Errorf("component %q instance %q: the Karmada component name %q is already used by %s", c.Name, u.ID, name, prev)
				}
				seen[name] = fmt.Sprintf("component %q instance %q", c.Name, u.ID)
				// The export sets replicaRequirements to the helper's
				// result: none where it returns nil, and otherwise what
				// Karmada's conversion leaves of it, which may be empty
				// (a node claim whose only selector member is {}).
				comp := Component{Name: name, Replicas: int32(u.Replicas)}
				if err := kubeCall(s.L(), "accuratePodRequirements", []any{u.View}, &comp.ReplicaRequirements); err != nil {
					return fmt.Errorf("component %q instance %q: %w", c.Name, u.ID, err)
				}
				out = append(out, comp)
			}
		}
		if !bearing {
			return &interpreter.NotDefinedError{Karta: k.p.Name(), Hook: interpreter.HookGetComponents, Reason: "no component is pod-bearing"}
		}
		return nil
	})
	if err != nil {
		return nil, unwrapNotDefined(err)
	}
	if out == nil {
		out = []Component{}
	}
	return out, nil
}

// ReviseReplica is Karmada's ReviseReplica: n written through the root's
// replicasPath if it has one, else through that of the only pod-bearing
// component, which must have one instance.
func (k Program) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, n int64) (*unstructured.Unstructured, error) {
	ctx, err := k.bind(ctx, interpreter.HookReviseReplica, obj)
	if err != nil {
		return nil, err
	}
	if k.p.Overridden(interpreter.HookReviseReplica) {
		return k.callObjectOverride(ctx, interpreter.HookReviseReplica, obj, []any{n}, obj.Object)
	}
	revised, err := k.p.ReviseReplica(ctx, obj, n)
	if err != nil {
		return nil, err
	}
	// The revised object as the exported ReviseReplica returns it inside
	// Karmada: its null members and null list elements gone (Karmada's
	// decoding of the object into Lua drops them), empty tables repaired
	// against the object given.
	out := &unstructured.Unstructured{}
	if err := k.asKarmadaResult(ctx, interpreter.HookReviseReplica, revised.Object, &out.Object, obj.Object); err != nil {
		return nil, err
	}
	return out, nil
}

// asKarmadaResult decodes into into v as Karmada holds a Lua result of v:
// v converted as Karmada decodes an object into Lua (kube.Value), then
// back through Karmada's conversion of a result (kube.ResultJSON), which
// drops nulls and repairs or drops empty tables against references — so
// that the operations in process, karta serve and the export answer alike
// (test/paths). A call like the others: under the limits, on a state.
func (k Program) asKarmadaResult(ctx context.Context, h interpreter.Hook, v any, into any, references ...any) error {
	return k.p.WithState(ctx, h, func(_ context.Context, s *interpreter.PooledState) error {
		L := s.L()
		lv, err := kube.Value(L, v)
		if err != nil {
			return err
		}
		raw, err := kube.ResultJSON(L, lv, true, references...)
		if err != nil {
			return err
		}
		return k8sjson.Unmarshal(raw, into)
	})
}

// InterpretHealth is Karmada's InterpretHealth: true iff the primary
// status (InterpretStatus, an Argo CD health script included) is Running
// or Completed.
func (k Program) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	if k.p.Overridden(interpreter.HookInterpretHealth) && !k.p.ArgoHealth() {
		ctx, err := k.bind(ctx, interpreter.HookInterpretHealth, obj)
		if err != nil {
			return false, err
		}
		var healthy bool
		err = k.callOverride(ctx, interpreter.HookInterpretHealth, obj, nil, 1, func(_ *lua.LState, res []lua.LValue) error {
			b, ok := res[0].(lua.LBool)
			if !ok {
				return fmt.Errorf("result type %s is not bool", res[0].Type())
			}
			healthy = bool(b)
			return nil
		})
		return healthy, err
	}
	st, err := k.p.InterpretStatus(ctx, obj) // a hook: it binds the references itself
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
func (k Program) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error) {
	if k.p.Overridden(interpreter.HookReflectStatus) {
		ctx, err := k.bind(ctx, interpreter.HookReflectStatus, obj)
		if err != nil {
			return nil, err
		}
		var status map[string]any
		err = k.callOverride(ctx, interpreter.HookReflectStatus, obj, nil, 1, func(L *lua.LState, res []lua.LValue) error {
			tb, ok := res[0].(*lua.LTable)
			if !ok {
				return fmt.Errorf("result: %s is not a table", res[0].Type())
			}
			raw, err := kube.ResultJSON(L, tb, true)
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
	// The object's status as the exported ReflectStatus returns it inside
	// Karmada (asKarmadaResult): without empty tables and nulls.
	status := map[string]any{}
	st, ok := obj.Object["status"].(map[string]any)
	if !ok || len(st) == 0 {
		return status, nil
	}
	if err := k.asKarmadaResult(ctx, interpreter.HookReflectStatus, st, &status); err != nil {
		return nil, err
	}
	return status, nil
}

// AggregateStatus is Karmada's AggregateStatus. The rule: among the items
// that were applied and carry a status, the member status whose generic
// status (InterpretStatus of desired with that status) is the most
// decisive by karta.StatusPrecedence (Failed, Completed, Resuming,
// Suspending, Suspended, Degraded, Running, Initializing, then Undefined)
// wins, the first such item in order on a tie; the result is desired with
// its status replaced by that member's. Without such an item, desired is
// returned unchanged.
func (k Program) AggregateStatus(ctx context.Context, desired *unstructured.Unstructured, items []AggregatedStatusItem) (*unstructured.Unstructured, error) {
	if k.p.Overridden(interpreter.HookAggregateStatus) {
		ctx, err := k.bind(ctx, interpreter.HookAggregateStatus, desired)
		if err != nil {
			return nil, err
		}
		var extra any // nil items are Lua nil, as in Karmada
		if items != nil {
			extra = items
		}
		return k.callObjectOverride(ctx, interpreter.HookAggregateStatus, desired, []any{extra})
	}
	// Each member's status is a hook call, which binds the references.
	best, bestRank := map[string]any(nil), -1
	for i, it := range items {
		if !it.Applied || it.Status == nil || len(it.Status.Raw) == 0 {
			continue
		}
		var status map[string]any
		if err := json.Unmarshal(it.Status.Raw, &status); err != nil || status == nil {
			return nil, &interpreter.HookError{Karta: k.p.Name(), Hook: interpreter.HookAggregateStatus,
				Err: fmt.Errorf("statusItems[%d] (cluster %q): the status is not an object", i, it.ClusterName)}
		}
		member := desired.DeepCopy()
		member.Object["status"] = status
		st, err := k.p.InterpretStatus(ctx, member)
		if err != nil {
			return nil, &interpreter.HookError{Karta: k.p.Name(), Hook: interpreter.HookAggregateStatus,
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
// It reads what can name a dependency (PooledState.DependencyUnits): of a
// fragmented component only the container paths, and nothing of one that
// has none, as the export's GetDependencies does.
func (k Program) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]DependentObjectReference, error) {
	var out []DependentObjectReference
	ctx, err := k.bind(ctx, interpreter.HookGetDependencies, obj)
	if err != nil {
		return nil, err
	}
	if k.p.Overridden(interpreter.HookGetDependencies) {
		err := k.callOverride(ctx, interpreter.HookGetDependencies, obj, nil, 1, decodeKarmadaList("dependencies", &out))
		return out, err
	}
	err = k.p.WithState(ctx, interpreter.HookGetDependencies, func(ctx context.Context, s *interpreter.PooledState) error {
		// The namespace member as the export reads it (obj.metadata.namespace):
		// absent is nil, which kube.getPodDependencies makes "default"; an
		// empty string stays empty.
		var ns any
		if md, ok := obj.Object["metadata"].(map[string]any); ok {
			ns = md["namespace"]
		}
		seen := map[string]bool{}
		bearing := false
		for _, c := range k.model.Components {
			if !c.PodBearing() {
				continue
			}
			bearing = true
			if !c.NamesDependencies() {
				continue // its views name none (ComponentShape.NamesDependencies)
			}
			// On a view that fails, the units before it come with the
			// error: they are interpreted first, as they come in order.
			units, viewErr := s.DependencyUnits(ctx, obj.Object, c.Name)
			if viewErr != nil && units == nil {
				return viewErr
			}
			for _, u := range units {
				var deps []DependentObjectReference
				if err := kubeCall(s.L(), "getPodDependencies", []any{u.View, ns}, &deps); err != nil {
					return fmt.Errorf("component %q instance %q: %w", c.Name, u.ID, err)
				}
				for _, d := range deps {
					key, _ := json.Marshal(d)
					if !seen[string(key)] {
						seen[string(key)] = true
						out = append(out, d)
					}
				}
			}
			if viewErr != nil {
				return viewErr
			}
		}
		if !bearing {
			return &interpreter.NotDefinedError{Karta: k.p.Name(), Hook: interpreter.HookGetDependencies, Reason: "no component is pod-bearing"}
		}
		return nil
	})
	if err != nil {
		return nil, unwrapNotDefined(err)
	}
	if out == nil {
		out = []DependentObjectReference{}
	}
	SortDependencies(out)
	return out, nil
}

// unwrapNotDefined returns a NotDefinedError inside err as is: it names
// the Karta and the hook already.
func unwrapNotDefined(err error) error {
	var nd *interpreter.NotDefinedError
	if errors.As(err, &nd) {
		return nd
	}
	return err
}

// kubeCall calls the kube module's function fn with args (Go JSON values,
// nil as Lua nil) and converts its one result by Karmada's rules into
// into.
func kubeCall(L *lua.LState, fn string, args []any, into any) error {
	g := kube.Module.Funcs[fn]
	if g == nil {
		return fmt.Errorf("kube.%s: no such helper (a karta bug)", fn)
	}
	f := L.NewFunction(g)
	largs := make([]lua.LValue, len(args))
	for i, a := range args {
		if a == nil {
			largs[i] = lua.LNil
			continue
		}
		v, err := kube.Value(L, a)
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
	// The result may be a lazy table (the helpers' results are), which
	// no script will see: its Go value is forgotten once read, not at
	// the end of a call this may be outside of.
	if t, ok := res.(*lua.LTable); ok {
		defer luaapi.DropLazy(L, t)
	}
	if err := kube.Unmarshal(L, res, into); err != nil {
		return fmt.Errorf("kube.%s: %w", fn, err)
	}
	return nil
}

// callOverride calls a script's override of a Karmada hook with Karmada's
// arguments: the object as Karmada passes it, then extra.
func (k Program) callOverride(ctx context.Context, h interpreter.Hook, obj *unstructured.Unstructured, extra []any, nret int, decode func(L *lua.LState, res []lua.LValue) error) error {
	return k.p.WithState(ctx, h, func(ctx context.Context, s *interpreter.PooledState) error {
		L := s.L()
		fn, err := s.Override(ctx, h)
		if err != nil {
			return err
		}
		if fn == nil {
			return interpreter.ErrHookNotEnabled
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
			v, err := kube.Value(L, e)
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

// callObjectOverride is callOverride for an operation whose result is an
// object (ReviseReplica, AggregateStatus, Retain): a table, converted by
// Karmada's rules against references (kube.Unmarshal).
func (k Program) callObjectOverride(ctx context.Context, h interpreter.Hook, obj *unstructured.Unstructured, extra []any, references ...any) (*unstructured.Unstructured, error) {
	out := &unstructured.Unstructured{}
	err := k.callOverride(ctx, h, obj, extra, 1, func(L *lua.LState, res []lua.LValue) error {
		tb, ok := res[0].(*lua.LTable)
		if !ok {
			return fmt.Errorf("result: %s is not a table", res[0].Type())
		}
		return kube.Unmarshal(L, tb, out, references...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
			return kube.Unmarshal(L, r, out)
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
// interpreter.ErrHookNotEnabled.
func (k Program) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !k.p.Overridden(interpreter.HookRetain) {
		return nil, &interpreter.HookError{Karta: k.p.Name(), Hook: interpreter.HookRetain, Err: interpreter.ErrHookNotEnabled}
	}
	ctx, err := k.bind(ctx, interpreter.HookRetain, desired)
	if err != nil {
		return nil, err
	}
	return k.callObjectOverride(ctx, interpreter.HookRetain, desired, []any{observed.Object})
}
