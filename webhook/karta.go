package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/isolation"
	"github.com/kartalua/karta/karmada"
)

// Kartas serves the Karmada hooks of the Programs in a registry: every
// generated operation, and Retain where a Karta's script defines one (a
// Karta generates no Retain; without one, Karmada's default applies).
// Programs swapped in the registry take effect on the next request.
type Kartas struct {
	Registry *interpreter.Registry
	// Workers, when set, runs the Programs Isolate accepts (every
	// Program, when Isolate is nil) in its worker processes; the others
	// run in process.
	Workers *isolation.Supervisor
	Isolate func(*interpreter.Program) bool
}

// karmadaOps are Karmada's operations on a Program: karmada.Program in
// process, isolation.Karmada in a worker.
type karmadaOps interface {
	GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *karmada.ReplicaRequirements, error)
	GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.Component, error)
	ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, n int64) (*unstructured.Unstructured, error)
	Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)
	AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []karmada.AggregatedStatusItem) (*unstructured.Unstructured, error)
	ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error)
	InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error)
	GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.DependentObjectReference, error)
}

var (
	_ karmadaOps = karmada.Program{}
	_ karmadaOps = isolation.Karmada{}
)

var _ Backend = Kartas{}

// Handles reports whether a Program is registered for gvk and op is one of
// the operations Kartas generate. Whether a hook applies to a given object
// (GetReplicas needs a single pod-bearing instance) is the hook's answer.
func (k Kartas) Handles(gvk schema.GroupVersionKind, op karmada.Operation) bool {
	p, ok := k.Registry.Get(gvk)
	if op == karmada.OpRetain {
		return ok && p.HookEnabled(interpreter.HookRetain)
	}
	return ok
}

// program is Karmada's operations on the Program of obj's kind, in a
// worker when the Program is isolated. Both resolve the Karta's
// references with the resolver of the call's context (in a worker, the
// supervisor resolves them and the worker binds them).
func (k Kartas) program(obj *unstructured.Unstructured) (karmadaOps, error) {
	p, ok := k.Registry.Get(obj.GroupVersionKind())
	if !ok {
		return nil, fmt.Errorf("no Karta registered for %s", obj.GroupVersionKind())
	}
	if k.Isolated(p) {
		return k.Workers.Program(p).Karmada(), nil
	}
	return karmada.ForProgram(p), nil
}

// Isolated reports whether p's calls run in a worker process.
func (k Kartas) Isolated(p *interpreter.Program) bool {
	return k.Workers != nil && (k.Isolate == nil || k.Isolate(p))
}

// GetReplicas is the Program's GetReplicas.
func (k Kartas) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *karmada.ReplicaRequirements, error) {
	p, err := k.program(obj)
	if err != nil {
		return 0, nil, err
	}
	return p.GetReplicas(ctx, obj)
}

// GetComponents is the Program's GetComponents.
func (k Kartas) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.Component, error) {
	p, err := k.program(obj)
	if err != nil {
		return nil, err
	}
	return p.GetComponents(ctx, obj)
}

// ReviseReplica is the Program's ReviseReplica.
func (k Kartas) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	p, err := k.program(obj)
	if err != nil {
		return nil, err
	}
	return p.ReviseReplica(ctx, obj, replicas)
}

// Retain is the Program's Retain, when its script defines one.
func (k Kartas) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	p, err := k.program(desired)
	if err != nil {
		return nil, err
	}
	return p.Retain(ctx, desired, observed)
}

// AggregateStatus is the Program's AggregateStatus.
func (k Kartas) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []karmada.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	p, err := k.program(obj)
	if err != nil {
		return nil, err
	}
	return p.AggregateStatus(ctx, obj, items)
}

// ReflectStatusRaw is the Program's ReflectStatus as JSON.
func (k Kartas) ReflectStatusRaw(ctx context.Context, obj *unstructured.Unstructured) ([]byte, error) {
	p, err := k.program(obj)
	if err != nil {
		return nil, err
	}
	st, err := p.ReflectStatus(ctx, obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(st)
}

// InterpretHealth is the Program's InterpretHealth.
func (k Kartas) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	p, err := k.program(obj)
	if err != nil {
		return false, err
	}
	return p.InterpretHealth(ctx, obj)
}

// GetDependencies is the Program's GetDependencies.
func (k Kartas) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.DependentObjectReference, error) {
	p, err := k.program(obj)
	if err != nil {
		return nil, err
	}
	return p.GetDependencies(ctx, obj)
}

var _ StatsBackend = Kartas{}

// PoolStats sums the state pools of every compiled Program: the most
// Lua states they may keep and those running a call now.
func (k Kartas) PoolStats() PoolStats {
	var st PoolStats
	for _, p := range k.Registry.Compiled() {
		ps := p.PoolStats()
		st.Size += ps.Size
		st.InUse += ps.InUse
	}
	return st
}
