package object

import (
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Op is one RFC 6902 operation; only add, replace and remove are used.
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// ApplyToTree applies operations to the document's YAML tree, so that the
// tree renders the revised object while every untouched node keeps its
// key order, number spelling and comments. A value written over an
// existing one keeps the old nodes of what it repeats (see graft): a list
// replaced whole to add one element keeps the others as they were written.
// Object is not changed: callers keep the revised Go value they computed.
func (d *Document) ApplyToTree(ops []Op) error {
	if d.orig == nil && d.src != nil {
		d.orig = cloneNode(d.node)
	}
	for _, op := range ops {
		if err := applyOp(d.node, op); err != nil {
			return fmt.Errorf("%s %s: %w", op.Op, op.Path, err)
		}
	}
	return nil
}

func applyOp(root *yaml.Node, op Op) error {
	tokens, err := splitPointer(op.Path)
	if err != nil {
		return err
	}
	if len(tokens) == 0 {
		return fmt.Errorf("the whole document cannot be replaced")
	}
	parent := root
	for _, tok := range tokens[:len(tokens)-1] {
		if parent, err = child(parent, tok); err != nil {
			return err
		}
	}
	last := tokens[len(tokens)-1]
	switch op.Op {
	case "add", "replace":
		return set(parent, last, op.Value, op.Op == "add")
	case "remove":
		return remove(parent, last)
	}
	return fmt.Errorf("unsupported operation %q", op.Op)
}

// splitPointer parses an RFC 6901 JSON pointer.
func splitPointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("invalid JSON pointer %q", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = unescapePointerToken(s)
	}
	return parts, nil
}

func child(n *yaml.Node, tok string) (*yaml.Node, error) {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		if i := keyIndex(n, tok); i >= 0 {
			return n.Content[i+1], nil
		}
		return nil, fmt.Errorf("no key %q", tok)
	case yaml.SequenceNode:
		i, err := index(n, tok)
		if err != nil {
			return nil, err
		}
		return n.Content[i], nil
	}
	return nil, fmt.Errorf("cannot descend into a scalar at %q", tok)
}

func set(parent *yaml.Node, tok string, value any, add bool) error {
	parent = deref(parent)
	switch parent.Kind {
	case yaml.MappingNode:
		if i := keyIndex(parent, tok); i >= 0 {
			vn, err := graft(parent.Content[i+1], value)
			if err != nil {
				return err
			}
			parent.Content[i+1] = vn
			return nil
		}
		if !add {
			return fmt.Errorf("no key %q to replace", tok)
		}
		vn, err := valueNode(value)
		if err != nil {
			return err
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok}
		parent.Content = append(parent.Content, k, vn)
		return nil
	case yaml.SequenceNode:
		i, err := index(parent, tok)
		if err != nil {
			return err
		}
		vn, err := graft(parent.Content[i], value)
		if err != nil {
			return err
		}
		parent.Content[i] = vn
		return nil
	}
	return fmt.Errorf("cannot set %q in a scalar", tok)
}

func remove(parent *yaml.Node, tok string) error {
	parent = deref(parent)
	if parent.Kind != yaml.MappingNode {
		return fmt.Errorf("can only remove keys of objects")
	}
	i := keyIndex(parent, tok)
	if i < 0 {
		return fmt.Errorf("no key %q to remove", tok)
	}
	parent.Content = append(parent.Content[:i], parent.Content[i+2:]...)
	return nil
}

func keyIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

func index(seq *yaml.Node, tok string) (int, error) {
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || i >= len(seq.Content) {
		return 0, fmt.Errorf("no index %q in a list of %d", tok, len(seq.Content))
	}
	return i, nil
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}
