package isolation

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
)

// Op names an operation a worker runs: a Program's hook, or one of
// Karmada's operations on the Program (karmada.ForProgram).
type Op string

// The operations.
const (
	OpInterpretStatus Op = "InterpretStatus"
	OpGetPodSpecs     Op = "GetPodSpecs"
	OpGetGangGroups   Op = "GetGangGroups"
	OpPlacePod        Op = "PlacePod"
	OpPlacePods       Op = "PlacePods"
	OpReviseSpec      Op = "ReviseSpec"

	OpKarmadaGetReplicas     Op = "GetReplicas"
	OpKarmadaGetComponents   Op = "GetComponents"
	OpKarmadaReviseReplica   Op = "ReviseReplica"
	OpKarmadaRetain          Op = "Retain"
	OpKarmadaAggregateStatus Op = "AggregateStatus"
	OpKarmadaReflectStatus   Op = "ReflectStatus"
	OpKarmadaInterpretHealth Op = "InterpretHealth"
	OpKarmadaGetDependencies Op = "GetDependencies"
)

// replicasResult is karmada.GetReplicas's two results.
type replicasResult struct {
	Replicas     int32                        `json:"replicas"`
	Requirements *karmada.ReplicaRequirements `json:"requirements"`
}

// statusResult is InterpretStatus's result with the message JSON leaves
// out of interpreter.StatusResult.
type statusResult struct {
	*interpreter.StatusResult
	Message string `json:"message,omitempty"`
}

// ops are what a worker does for each Op: run it on the Program and
// return the result to encode.
var ops = map[Op]func(ctx context.Context, p *interpreter.Program, r *request) (any, error){
	OpInterpretStatus: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		st, err := p.InterpretStatus(ctx, obj(r.Object))
		if err != nil {
			return nil, err
		}
		return statusResult{StatusResult: st, Message: st.Message}, nil
	},
	OpGetPodSpecs: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return p.GetPodSpecs(ctx, obj(r.Object))
	},
	OpGetGangGroups: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return p.GetGangGroups(ctx, obj(r.Object), objs(r.Pods))
	},
	OpPlacePod: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return p.PlacePod(ctx, obj(r.Object), obj(r.Other))
	},
	OpPlacePods: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return p.PlacePods(ctx, obj(r.Object), objs(r.Pods))
	},
	OpReviseSpec: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return p.ReviseSpec(ctx, obj(r.Object), r.Revisions)
	},
	OpKarmadaGetReplicas: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		n, req, err := karmada.ForProgram(p).GetReplicas(ctx, obj(r.Object))
		return replicasResult{Replicas: n, Requirements: req}, err
	},
	OpKarmadaGetComponents: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return karmada.ForProgram(p).GetComponents(ctx, obj(r.Object))
	},
	OpKarmadaReviseReplica: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return unwrapObject(karmada.ForProgram(p).ReviseReplica(ctx, obj(r.Object), r.Replicas))
	},
	OpKarmadaRetain: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return unwrapObject(karmada.ForProgram(p).Retain(ctx, obj(r.Object), obj(r.Other)))
	},
	OpKarmadaAggregateStatus: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		var items []karmada.AggregatedStatusItem
		if len(r.Items) > 0 {
			if err := decodeJSON(r.Items, &items); err != nil {
				return nil, fmt.Errorf("decoding the aggregated status items: %w", err)
			}
		}
		return unwrapObject(karmada.ForProgram(p).AggregateStatus(ctx, obj(r.Object), items))
	},
	OpKarmadaReflectStatus: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return karmada.ForProgram(p).ReflectStatus(ctx, obj(r.Object))
	},
	OpKarmadaInterpretHealth: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return karmada.ForProgram(p).InterpretHealth(ctx, obj(r.Object))
	},
	OpKarmadaGetDependencies: func(ctx context.Context, p *interpreter.Program, r *request) (any, error) {
		return karmada.ForProgram(p).GetDependencies(ctx, obj(r.Object))
	},
}

func obj(m map[string]any) *unstructured.Unstructured {
	if m == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}

func objs(ms []map[string]any) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(ms))
	for i, m := range ms {
		out[i] = obj(m)
	}
	return out
}

func unwrapObject(u *unstructured.Unstructured, err error) (any, error) {
	if err != nil || u == nil {
		return nil, err
	}
	return u.Object, nil
}

// runOp runs r on p and encodes the answer.
func runOp(ctx context.Context, p *interpreter.Program, r *request) reply {
	f, ok := ops[r.Op]
	if !ok {
		return reply{Error: &wireError{Message: fmt.Sprintf("unknown operation %q", r.Op)}}
	}
	res, err := f(ctx, p, r)
	if err != nil {
		return reply{Error: toWire(err)}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return reply{Error: toWire(fmt.Errorf("encoding the result of %s: %w", r.Op, err))}
	}
	return reply{Result: b}
}
