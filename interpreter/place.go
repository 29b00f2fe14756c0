package interpreter

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// PodPlacement is where one pod belongs (PlacePod): its component,
// instance and replica key, its gang group and the group's minimum
// member count.
type PodPlacement struct {
	Component string `json:"component"`
	Instance  string `json:"instance"`
	Replica   string `json:"replica"`
	Group     string `json:"group"`
	MinMember int64  `json:"minMember"`
	// SubGroup is the v2 subgroup the pod is in, "" when none covers it
	// (or with the alpha form).
	SubGroup string `json:"subGroup,omitempty"`
}

// placement is a pod placed on the component tree.
type placement struct {
	comp     *compModel
	instance string
	replica  string
}

// placePod places one pod (docs/karta.md, "Pods"). It returns the
// placement, or the reason the pod is unmatched. o holds what the object
// gives (every component's resolved instances, indexed by
// compModel.index, the namespace and the candidate components; see
// gangModel.scope). A jq error on the pod only unmatches it: pods are not
// the Karta author's to control, so one odd pod must not fail the call for
// the others.
func (g *gangModel) placePod(ctx context.Context, ev evaluator, o *gangObject, pod *podIn) (placement, string) {
	insts := o.insts
	// 1. Namespace: a pod of another namespace cannot belong to the object.
	if podNS := pod.ns; podNS != "" && o.ns != "" && podNS != o.ns {
		return placement{}, fmt.Sprintf("namespace %q is not the object's namespace %q", podNS, o.ns)
	}
	gc, reason := g.podComponent(ctx, ev, o.cands, pod)
	if gc == nil {
		return placement{}, reason
	}
	pl := placement{comp: gc.cm}
	// 3. Instance.
	if gc.cm.ids != nil {
		if pl.instance, reason = g.podInstance(ctx, ev, gc, insts, pod); reason != "" {
			return placement{}, reason
		}
	}
	// 4. Replica: the nearest replicaSelector, so that a worker under
	// LWS's group carries the group's key.
	if rc := g.replicaComp(gc); rc != nil {
		if pl.replica, reason = g.podReplica(ctx, ev, rc, pod); reason != "" {
			return placement{}, reason
		}
	}
	return pl, ""
}

// placeAll is PlacePods: every pod placed on the component tree, with
// no gang. Only the instances are read from the object (the scale and
// minimum paths are the gang's); their errors fail the call, a pod's own
// problems only unmatch it.
func (g *gangModel) placeAll(ctx context.Context, ev evaluator, obj map[string]any, pods []map[string]any) (*PlacementResult, error) {
	res := &PlacementResult{Placements: make([]Placement, 0, len(pods)), Unmatched: []Unmatched{}}
	o := newGangObject(len(g.comps))
	defer o.release()
	for _, gc := range g.comps {
		i := gc.cm.index
		insts, err := g.m.instancesInto(ctx, ev, gc.cm, obj, o.insts[i][:0], presenceOnly)
		if err != nil {
			return nil, cancelled(ctx, &GangObjectError{Component: gc.name(), Err: err})
		}
		o.insts[i] = insts
	}
	g.scope(o, obj)
	for i, pod := range pods {
		if err := podsGoOn(ctx, ev, i); err != nil {
			return nil, err
		}
		pi := newPodIn(pod)
		pl, reason := g.placePod(ctx, ev, o, &pi)
		if reason != "" {
			res.Unmatched = append(res.Unmatched, Unmatched{Pod: PodKey(pod), Reason: reason})
			continue
		}
		res.Placements = append(res.Placements, Placement{Pod: PodKey(pod), Component: pl.comp.c.Name,
			Instance: pl.instance, Replica: pl.replica})
	}
	// A cancelled call must fail rather than report every later pod as
	// unmatched with the context's error.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// podComponent finds the pod's component among the candidates: the
// pod-bearing components with a present instance (gangObject.cands).
func (g *gangModel) podComponent(ctx context.Context, ev evaluator, candidates []*gangComp, pod *podIn) (*gangComp, string) {
	if len(candidates) == 0 {
		return nil, "no pod-bearing component has a present instance"
	}
	var room [4]*gangComp
	matched := room[:0]
	for _, gc := range candidates {
		// A lone candidate without a selector takes every pod of the
		// namespace; with a selector it is enforced, unlike upstream.
		ok, err := gc.selects(ctx, ev, pod)
		if err != nil {
			return nil, err.Error()
		}
		if ok {
			matched = append(matched, gc)
		}
	}
	switch len(matched) {
	case 0:
		return nil, "no component selector matches"
	case 1:
		return matched[0], ""
	}
	names := make([]string, len(matched))
	for i, gc := range matched {
		names[i] = gc.name()
	}
	return nil, "ambiguous: matches " + strings.Join(names, ", ")
}

// selects evaluates the component's type selector on a pod. With a value
// it is jq's (keyPath) == $value for any output, compared in Go with jq's
// own ordering rather than by pasting the value into jq; without one any
// non-null output matches, false included. matchLabels must hold as well.
// No selector matches every pod (validation lets only a lone candidate
// lack one).
func (gc *gangComp) selects(ctx context.Context, ev evaluator, pod *podIn) (bool, error) {
	if gc.matchLabels != nil && !hasLabels(pod.obj, gc.matchLabels) {
		return false, nil
	}
	if gc.typeKey == nil {
		return true, nil
	}
	var one [1]any
	outs, err := gc.typeKey.all(ctx, ev, pod, &one)
	if err != nil {
		return false, err
	}
	for _, v := range outs {
		if gc.typeValue == nil {
			if v != nil {
				return true, nil
			}
		} else if s, ok := v.(string); ok && s == *gc.typeValue {
			// jq's == of a string value: only an equal string compares
			// equal (gojq.Compare would box the value on every call).
			return true, nil
		}
	}
	return false, nil
}

// hasLabels tells whether the pod's metadata.labels hold every pair of
// want, as a Kubernetes label selector's matchLabels do: a label that is
// missing, or is not that string, fails the match. It reads the decoded
// pod in place: labels.SelectorFromSet would need the pod's labels copied
// into a labels.Set on every placement, on the hot path of GetGangGroups.
func hasLabels(pod map[string]any, want map[string]string) bool {
	meta, _ := pod["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	for k, v := range want {
		if got, ok := labels[k].(string); !ok || got != v {
			return false
		}
	}
	return true
}

// podInstance reads a pod's instance of gc with gc's instance selector:
// one non-empty string or number that is a present id.
func (g *gangModel) podInstance(ctx context.Context, ev evaluator, gc *gangComp, insts [][]instance, pod *podIn) (string, string) {
	var one [1]any
	outs, err := gc.instanceID.all(ctx, ev, pod, &one)
	if err != nil {
		return "", err.Error()
	}
	id, why := singleID(outs)
	if why != "" {
		return "", fmt.Sprintf("component %q: componentInstanceSelector %s", gc.name(), why)
	}
	for _, inst := range insts[gc.cm.index] {
		if inst.present && inst.id == id {
			return id, ""
		}
	}
	// An absent instance matches no pod, so only present ids
	// are listed.
	var present []string
	for _, inst := range insts[gc.cm.index] {
		if inst.present {
			present = append(present, inst.id)
		}
	}
	return "", fmt.Sprintf("instance %q not found among [%s]", id, strings.Join(present, " "))
}

// replicaComp returns the nearest component with a replicaSelector among
// gc and its ancestors, nil when there is none.
func (g *gangModel) replicaComp(gc *gangComp) *gangComp {
	for c := gc.cm; c != nil; c = c.parent {
		if rc := g.comps[c.index]; rc.replicaKey != nil {
			return rc
		}
	}
	return nil
}

// podReplica reads a pod's replica key with rc's replicaSelector, under
// the instance selector's single-value rule.
func (g *gangModel) podReplica(ctx context.Context, ev evaluator, rc *gangComp, pod *podIn) (string, string) {
	var one [1]any
	outs, err := rc.replicaKey.all(ctx, ev, pod, &one)
	if err != nil {
		return "", err.Error()
	}
	key, why := singleID(outs)
	if why != "" {
		return "", fmt.Sprintf("component %q: replicaSelector %s", rc.name(), why)
	}
	return key, ""
}

// singleID applies the single-value rule of the instance and replica
// selectors to a pod path's outputs: exactly one non-empty string or
// number, numbers through jq tostring. The second result says what is
// wrong, "" when nothing is.
func singleID(outs []any) (string, string) {
	if len(outs) != 1 {
		return "", fmt.Sprintf("yields %d values, want exactly one", len(outs))
	}
	switch v := outs[0].(type) {
	case string:
		if v != "" {
			return v, ""
		}
	default:
		if isJQNumber(v) {
			if s, err := jqNumberString(v); err == nil {
				return s, ""
			}
		}
	}
	return "", fmt.Sprintf("yields %s, want a non-empty string or a number", describe(outs[0]))
}

// isJQNumber reports whether v is one of the number types gojq produces or
// passes through.
func isJQNumber(v any) bool {
	switch v.(type) {
	case int, int64, float64, *big.Int, json.Number:
		return true
	}
	return false
}

func anyPresent(insts []instance) bool {
	for _, inst := range insts {
		if inst.present {
			return true
		}
	}
	return false
}

// PodKey is how hook results name a pod (Placement.Pod, Unmatched.Pod,
// UnmatchedError.Pod): namespace/name, or the name alone without a
// namespace. Callers that match pods to results key them by it.
func PodKey(pod map[string]any) string {
	name := metaString(pod, "name")
	if ns := metaString(pod, "namespace"); ns != "" {
		return ns + "/" + name
	}
	return name
}
