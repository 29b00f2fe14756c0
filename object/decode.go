package object

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// MaxBytes is the largest input Decode accepts.
const MaxBytes = 64 << 20

// MaxDepth is the deepest nesting of maps and lists Decode accepts; real
// objects are far shallower, and the bound keeps hostile input from
// exhausting the stack of later recursive walks.
const MaxDepth = 200

// Document is one decoded object.
type Document struct {
	// Index is the 1-based number of the document in its input.
	Index int
	// Item is the 1-based number of the item when the document is an item
	// of a List (see Expand), 0 otherwise.
	Item int
	// Line is where the document starts.
	Line int
	// Object is the document as Go JSON values: map[string]any, []any,
	// string, bool, nil and json.Number.
	Object map[string]any
	node   *yaml.Node
}

// Decode reads every non-empty document of a YAML or JSON input. Each must
// be a map. source names the input in errors.
func Decode(data []byte, source string) ([]*Document, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%s: input is %d bytes, more than the %d MiB limit", source, len(data), MaxBytes>>20)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: input is not valid UTF-8 (byte offset %d)", source, invalidUTF8Offset(data))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*Document
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", source, len(docs)+1, err)
		}
		root := &n
		if root.Kind == yaml.DocumentNode {
			if len(root.Content) == 0 {
				continue
			}
			root = root.Content[0]
		}
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue // an empty document
		}
		idx := len(docs) + 1
		if root.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s (document %d, line %d): expected an object, got %s", source, idx, root.Line, kindName(root))
		}
		v, err := new(converter).toValue(root, 0)
		if err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", source, idx, err)
		}
		flowNulls(root, false)
		docs = append(docs, &Document{Index: idx, Line: root.Line, Object: v.(map[string]any), node: root})
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no object found (the input is empty)", source)
	}
	return docs, nil
}

// converter turns one document's node tree into Go values, counting what
// it builds: an alias is expanded in place, so a few lines of anchors
// referring to anchors (the "billion laughs") would otherwise build
// billions of values from a kilobyte of input.
type converter struct {
	// values counts the values built, aliased counts those built while
	// expanding an alias, and aliasDepth is how many aliases are being
	// expanded around the current node.
	values, aliased, aliasDepth int
}

// toValue converts a YAML node into Go JSON values, keeping number
// literals that are valid JSON as json.Number.
func (c *converter) toValue(n *yaml.Node, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("line %d: nesting deeper than %d levels", n.Line, MaxDepth)
	}
	c.values++
	if c.aliasDepth > 0 {
		c.aliased++
	}
	if c.aliased > 100 && c.values > 1000 && float64(c.aliased)/float64(c.values) > allowedAliasRatio(c.values) {
		return nil, fmt.Errorf("line %d: aliases expand to too many values (%d of the first %d), as in an alias bomb; write the values out instead", n.Line, c.aliased, c.values)
	}
	switch n.Kind {
	case yaml.AliasNode:
		c.aliasDepth++
		v, err := c.toValue(n.Alias, depth+1)
		c.aliasDepth--
		return v, err
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		var lines map[string]int // where each key was first seen
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				return nil, fmt.Errorf("line %d: YAML merge keys (<<) are not supported", k.Line)
			}
			if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
				return nil, fmt.Errorf("line %d: a map key must be a string", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				// As a Karta's loader (and sigs.k8s.io/yaml's strict
				// mode) refuses it: the last value would silently win.
				return nil, fmt.Errorf("line %d: duplicate key %q (first at line %d)", k.Line, k.Value, lines[k.Value])
			}
			val, err := c.toValue(v, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
			if lines == nil {
				lines = map[string]int{}
			}
			lines[k.Value] = k.Line
		}
		return m, nil
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			val, err := c.toValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, val)
		}
		return a, nil
	case yaml.ScalarNode:
		return scalarValue(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// allowedAliasRatio is the share of the values built that may come from
// expanding aliases: yaml.v3's own policy when it decodes into Go values
// (which Decode does not use: it walks the node tree). Small documents may
// alias freely; from 400 000 values on the share falls to 10% at 4 000 000,
// so that the expansion stays within a small multiple of the input.
func allowedAliasRatio(values int) float64 {
	switch {
	case values <= 400_000:
		return 0.99
	case values >= 4_000_000:
		return 0.10
	}
	return 0.99 - 0.89*float64(values-400_000)/3_600_000
}

// flowNulls spells the empty nulls of flow collections ({a}, [a, ]) as
// "null": yaml.v3 renders an empty null there as a quoted empty string,
// which reads back as "", not null. Block style (`a:`) renders as it was
// written. The tree is acyclic and at most MaxDepth deep here (toValue
// checked it), and aliases are not followed: each node is visited once.
func flowNulls(n *yaml.Node, flow bool) {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		flow = flow || n.Style&yaml.FlowStyle != 0
		for _, c := range n.Content {
			flowNulls(c, flow)
		}
	case yaml.ScalarNode:
		if flow && n.Tag == "!!null" && n.Value == "" {
			n.Value = "null"
		}
	}
}

func scalarValue(n *yaml.Node) (any, error) {
	switch n.Tag {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int", "!!float":
		if json.Valid([]byte(n.Value)) {
			return json.Number(n.Value), nil
		}
		// YAML spellings JSON lacks (0x1F, 1_000, .inf): use their value.
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %s is not a JSON number", n.Line, n.Value)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "!!str", "!!timestamp", "!!binary", "":
		return n.Value, nil
	default:
		return n.Value, nil
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	}
	return "something else"
}

func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// DecodeValue reads a single YAML or JSON document of any shape (a list of
// revisions, say) into Go JSON values, with number literals kept as
// json.Number as Decode keeps them. An empty input, or more than one
// document, is an error.
func DecodeValue(data []byte) (any, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("input is %d bytes, more than the %d MiB limit", len(data), MaxBytes>>20)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("input is not valid UTF-8 (byte offset %d)", invalidUTF8Offset(data))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrEmpty
		}
		return nil, fmt.Errorf("invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one document")
	}
	if len(doc.Content) == 0 {
		return nil, ErrEmpty
	}
	return new(converter).toValue(doc.Content[0], 0)
}

// ErrEmpty is an input without a document.
var ErrEmpty = errors.New("the input is empty")
