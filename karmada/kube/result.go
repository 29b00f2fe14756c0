package kube

import (
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// This file builds the value pushKubeResult hands Value — what
// encoding/json gives when it marshals a helper's result and unmarshals
// the text into an interface — straight from the two result types, for
// the cost of the maps: the round trip was most of a
// kube.accuratePodRequirements call. It is written by hand because the
// value must be exactly the round trip's (omitempty per field, quantities
// as their canonical text, numbers as float64) and no library builds it
// without the text; TestKubeResultGenericIsTheJSONRoundTrip holds it to
// the round trip. A string that is not valid UTF-8 (the text would hold
// U+FFFD in its place) declines: the caller takes the round trip.

// kubeResultGeneric is v's JSON round trip for a helper's result; ok is
// false for any other value, which the caller converts through the text.
func kubeResultGeneric(v any) (any, bool) {
	switch x := v.(type) {
	case *kubeReplicaRequirements:
		if x == nil {
			return nil, true
		}
		m := map[string]any{}
		if x.NodeClaim != nil {
			nc, ok := nodeClaimGeneric(x.NodeClaim)
			if !ok {
				return nil, false
			}
			m["nodeClaim"] = nc
		}
		if len(x.ResourceRequest) > 0 {
			rr := make(map[string]any, len(x.ResourceRequest))
			for name, q := range x.ResourceRequest {
				if !utf8.ValidString(string(name)) {
					return nil, false
				}
				rr[string(name)] = q.String() // MarshalJSON's text, quoted
			}
			m["resourceRequest"] = rr
		}
		return m, true
	case []kubeDependency:
		if x == nil {
			return nil, true
		}
		out := make([]any, len(x))
		for i, d := range x {
			if !validStrings(d.APIVersion, d.Kind, d.Namespace, d.Name) {
				return nil, false
			}
			m := map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind}
			if d.Namespace != "" {
				m["namespace"] = d.Namespace
			}
			if d.Name != "" {
				m["name"] = d.Name
			}
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

func nodeClaimGeneric(nc *kubeNodeClaim) (map[string]any, bool) {
	m := map[string]any{}
	if s := nc.HardNodeAffinity; s != nil {
		terms, ok := nodeSelectorTermsGeneric(s.NodeSelectorTerms)
		if !ok {
			return nil, false
		}
		m["hardNodeAffinity"] = map[string]any{"nodeSelectorTerms": terms}
	}
	if len(nc.NodeSelector) > 0 {
		sel := make(map[string]any, len(nc.NodeSelector))
		for k, v := range nc.NodeSelector {
			if !validStrings(k, v) {
				return nil, false
			}
			sel[k] = v
		}
		m["nodeSelector"] = sel
	}
	if len(nc.Tolerations) > 0 {
		ts := make([]any, len(nc.Tolerations))
		for i, t := range nc.Tolerations {
			tm := tolerationGeneric(t)
			if tm == nil {
				return nil, false
			}
			ts[i] = tm
		}
		m["tolerations"] = ts
	}
	return m, true
}

// nodeSelectorTermsGeneric is the round trip of a NodeSelector's terms,
// which have no omitempty: nil is null.
func nodeSelectorTermsGeneric(terms []corev1.NodeSelectorTerm) (any, bool) {
	if terms == nil {
		return nil, true
	}
	ts := make([]any, len(terms))
	for i, term := range terms {
		tm := map[string]any{}
		for _, f := range []struct {
			key  string
			reqs []corev1.NodeSelectorRequirement
		}{{"matchExpressions", term.MatchExpressions}, {"matchFields", term.MatchFields}} {
			if len(f.reqs) == 0 {
				continue
			}
			rs, ok := requirementsGeneric(f.reqs)
			if !ok {
				return nil, false
			}
			tm[f.key] = rs
		}
		ts[i] = tm
	}
	return ts, true
}

func requirementsGeneric(reqs []corev1.NodeSelectorRequirement) ([]any, bool) {
	rs := make([]any, len(reqs))
	for j, r := range reqs {
		if !validStrings(r.Key, string(r.Operator)) || !validStrings(r.Values...) {
			return nil, false
		}
		rm := map[string]any{"key": r.Key, "operator": string(r.Operator)}
		if len(r.Values) > 0 {
			vs := make([]any, len(r.Values))
			for k, v := range r.Values {
				vs[k] = v
			}
			rm["values"] = vs
		}
		rs[j] = rm
	}
	return rs, true
}

// tolerationGeneric is a toleration's round trip, nil where a string is
// not valid UTF-8.
func tolerationGeneric(t corev1.Toleration) map[string]any {
	if !validStrings(t.Key, string(t.Operator), t.Value, string(t.Effect)) {
		return nil
	}
	tm := map[string]any{}
	for _, f := range []struct{ key, value string }{
		{"key", t.Key}, {"operator", string(t.Operator)}, {"value", t.Value}, {"effect", string(t.Effect)},
	} {
		if f.value != "" {
			tm[f.key] = f.value
		}
	}
	if t.TolerationSeconds != nil {
		tm["tolerationSeconds"] = float64(*t.TolerationSeconds)
	}
	return tm
}

func validStrings(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}
