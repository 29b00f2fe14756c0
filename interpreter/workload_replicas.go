package interpreter

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// InstanceReplicas is one present instance of a pod-bearing component
// with its workload-wide pod count.
type InstanceReplicas struct {
	Component string `json:"component"`
	// Instance is the instance id, "" when the component has no
	// instanceIdPath.
	Instance string `json:"instance"`
	// Replicas is the instance's own replicas (1 when its component has no
	// replicas path) times the replicas of every scaled ancestor: a
	// LeaderWorkerSet's leader is 1 per group, so spec.replicas in all.
	Replicas int64 `json:"replicas"`
}

// WorkloadReplicas returns the present instances of the pod-bearing
// components, in GetPodSpecs' order (components in Karta order, instances
// in id order), with their workload-wide pod counts: what `karta get`,
// `karta describe` and Karmada's GetComponents count. A scaled ancestor
// must have a single instance (a workload whose scaled ancestor repeats
// has no single workload-wide count per instance): otherwise it fails,
// and callers keep each instance's own replicas from GetPodSpecs.
// Scripts do not change it: it is the Karta's structure and scale paths.
func (p *Program) WorkloadReplicas(ctx context.Context, obj *unstructured.Unstructured) ([]InstanceReplicas, error) {
	ctx, err := p.enter(ctx, HookGetComponents, obj)
	if err != nil {
		return nil, err
	}
	return runHook(ctx, p, HookGetComponents, func(ctx context.Context, ev evaluator) ([]InstanceReplicas, error) {
		return p.workloadReplicas(ctx, ev, obj.Object)
	})
}

func (p *Program) workloadReplicas(ctx context.Context, ev evaluator, obj map[string]any) ([]InstanceReplicas, error) {
	out := []InstanceReplicas{}
	for _, c := range p.model.comps {
		if !c.podBearing() {
			continue
		}
		units, err := p.replicaUnits(ctx, ev, c, obj)
		if err != nil {
			return nil, err
		}
		for _, u := range units {
			out = append(out, InstanceReplicas{Component: c.c.Name, Instance: u.inst.id, Replicas: u.replicas})
		}
	}
	return out, nil
}

// ExpectedPods returns, for each item of specs (GetPodSpecs' answer for
// obj), its workload-wide pod count, or nil when it has no replicas: the
// item's own replicas times those of its component's scaled ancestors, as
// WorkloadReplicas counts them; the item's own replicas alone when the
// ancestors' count is not known (WorkloadReplicas would fail). `karta get`
// and `karta describe` show it as an instance's expected pods.
//
// The items' replicas are GetPodSpecs' own, so only the scaled ancestors'
// paths are evaluated here, and only when a component has one (a
// LeaderWorkerSet's groups): then, and only then, the call resolves the
// Karta's references again.
func (p *Program) ExpectedPods(ctx context.Context, obj *unstructured.Unstructured, specs *PodSpecs) []*int64 {
	factors := p.ancestorFactors(ctx, obj)
	out := make([]*int64, len(specs.Items))
	for i, it := range specs.Items {
		if it.Scale == nil || it.Scale.Replicas == nil {
			continue
		}
		n := *it.Scale.Replicas
		if f, ok := factors[it.Component]; ok {
			n *= f
		}
		out[i] = &n
	}
	return out
}

// ancestorFactors is ancestorFactor of each pod-bearing component with a
// scaled ancestor, by name; nil when there is none or when one fails
// (WorkloadReplicas fails then, and counts fall back to the items' own).
func (p *Program) ancestorFactors(ctx context.Context, obj *unstructured.Unstructured) map[string]int64 {
	var scaled []*compModel
	for _, c := range p.model.comps {
		if c.podBearing() && c.scaledAncestor() {
			scaled = append(scaled, c)
		}
	}
	if len(scaled) == 0 {
		return nil
	}
	ctx, err := p.enter(ctx, HookGetComponents, obj)
	if err != nil {
		return nil
	}
	factors := func(ctx context.Context, ev evaluator) (map[string]int64, error) {
		out := make(map[string]int64, len(scaled))
		for _, c := range scaled {
			f, err := p.ancestorFactor(ctx, ev, c, obj.Object)
			if err != nil {
				return nil, err
			}
			out[c.c.Name] = f
		}
		return out, nil
	}
	res, err := runHook(ctx, p, HookGetComponents, factors)
	if err != nil {
		return nil
	}
	return res
}
