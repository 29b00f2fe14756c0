package kartatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	yaml "go.yaml.in/yaml/v3"
)

// updater rewrites the inline expectations of a test file in place, on its
// YAML node tree, so that comments and the layout of everything else stay.
type updater struct {
	file    string
	doc     yaml.Node
	changed bool
	err     error
}

func newUpdater(file string) (*updater, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	u := &updater{file: file}
	if err := yaml.Unmarshal(data, &u.doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return u, nil
}

// caseNode is the mapping of tests[i].
func (u *updater) caseNode(i int) *yaml.Node {
	if len(u.doc.Content) == 0 {
		return nil
	}
	tests := mapValue(u.doc.Content[0], "tests")
	if tests == nil || tests.Kind != yaml.SequenceNode || i >= len(tests.Content) {
		return nil
	}
	return tests.Content[i]
}

// set writes tests[i].<check>.<field> = value.
func (u *updater) set(i int, check, field string, value any) {
	c := u.caseNode(i)
	if c == nil {
		return
	}
	m := mapValue(c, check)
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	n, err := valueNode(value)
	if err != nil {
		u.err = err
		return
	}
	setKey(m, field, n)
	u.changed = true
}

// addCase gives a case that states nothing the checks karta test --update
// fills in: the status (status and matched) and the pod count.
func (u *updater) addCase(i int) {
	c := u.caseNode(i)
	if c == nil || c.Kind != yaml.MappingNode {
		return
	}
	status, _ := valueNode(StatusCheck{Status: "?", Matched: []string{}})
	pods, _ := valueNode(PodsCheck{Count: new(int)})
	setKey(c, "status", status)
	setKey(c, "pods", pods)
	u.changed = true
}

func (u *updater) write() error {
	if u.err != nil {
		return u.err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.CompactSeqIndent() // "- " at the key's indentation, as test files are written
	if err := enc.Encode(&u.doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return os.WriteFile(u.file, buf.Bytes(), 0o644)
}

// valueNode encodes a value through JSON (so that the struct's json names
// are the keys, in the struct's order), sequences and small mappings in
// flow style as a test file writes them.
func valueNode(v any) (*yaml.Node, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	n := doc.Content[0]
	plain(n)
	flow(n)
	return n, nil
}

// plain drops the JSON text's styles (quoted strings, flow collections):
// the encoder quotes what needs quoting.
func plain(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		plain(c)
	}
}

// flow sets flow style on sequences and on the mappings inside them.
func flow(n *yaml.Node) {
	switch n.Kind {
	case yaml.SequenceNode:
		n.Style = yaml.FlowStyle
		for _, c := range n.Content {
			if c.Kind == yaml.MappingNode {
				n.Style = 0 // one item per line, each in flow
				c.Style = yaml.FlowStyle
			}
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			flow(n.Content[i])
		}
	}
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}
