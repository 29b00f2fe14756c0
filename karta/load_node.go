package karta

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file finds things in a parsed yaml.Node tree. The tree keeps the
// line of every key and value, which the decoded Go values do not, so
// errors found on the decoded values are located here.

// maxMergeDepth bounds how deep merge keys (<<) are followed when looking
// keys up; real documents nest merges one or two levels.
const maxMergeDepth = 8

// maxLookupSteps bounds the work of one lookup. Merge keys can fan out
// (<<: [*a, *a, ...] at every level), and keys that contain dots make a
// flat path ambiguous; the bound keeps a hostile document from making a
// lookup exponential. Every mapping entry looked at is a step. A lookup
// that runs out finds nothing, which only costs an error its line.
const maxLookupSteps = 200000

// lookup finds keys and paths in one document within a step budget.
type lookup struct {
	steps int
}

// step spends one step and reports whether the budget allows it.
func (l *lookup) step() bool {
	l.steps++
	return l.steps <= maxLookupSteps
}

// resolve follows document and alias nodes to the node they stand for. It
// returns nil for an empty document.
func resolve(n *yaml.Node) *yaml.Node {
	// An alias never points at an alias, so two steps past a document are
	// enough; the bound only guards against a malformed tree.
	for range 4 {
		if n == nil {
			return nil
		}
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		case yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}

// kindName names what a node holds in the user's terms.
func kindName(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!binary":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	}
	return "a value tagged " + spell(n.ShortTag())
}

// isMergeKey reports whether a mapping key is the YAML merge key (<<).
func isMergeKey(k *yaml.Node) bool {
	k = resolve(k)
	return k != nil && k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge"
}

// findKey returns the key and value nodes of a mapping entry, looking in
// the mapping's own entries first and then in maps merged into it with <<,
// which is the precedence the YAML library applies when decoding.
func (l *lookup) findKey(m *yaml.Node, key string, mergeDepth int) (k, v *yaml.Node) {
	if !l.step() {
		return nil, nil
	}
	m = resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !l.step() {
			return nil, nil
		}
		kn, vn := m.Content[i], m.Content[i+1]
		if isMergeKey(kn) {
			merges = append(merges, vn)
			continue
		}
		if rk := resolve(kn); rk != nil && rk.Kind == yaml.ScalarNode && rk.Value == key {
			return kn, vn
		}
	}
	if mergeDepth >= maxMergeDepth {
		return nil, nil
	}
	for _, mv := range merges {
		mv = resolve(mv)
		if mv == nil {
			continue
		}
		sources := []*yaml.Node{mv}
		if mv.Kind == yaml.SequenceNode {
			sources = mv.Content
		}
		for _, src := range sources {
			if kn, vn := l.findKey(src, key, mergeDepth+1); kn != nil {
				return kn, vn
			}
		}
	}
	return nil, nil
}

// nodeAt follows a field path from root. It returns the node found (nil
// when the path leaves the tree) and the line of the deepest step that
// matched: the key's line for a map entry, the element's for a list item.
func nodeAt(root *yaml.Node, path fieldPath) (*yaml.Node, int) {
	var l lookup
	n := resolve(root)
	if n == nil {
		return nil, 0
	}
	line := n.Line
	for _, e := range path {
		n = resolve(n)
		if n == nil {
			return nil, line
		}
		if e.isIndex {
			if n.Kind != yaml.SequenceNode || e.index < 0 || e.index >= len(n.Content) {
				return nil, line
			}
			n = n.Content[e.index]
			line = n.Line
			continue
		}
		k, v := l.findKey(n, e.key, 0)
		if k == nil {
			return nil, line
		}
		line, n = k.Line, v
	}
	return n, line
}

// matchStrictPath turns the flat path of a strict-decoding error
// ("spec.rootComponent[0].x", keys joined with dots) back into path
// elements by matching it against the document, so that keys containing
// dots are kept whole.
func matchStrictPath(root *yaml.Node, flat string) (fieldPath, bool) {
	var l lookup
	var match func(n *yaml.Node, rest string, path fieldPath) (fieldPath, bool)
	match = func(n *yaml.Node, rest string, path fieldPath) (fieldPath, bool) {
		if !l.step() {
			return nil, false
		}
		if rest == "" {
			return path, true
		}
		n = resolve(n)
		if n == nil {
			return nil, false
		}
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 || n.Kind != yaml.SequenceNode {
				return nil, false
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil, false
			}
			return match(n.Content[i], strings.TrimPrefix(rest[end+1:], "."), path.at(i))
		}
		if n.Kind != yaml.MappingNode {
			return nil, false
		}
		for _, key := range l.mappingKeys(n, 0) {
			after, ok := strings.CutPrefix(rest, key)
			if !ok || (after != "" && after[0] != '.' && after[0] != '[') {
				continue
			}
			_, v := l.findKey(n, key, 0)
			if p, ok := match(v, strings.TrimPrefix(after, "."), path.child(key)); ok {
				return p, true
			}
		}
		return nil, false
	}
	return match(root, flat, nil)
}

// mappingKeys lists the string keys of a mapping, merged ones included.
func (l *lookup) mappingKeys(m *yaml.Node, mergeDepth int) []string {
	if !l.step() {
		return nil
	}
	m = resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var keys []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !l.step() {
			return keys
		}
		kn, vn := m.Content[i], m.Content[i+1]
		if !isMergeKey(kn) {
			if rk := resolve(kn); rk != nil && rk.Kind == yaml.ScalarNode {
				keys = append(keys, rk.Value)
			}
			continue
		}
		if mergeDepth >= maxMergeDepth {
			continue
		}
		mv := resolve(vn)
		if mv == nil {
			continue
		}
		sources := []*yaml.Node{mv}
		if mv.Kind == yaml.SequenceNode {
			sources = mv.Content
		}
		for _, src := range sources {
			keys = append(keys, l.mappingKeys(src, mergeDepth+1)...)
		}
	}
	return keys
}
