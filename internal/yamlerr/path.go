package yamlerr

import (
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Step is one step of a field path: a map key, or a list index.
type Step struct {
	Key     string
	Index   int
	IsIndex bool
}

// ParsePath reads a field path as the API server writes it:
// spec.template.spec.containers[0].image, with keys that are not plain
// words as ["a.b"] or [a.b].
func ParsePath(s string) []Step {
	var out []Step
	for s != "" {
		switch {
		case s[0] == '.':
			s = s[1:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if strings.HasPrefix(s, `["`) {
				// A quoted key may hold ']': find its closing quote.
				if q, err := strconv.QuotedPrefix(s[1:]); err == nil {
					key, _ := strconv.Unquote(q)
					out = append(out, Step{Key: key})
					s = strings.TrimPrefix(s[1+len(q):], "]")
					continue
				}
			}
			if end < 0 {
				return append(out, Step{Key: s[1:]})
			}
			in := s[1:end]
			if i, err := strconv.Atoi(in); err == nil {
				out = append(out, Step{Index: i, IsIndex: true})
			} else {
				out = append(out, Step{Key: in})
			}
			s = s[end+1:]
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			out = append(out, Step{Key: s[:end]})
			s = s[end:]
		}
	}
	return out
}

// maxMergeDepth bounds how deep merge keys (<<) are followed when looking
// keys up; real documents nest merges one or two levels.
const maxMergeDepth = 8

// maxLookupSteps bounds the work of one lookup. Merge keys can fan out
// (<<: [*a, *a, ...] at every level); the bound keeps a hostile document
// from making a lookup exponential. A lookup that runs out finds nothing,
// which only costs an error its line.
const maxLookupSteps = 200000

// Lookup finds keys and paths in one document within a step budget.
type Lookup struct {
	steps int
}

// Step spends one step and reports whether the budget allows it.
func (l *Lookup) Step() bool {
	l.steps++
	return l.steps <= maxLookupSteps
}

// Resolve follows document and alias nodes to the node they stand for. It
// returns nil for an empty document.
func Resolve(n *yaml.Node) *yaml.Node {
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

// IsMergeKey reports whether a mapping key is the YAML merge key (<<).
func IsMergeKey(k *yaml.Node) bool {
	k = Resolve(k)
	return k != nil && k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge"
}

// FindKey returns the key and value nodes of a mapping entry, looking in
// the mapping's own entries first and then in maps merged into it with <<,
// which is the precedence the YAML library applies when decoding.
func (l *Lookup) FindKey(m *yaml.Node, key string) (k, v *yaml.Node) {
	return l.findKey(m, key, 0)
}

func (l *Lookup) findKey(m *yaml.Node, key string, mergeDepth int) (k, v *yaml.Node) {
	if !l.Step() {
		return nil, nil
	}
	m = Resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !l.Step() {
			return nil, nil
		}
		kn, vn := m.Content[i], m.Content[i+1]
		if IsMergeKey(kn) {
			merges = append(merges, vn)
			continue
		}
		if rk := Resolve(kn); rk != nil && rk.Kind == yaml.ScalarNode && rk.Value == key {
			return kn, vn
		}
	}
	if mergeDepth >= maxMergeDepth {
		return nil, nil
	}
	for _, mv := range merges {
		mv = Resolve(mv)
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

// NodeAt follows a field path from root. It returns the node found (nil
// when the path leaves the tree) and the line of the deepest step that
// matched: the key's line for a map entry, the element's for a list item.
func NodeAt(root *yaml.Node, path []Step) (*yaml.Node, int) {
	var l Lookup
	n := Resolve(root)
	if n == nil {
		return nil, 0
	}
	line := n.Line
	for _, e := range path {
		n = Resolve(n)
		if n == nil {
			return nil, line
		}
		if e.IsIndex {
			if n.Kind != yaml.SequenceNode || e.Index < 0 || e.Index >= len(n.Content) {
				return nil, line
			}
			n = n.Content[e.Index]
			line = n.Line
			continue
		}
		k, v := l.FindKey(n, e.Key)
		if k == nil {
			return nil, line
		}
		line, n = k.Line, v
	}
	return n, line
}

// Lines locates field paths in the documents of an input, for problems
// found on the decoded values (a Karta's validation) to name their line.
type Lines struct {
	docs []*yaml.Node
}

// NewLines parses data; an input that does not parse locates nothing.
func NewLines(data []byte) *Lines {
	docs, _ := Parse(data, "")
	return &Lines{docs: docs}
}

// Field returns the line of field in document (1-based, counted as Parse
// counts), or of the deepest part of it that is there; 0 when the
// document is not there.
func (l *Lines) Field(document int, field string) int {
	if document < 1 || document > len(l.docs) {
		return 0
	}
	_, line := NodeAt(l.docs[document-1], ParsePath(field))
	return line
}

// MappingKeys lists the string keys of a mapping, merged ones included.
func (l *Lookup) MappingKeys(m *yaml.Node) []string { return l.mappingKeys(m, 0) }

func (l *Lookup) mappingKeys(m *yaml.Node, mergeDepth int) []string {
	if !l.Step() {
		return nil
	}
	m = Resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var keys []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !l.Step() {
			return keys
		}
		kn, vn := m.Content[i], m.Content[i+1]
		if !IsMergeKey(kn) {
			if rk := Resolve(kn); rk != nil && rk.Kind == yaml.ScalarNode {
				keys = append(keys, rk.Value)
			}
			continue
		}
		if mergeDepth >= maxMergeDepth {
			continue
		}
		mv := Resolve(vn)
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
