package workload

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/interpreter"
)

// Place places pods in their components, instances and replicas, and in
// their gang groups when the Karta has a gang (gang instructions, or an
// override of GetGangGroups). Every pod appears once, in input order: in
// Placements (Group empty outside a gang) or in Unmatched with the reason;
// Groups are GetGangGroups' groups, none without a gang.
//
// A pod's component is a matter of the component selectors, not of the
// gang: a component can be deliberately outside it (a RayJob's submitter
// comes after the cluster). So the pods GetGangGroups leaves unmatched are
// placed by PlacePods, without a group; only those PlacePods leaves
// unmatched too are unmatched, with its reason. karta describe and karta
// get count a component's pods so.
func Place(ctx context.Context, p *interpreter.Program, obj *unstructured.Unstructured, pods []*unstructured.Unstructured) (*interpreter.GangResult, error) {
	if !PlacesByGang(p) {
		res, err := p.PlacePods(ctx, obj, pods)
		if err != nil {
			return nil, err
		}
		return &interpreter.GangResult{Groups: []interpreter.Group{}, Placements: res.Placements, Unmatched: res.Unmatched}, nil
	}
	res, err := p.GetGangGroups(ctx, obj, pods)
	if err != nil || len(res.Unmatched) == 0 {
		return res, err
	}
	outside := make(map[string]bool, len(res.Unmatched))
	for _, u := range res.Unmatched {
		outside[u.Pod] = true
	}
	var rest []*unstructured.Unstructured
	for _, pod := range pods {
		if outside[interpreter.PodKey(pod.Object)] {
			rest = append(rest, pod)
		}
	}
	placed, err := p.PlacePods(ctx, obj, rest)
	if err != nil {
		return nil, err
	}
	return &interpreter.GangResult{
		Groups:     res.Groups,
		Placements: inputOrder(pods, res.Placements, placed.Placements),
		Unmatched:  placed.Unmatched,
	}, nil
}

// inputOrder merges the gang's placements and the others into the pods'
// order.
func inputOrder(pods []*unstructured.Unstructured, gang, others []interpreter.Placement) []interpreter.Placement {
	by := make(map[string]interpreter.Placement, len(gang)+len(others))
	for _, pl := range others {
		by[pl.Pod] = pl
	}
	for _, pl := range gang {
		by[pl.Pod] = pl
	}
	out := make([]interpreter.Placement, 0, len(by))
	for _, pod := range pods {
		if pl, ok := by[interpreter.PodKey(pod.Object)]; ok {
			out = append(out, pl)
			delete(by, interpreter.PodKey(pod.Object))
		}
	}
	return out
}

// PlacesByGang reports whether GetGangGroups places the Program's pods:
// generated code does so only under gang instructions; an override says
// what it says.
func PlacesByGang(p *interpreter.Program) bool {
	if p.Overridden(interpreter.HookGetGangGroups) {
		return true
	}
	in := p.Karta().Spec.EffectiveInstructions()
	return in != nil && in.GangScheduling != nil && (in.GangScheduling.PodGroup != nil || len(in.GangScheduling.PodGroups) > 0)
}
