package object

import (
	"bytes"
	"slices"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Splicing keeps the bytes of every line a revision does not touch.
// Re-encoding the whole tree (encode) keeps key order and comments but not
// layout: yaml.v3 writes one sequence indentation and one comment spacing,
// so a list indented the other way, or a comment two spaces after its
// value, would change in parts nobody revised. spliced compares the tree
// as decoded with the tree as revised and replaces, in the input's own
// text, only the entries that differ (a key and its value, or a list
// item), each re-encoded at its own indentation. Whatever it cannot place
// by lines (a change inside a flow collection escalates to the nearest
// block entry holding it) is re-encoded with that entry; and the result
// is checked: when it does not decode to the revised tree, YAML falls
// back to encoding the whole tree.

// edit replaces lines [from, to] (1-based, inclusive; to == from-1 inserts
// before from) with text.
type edit struct {
	from, to int
	text     string
}

type splicer struct {
	lines []string // the input's lines, each with its newline
	edits []edit
}

// spliced renders the revised document from its input's text, or reports
// false when it cannot.
func (d *Document) spliced() ([]byte, bool) {
	if d.src == nil || d.orig == nil || d.Item > 0 {
		return nil, false
	}
	s := &splicer{lines: strings.SplitAfter(string(d.src), "\n")}
	first, last := s.docRange(d.orig.Line)
	if !s.mapping(d.orig, d.node, last) {
		return nil, false
	}
	// Bottom up, so that lines above keep their numbers; of two inserts at
	// one place, the later made (an outer mapping's new key) goes in first
	// and so ends up after the inner one.
	slices.Reverse(s.edits)
	sort.SliceStable(s.edits, func(i, j int) bool { return s.edits[i].from > s.edits[j].from })
	out := append([]string{}, s.lines[first-1:last]...)
	for _, e := range s.edits {
		from, to := e.from-first, e.to-first // 0-based in out
		if from < 0 || to >= len(out) || to < from-1 {
			return nil, false
		}
		var repl []string
		if e.text != "" {
			repl = strings.SplitAfter(strings.TrimSuffix(e.text, "\n")+"\n", "\n")
			repl = repl[:len(repl)-1] // SplitAfter's empty tail
		}
		out = append(out[:from], append(repl, out[to+1:]...)...)
	}
	text := strings.TrimRight(strings.Join(out, ""), "\n") + "\n"
	// The splice must say what the tree says.
	docs, err := Decode([]byte(text), "")
	if err != nil || len(docs) != 1 {
		return nil, false
	}
	var want, got bytes.Buffer
	if writeJSON(&want, d.node, "") != nil || writeJSON(&got, docs[0].node, "") != nil || want.String() != got.String() {
		return nil, false
	}
	return []byte(text), true
}

// docRange is the document's lines in the input: from after the "---"
// before it to before the one after it.
func (s *splicer) docRange(line int) (first, last int) {
	first, last = 1, len(s.lines)
	if last > 0 && s.lines[last-1] == "" {
		last--
	}
	for i := line - 1; i >= 1; i-- {
		if separator(s.lines[i-1]) {
			first = i + 1
			break
		}
	}
	for i := line + 1; i <= last; i++ {
		if separator(s.lines[i-1]) {
			last = i - 1
			break
		}
	}
	return first, last
}

func separator(l string) bool {
	return strings.HasPrefix(l, "---") || strings.HasPrefix(l, "...")
}

// entryEnd is the last line of an entry starting at start whose region
// runs to end at most: trailing blank lines and comments at or left of
// col (the next entry's) are not its own.
func (s *splicer) entryEnd(start, end, col int) int {
	for end > start {
		l := s.lines[end-1]
		t := strings.TrimLeft(l, " ")
		if strings.TrimSpace(l) == "" || (strings.HasPrefix(t, "#") && len(l)-len(t) < col) {
			end--
			continue
		}
		break
	}
	return end
}

// mapping diffs the entries of a block mapping o (as decoded) and n (as
// revised); end is the last line o may span. False: the change cannot be
// placed here, the caller re-encodes the entry holding o.
func (s *splicer) mapping(o, n *yaml.Node, end int) bool {
	if o.Kind != yaml.MappingNode || n.Kind != yaml.MappingNode || o.Style&yaml.FlowStyle != 0 || len(o.Content) == 0 {
		return false
	}
	// The keys o and n share must keep their order.
	var shared []string
	for i := 0; i+1 < len(o.Content); i += 2 {
		if keyIndex(n, o.Content[i].Value) >= 0 {
			shared = append(shared, o.Content[i].Value)
		}
	}
	j := 0
	for i := 0; i+1 < len(n.Content); i += 2 {
		if keyIndex(o, n.Content[i].Value) >= 0 {
			if shared[j] != n.Content[i].Value {
				return false
			}
			j++
		}
	}
	col := o.Content[0].Column
	lastEnd := 0
	for i := 0; i+1 < len(o.Content); i += 2 {
		k, v := o.Content[i], o.Content[i+1]
		next := end
		if i+2 < len(o.Content) {
			next = o.Content[i+2].Line - 1
		}
		eEnd := s.entryEnd(k.Line, next, col)
		lastEnd = eEnd
		ni := keyIndex(n, k.Value)
		if ni < 0 {
			if s.prefix(k) != strings.Repeat(" ", k.Column-1) {
				return false // "- key:" opens a list item: not a line of its own
			}
			s.edits = append(s.edits, edit{from: k.Line, to: eEnd})
			continue
		}
		nv := n.Content[ni+1]
		if sameNode(v, nv) {
			continue
		}
		if s.value(v, nv, eEnd) {
			continue
		}
		text, ok := encodeAt(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{n.Content[ni], nv}}, k.Column-1)
		if !ok {
			return false
		}
		s.edits = append(s.edits, edit{from: k.Line, to: eEnd, text: s.prefix(k) + strings.TrimLeft(text, " ")})
	}
	// Keys only n has go after the last entry.
	var added []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if keyIndex(o, n.Content[i].Value) < 0 {
			added = append(added, n.Content[i], n.Content[i+1])
		}
	}
	if len(added) > 0 {
		text, ok := encodeAt(&yaml.Node{Kind: yaml.MappingNode, Content: added}, col-1)
		if !ok {
			return false
		}
		s.edits = append(s.edits, edit{from: lastEnd + 1, to: lastEnd, text: text})
	}
	return true
}

// value places the change of a value in place when it is a block mapping
// or a block list of the same length; false: re-encode its entry.
func (s *splicer) value(o, n *yaml.Node, end int) bool {
	switch {
	case o.Kind == yaml.MappingNode && n.Kind == yaml.MappingNode && o.Style&yaml.FlowStyle == 0 && len(o.Content) > 0 && o.Line > 0:
		return s.mapping(o, n, end)
	case o.Kind == yaml.SequenceNode && n.Kind == yaml.SequenceNode && o.Style&yaml.FlowStyle == 0 &&
		len(o.Content) == len(n.Content) && len(o.Content) > 0:
		return s.sequence(o, n, end)
	}
	return false
}

// sequence diffs the items of two block lists of the same length.
func (s *splicer) sequence(o, n *yaml.Node, end int) bool {
	for i, it := range o.Content {
		next := end
		if i+1 < len(o.Content) {
			next = o.Content[i+1].Line - 1
		}
		if it.Column < 3 {
			return false
		}
		eEnd := s.entryEnd(it.Line, next, it.Column-2)
		if sameNode(it, n.Content[i]) {
			continue
		}
		if s.value(it, n.Content[i], eEnd) {
			continue
		}
		text, ok := encodeAt(n.Content[i], it.Column-1)
		if !ok {
			return false
		}
		s.edits = append(s.edits, edit{from: it.Line, to: eEnd, text: s.prefix(it) + strings.TrimLeft(text, " ")})
	}
	return true
}

// prefix is what precedes a node on its line: its indentation, and "- "
// for the first key of a list item.
func (s *splicer) prefix(n *yaml.Node) string {
	l := s.lines[n.Line-1]
	if n.Column-1 > len(l) {
		return ""
	}
	return l[:n.Column-1]
}

// encodeAt encodes a node as encode does, every line indented by indent
// spaces.
func encodeAt(n *yaml.Node, indent int) (string, bool) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if enc.Encode(n) != nil || enc.Close() != nil {
		return "", false
	}
	pad := strings.Repeat(" ", indent)
	lines := strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n")+"\n", "\n")
	var b strings.Builder
	for _, l := range lines {
		if l == "" {
			continue
		}
		if strings.TrimSpace(l) != "" {
			b.WriteString(pad)
		}
		b.WriteString(l)
	}
	return b.String(), true
}

// sameNode compares two trees by what they say: kinds, tags, values,
// styles and comments, not positions.
func sameNode(a, b *yaml.Node) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Style != b.Style ||
		a.LineComment != b.LineComment || a.HeadComment != b.HeadComment || a.FootComment != b.FootComment ||
		len(a.Content) != len(b.Content) || (a.Alias == nil) != (b.Alias == nil) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// cloneNode is a deep copy of a tree, positions kept (aliases point into
// the copy's own nodes only when they did in the original; others are
// shared, which sameNode compares by value).
func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = cloneNode(ch)
	}
	return &c
}
