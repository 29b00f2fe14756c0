package object

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// isList reports whether obj is a list of objects: kind "List" or any
// "<Kind>List", with an items array, as kubectl get -o yaml prints.
func isList(obj map[string]any) bool {
	kind, _ := obj["kind"].(string)
	_, hasItems := obj["items"].([]any)
	return hasItems && strings.HasSuffix(kind, "List")
}

// Items returns the objects of the documents, expanding a List (see isList)
// into its items, in order.
func Items(docs []*Document) []map[string]any {
	var out []map[string]any
	for _, d := range Expand(docs) {
		out = append(out, d.Object)
	}
	return out
}

// Expand returns the documents with each List replaced by one Document per
// item, in order. An item's Document has the List's Index, its own Item
// (1-based) and Line, and renders (YAML, JSON, ApplyPatch) from its own
// part of the input, so a revised item keeps its layout too. Items that are
// not objects are left out, as kubectl does not print them.
func Expand(docs []*Document) []*Document {
	var out []*Document
	for _, d := range docs {
		if !isList(d.Object) {
			out = append(out, d)
			continue
		}
		items := d.Object["items"].([]any)
		nodes := itemNodes(d.node)
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			item := &Document{Index: d.Index, Item: i + 1, Line: d.Line, Object: m}
			var n *yaml.Node
			if i < len(nodes) {
				n = nodes[i]
				if n.Kind == yaml.AliasNode {
					n = n.Alias
				}
			}
			if n != nil && n.Kind == yaml.MappingNode {
				item.node, item.Line = n, n.Line
			} else if vn, err := valueNode(m); err == nil {
				item.node = vn // not expected: Decode built m from a mapping
			}
			out = append(out, item)
		}
	}
	return out
}

// itemNodes returns the element nodes of a List's items sequence.
func itemNodes(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "items" && n.Content[i+1].Kind == yaml.SequenceNode {
			return n.Content[i+1].Content
		}
	}
	return nil
}

// DecodeObjects reads every object of a YAML or JSON input as Kubernetes
// unstructured objects, in one call: each document, and each item of a
// List (what kubectl get -o yaml prints), in order. It is Decode followed
// by Items: number literals are kept (json.Number), duplicate keys are
// refused, and errors are *DecodeError, naming the source and the line.
func DecodeObjects(data []byte, source string) ([]*unstructured.Unstructured, error) {
	docs, err := Decode(data, source)
	if err != nil {
		return nil, err
	}
	items := Items(docs)
	out := make([]*unstructured.Unstructured, len(items))
	for i, it := range items {
		out[i] = &unstructured.Unstructured{Object: it}
	}
	return out, nil
}
