package karta

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kartalua/karta/internal/yamlerr"
)

// This file finds things in a parsed yaml.Node tree. The tree keeps the
// line of every key and value, which the decoded Go values do not, so
// errors found on the decoded values are located here.

// resolve follows document and alias nodes to the node they stand for. It
// returns nil for an empty document.
func resolve(n *yaml.Node) *yaml.Node { return yamlerr.Resolve(n) }

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
func isMergeKey(k *yaml.Node) bool { return yamlerr.IsMergeKey(k) }

// lookup finds keys and paths in one document within a step budget.
type lookup = yamlerr.Lookup

// nodeAt follows a field path from root (yamlerr.NodeAt): the node found
// (nil when the path leaves the tree) and the line of the deepest step
// that matched.
func nodeAt(root *yaml.Node, path fieldPath) (*yaml.Node, int) {
	steps := make([]yamlerr.Step, len(path))
	for i, e := range path {
		steps[i] = yamlerr.Step{Key: e.key, Index: e.index, IsIndex: e.isIndex}
	}
	return yamlerr.NodeAt(root, steps)
}

// matchStrictPath turns the flat path of a strict-decoding error
// ("spec.rootComponent[0].x", keys joined with dots) back into path
// elements by matching it against the document, so that keys containing
// dots are kept whole.
func matchStrictPath(root *yaml.Node, flat string) (fieldPath, bool) {
	var l lookup
	var match func(n *yaml.Node, rest string, path fieldPath) (fieldPath, bool)
	match = func(n *yaml.Node, rest string, path fieldPath) (fieldPath, bool) {
		if !l.Step() {
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
		for _, key := range l.MappingKeys(n) {
			after, ok := strings.CutPrefix(rest, key)
			if !ok || (after != "" && after[0] != '.' && after[0] != '[') {
				continue
			}
			_, v := l.FindKey(n, key)
			if p, ok := match(v, strings.TrimPrefix(after, "."), path.child(key)); ok {
				return p, true
			}
		}
		return nil, false
	}
	return match(root, flat, nil)
}
