package object

import (
	"bytes"
	"encoding/json"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// YAML renders the document's tree: untouched parts keep their key order,
// spelling and comments and, in a document revised with ApplyToTree, the
// bytes of every line no revision touched (splice.go).
func (d *Document) YAML() ([]byte, error) {
	if out, ok := d.spliced(); ok {
		return out, nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	// Keep "- item" at its key's indentation, as kubectl and most
	// hand-written manifests do, so untouched lists keep their layout.
	enc.CompactSeqIndent()
	if err := enc.Encode(d.node); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// JSON renders the document's tree as indented JSON in the tree's key
// order (encoding/json would sort the keys of a map).
func (d *Document) JSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, d.node, ""); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node, indent string) error {
	n = deref(n)
	inner := indent + "  "
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			buf.WriteString("{}")
			return nil
		}
		buf.WriteString("{\n")
		for i := 0; i+1 < len(n.Content); i += 2 {
			buf.WriteString(inner)
			if err := writeScalar(buf, n.Content[i].Value); err != nil {
				return err
			}
			buf.WriteString(": ")
			if err := writeJSON(buf, n.Content[i+1], inner); err != nil {
				return err
			}
			if i+2 < len(n.Content) {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(indent + "}")
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			buf.WriteString("[]")
			return nil
		}
		buf.WriteString("[\n")
		for i, c := range n.Content {
			buf.WriteString(inner)
			if err := writeJSON(buf, c, inner); err != nil {
				return err
			}
			if i+1 < len(n.Content) {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(indent + "]")
	case yaml.ScalarNode:
		v, err := scalarValue(n)
		if err != nil {
			return err
		}
		if err := writeScalar(buf, v); err != nil {
			return err
		}
	default:
		return fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
	return nil
}

// writeScalar writes a JSON scalar without escaping <, > and & (which
// json.Marshal does for HTML's sake; this output is not HTML).
func writeScalar(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}
