package isolation

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
)

// The hooks of a Program, run in a worker; each returns what the
// *interpreter.Program's method returns, or a *WorkerError.

// InterpretStatus is interpreter.Program.InterpretStatus in a worker.
func (ip *Program) InterpretStatus(ctx context.Context, obj *unstructured.Unstructured) (*interpreter.StatusResult, error) {
	var out statusResult
	if err := ip.call(ctx, &request{Op: OpInterpretStatus, Object: obj.Object}, &out); err != nil {
		return nil, err
	}
	if out.StatusResult == nil {
		return nil, nil
	}
	out.StatusResult.Message = out.Message
	return out.StatusResult, nil
}

// GetPodSpecs is interpreter.Program.GetPodSpecs in a worker.
func (ip *Program) GetPodSpecs(ctx context.Context, obj *unstructured.Unstructured) (*interpreter.PodSpecs, error) {
	return callFor[interpreter.PodSpecs](ctx, ip, &request{Op: OpGetPodSpecs, Object: obj.Object})
}

// GetGangGroups is interpreter.Program.GetGangGroups in a worker.
func (ip *Program) GetGangGroups(ctx context.Context, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) (*interpreter.GangResult, error) {
	return callFor[interpreter.GangResult](ctx, ip, &request{Op: OpGetGangGroups, Object: obj.Object, Pods: objects(pods)})
}

// PlacePod is interpreter.Program.PlacePod in a worker.
func (ip *Program) PlacePod(ctx context.Context, obj, pod *unstructured.Unstructured) (*interpreter.PodPlacement, error) {
	return callFor[interpreter.PodPlacement](ctx, ip, &request{Op: OpPlacePod, Object: obj.Object, Other: pod.Object})
}

// PlacePods is interpreter.Program.PlacePods in a worker.
func (ip *Program) PlacePods(ctx context.Context, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) (*interpreter.PlacementResult, error) {
	return callFor[interpreter.PlacementResult](ctx, ip, &request{Op: OpPlacePods, Object: obj.Object, Pods: objects(pods)})
}

// ReviseSpec is interpreter.Program.ReviseSpec in a worker.
func (ip *Program) ReviseSpec(ctx context.Context, obj *unstructured.Unstructured, revisions []interpreter.Revision) (*interpreter.Revised, error) {
	return callFor[interpreter.Revised](ctx, ip, &request{Op: OpReviseSpec, Object: obj.Object, Revisions: revisions})
}

// Karmada is Karmada's operations on the Program (karmada.ForProgram),
// run in a worker.
func (ip *Program) Karmada() Karmada { return Karmada{ip} }

// Karmada runs karmada.Program's operations in a worker; its methods have
// karmada.Program's signatures.
type Karmada struct{ ip *Program }

// GetReplicas is karmada.Program.GetReplicas in a worker.
func (k Karmada) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *karmada.ReplicaRequirements, error) {
	r, err := callFor[replicasResult](ctx, k.ip, &request{Op: OpKarmadaGetReplicas, Object: obj.Object})
	if err != nil {
		return 0, nil, err
	}
	return r.Replicas, r.Requirements, nil
}

// GetComponents is karmada.Program.GetComponents in a worker.
func (k Karmada) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.Component, error) {
	return callValue[[]karmada.Component](ctx, k.ip, &request{Op: OpKarmadaGetComponents, Object: obj.Object})
}

// ReviseReplica is karmada.Program.ReviseReplica in a worker.
func (k Karmada) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, n int64) (*unstructured.Unstructured, error) {
	return callObject(ctx, k.ip, &request{Op: OpKarmadaReviseReplica, Object: obj.Object, Replicas: n})
}

// Retain is karmada.Program.Retain in a worker.
func (k Karmada) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return callObject(ctx, k.ip, &request{Op: OpKarmadaRetain, Object: desired.Object, Other: observed.Object})
}

// AggregateStatus is karmada.Program.AggregateStatus in a worker.
func (k Karmada) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []karmada.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	return callObject(ctx, k.ip, &request{Op: OpKarmadaAggregateStatus, Object: obj.Object, Items: raw})
}

// ReflectStatus is karmada.Program.ReflectStatus in a worker.
func (k Karmada) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error) {
	return callValue[map[string]any](ctx, k.ip, &request{Op: OpKarmadaReflectStatus, Object: obj.Object})
}

// InterpretHealth is karmada.Program.InterpretHealth in a worker.
func (k Karmada) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	return callValue[bool](ctx, k.ip, &request{Op: OpKarmadaInterpretHealth, Object: obj.Object})
}

// GetDependencies is karmada.Program.GetDependencies in a worker.
func (k Karmada) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]karmada.DependentObjectReference, error) {
	return callValue[[]karmada.DependentObjectReference](ctx, k.ip, &request{Op: OpKarmadaGetDependencies, Object: obj.Object})
}

// callFor runs req and returns its result as a *T (nil for a JSON null).
func callFor[T any](ctx context.Context, ip *Program, req *request) (*T, error) {
	var out *T
	if err := ip.call(ctx, req, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// callValue runs req and returns its result as a T.
func callValue[T any](ctx context.Context, ip *Program, req *request) (T, error) {
	var out T
	err := ip.call(ctx, req, &out)
	return out, err
}

// callObject runs req, whose result is an object.
func callObject(ctx context.Context, ip *Program, req *request) (*unstructured.Unstructured, error) {
	m, err := callValue[map[string]any](ctx, ip, req)
	if err != nil || m == nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func objects(us []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(us))
	for i, u := range us {
		out[i] = u.Object
	}
	return out
}
