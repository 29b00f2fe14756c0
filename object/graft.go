package object

import (
	"bytes"
	"encoding/json"
	"slices"

	yaml "go.yaml.in/yaml/v3"
)

// graft returns the node for v written where old was: old's own nodes
// wherever v repeats their values, so that a replaced list or object keeps
// the layout of what did not change (key order, flow style, comments,
// number spellings). Objects keep old's key order, with new keys after
// them; list elements are matched by value, wherever they moved. New
// elements of a list take the style and key order of its first element.
func graft(old *yaml.Node, v any) (*yaml.Node, error) {
	old = deref(old)
	if enc, ok := encodeNode(old); ok && sameJSON(enc, v) {
		return old, nil
	}
	switch x := v.(type) {
	case map[string]any:
		if old.Kind != yaml.MappingNode {
			break
		}
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: old.Style,
			HeadComment: old.HeadComment, LineComment: old.LineComment, FootComment: old.FootComment}
		seen := make(map[string]bool, len(x))
		for i := 0; i+1 < len(old.Content); i += 2 {
			k := old.Content[i].Value
			e, ok := x[k]
			if !ok || seen[k] {
				continue
			}
			seen[k] = true
			vn, err := graft(old.Content[i+1], e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, old.Content[i], vn)
		}
		rest, err := valueNode(without(x, seen))
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, rest.Content...)
		return n, nil
	case []any:
		if old.Kind != yaml.SequenceNode {
			break
		}
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: old.Style,
			HeadComment: old.HeadComment, LineComment: old.LineComment, FootComment: old.FootComment}
		encs := make([][]byte, len(old.Content))
		for i, c := range old.Content {
			encs[i], _ = encodeNode(deref(c))
		}
		used := make([]bool, len(old.Content))
		for _, e := range x {
			i := -1
			for j := range old.Content {
				if !used[j] && encs[j] != nil && sameJSON(encs[j], e) {
					i = j
					break
				}
			}
			if i >= 0 {
				used[i] = true
				n.Content = append(n.Content, old.Content[i])
				continue
			}
			vn, err := valueNode(e)
			if err != nil {
				return nil, err
			}
			if len(old.Content) > 0 {
				styleLike(vn, deref(old.Content[0]))
			}
			n.Content = append(n.Content, vn)
		}
		return n, nil
	}
	return valueNode(v)
}

// without returns the members of m whose keys are not in drop.
func without(m map[string]any, drop map[string]bool) map[string]any {
	out := make(map[string]any, len(m)-len(drop))
	for k, e := range m {
		if !drop[k] {
			out[k] = e
		}
	}
	return out
}

// styleLike gives a new element of a list the style of an old one: its
// flow style and, for objects, its key order (the keys it shares first).
func styleLike(n, like *yaml.Node) {
	if n.Kind != like.Kind {
		return
	}
	n.Style = like.Style & yaml.FlowStyle
	if n.Kind != yaml.MappingNode {
		return
	}
	rank := map[string]int{}
	for i := 0; i+1 < len(like.Content); i += 2 {
		rank[like.Content[i].Value] = i/2 + 1
	}
	type pair struct{ k, v *yaml.Node }
	pairs := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		pairs = append(pairs, pair{n.Content[i], n.Content[i+1]})
	}
	slices.SortStableFunc(pairs, func(a, b pair) int {
		ra, rb := rank[a.k.Value], rank[b.k.Value]
		switch {
		case ra == 0 && rb == 0:
			return 0 // both new: valueNode's order
		case ra == 0:
			return 1
		case rb == 0:
			return -1
		}
		return ra - rb
	})
	n.Content = n.Content[:0]
	for _, p := range pairs {
		n.Content = append(n.Content, p.k, p.v)
	}
}

// encodeNode returns a node's value as compact JSON, false when it does
// not convert (an alias bomb, say).
func encodeNode(n *yaml.Node) ([]byte, bool) {
	v, err := new(converter).toValue(n, 0)
	if err != nil {
		return nil, false
	}
	b, err := json.Marshal(v)
	return b, err == nil
}

// sameJSON reports whether v encodes as enc: equal values, numbers by
// their literal, so that a changed spelling counts as a change.
func sameJSON(enc []byte, v any) bool {
	b, err := json.Marshal(v)
	return err == nil && bytes.Equal(enc, b)
}
