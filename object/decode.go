package object

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kartalua/karta/internal/yamlerr"
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
	// src is the whole input, and orig the tree as decoded (copied at the
	// first ApplyToTree): YAML splices the revised entries into src
	// (splice.go).
	src  []byte
	orig *yaml.Node
}

// DecodeError is a problem in an input Decode or DecodeValue read: where
// it is (the source, the 1-based line when known, the document when the
// input has several) and what is wrong. It prints as every reader of
// karta's inputs prints a problem: `SOURCE:LINE: document N: message`
// (docs/cli.md).
type DecodeError struct {
	// Source names the input, as the caller gave it.
	Source string
	// Line is 1-based, 0 when unknown.
	Line int
	// Document is the 1-based number of the document, 0 when the problem
	// is about the input as a whole; MultiDoc is set when the input has
	// (or may have) several, and only then is the document printed.
	Document int
	MultiDoc bool
	Message  string
	err      error
}

func (e *DecodeError) Error() string {
	doc := 0
	if e.MultiDoc {
		doc = e.Document
	}
	return yamlerr.Format(e.Source, e.Line, doc, "", e.Message)
}

// Unwrap returns the YAML library's error, if any.
func (e *DecodeError) Unwrap() error { return e.err }

// inputError is a problem of the input as a whole.
func inputError(source, format string, args ...any) *DecodeError {
	return &DecodeError{Source: source, Message: fmt.Sprintf(format, args...)}
}

// checkInput refuses an input that is too large or holds bytes YAML does
// not allow, with their line.
func checkInput(data []byte, source string) error {
	if len(data) > MaxBytes {
		return inputError(source, "input is %d bytes, more than the %d MiB limit", len(data), MaxBytes>>20)
	}
	if err := checkValues(data, source); err != nil {
		return err
	}
	if msg, line, ok := yamlerr.CheckText(data); !ok {
		return &DecodeError{Source: source, Line: line, Message: msg}
	}
	return nil
}

// syntaxError is the YAML library's parse error for document doc, at its
// line in the input (yamlerr owns the line and the message).
func syntaxError(data []byte, source string, doc int, err error) error {
	e := yamlerr.Syntax(data, source, doc, err)
	return &DecodeError{Source: source, Line: e.Line, Document: doc, MultiDoc: e.MultiDoc, Message: e.Message, err: err}
}

// Decode reads every non-empty document of a YAML or JSON input. Each must
// be a map. source names the input in errors, which are *DecodeError.
func Decode(data []byte, source string) ([]*Document, error) {
	if err := checkInput(data, source); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*Document
	for {
		n, err := yamlerr.Next(dec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, syntaxError(data, source, len(docs)+1, err)
		}
		root := n
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
		at := func(line int, msg string) error {
			return &DecodeError{Source: source, Line: line, Document: idx,
				MultiDoc: idx > 1 || yamlerr.SeparatorFrom(data, root.Line+1), Message: msg}
		}
		if root.Kind != yaml.MappingNode {
			return nil, at(root.Line, "expected an object, got "+kindName(root))
		}
		v, err := new(converter).toValue(root, 0)
		if err != nil {
			var pe *posError
			if errors.As(err, &pe) {
				return nil, at(pe.line, pe.msg)
			}
			return nil, at(root.Line, err.Error())
		}
		flowNulls(root, false)
		docs = append(docs, &Document{Index: idx, Line: root.Line, Object: v.(map[string]any), node: root, src: data})
	}
	if len(docs) == 0 {
		return nil, inputError(source, "no object found (the input is empty)")
	}
	return docs, nil
}

// posError is a problem at a line of a document, found while converting
// it.
type posError struct {
	line int
	msg  string
}

func (e *posError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func errorAt(line int, format string, args ...any) error {
	return &posError{line: line, msg: fmt.Sprintf(format, args...)}
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
		return nil, errorAt(n.Line, "nesting deeper than %d levels", MaxDepth)
	}
	c.values++
	if c.aliasDepth > 0 {
		c.aliased++
	}
	if c.aliased > 100 && c.values > 1000 && float64(c.aliased)/float64(c.values) > allowedAliasRatio(c.values) {
		return nil, errorAt(n.Line, "aliases expand to too many values (%d of the first %d), as in an alias bomb; write the values out instead", c.aliased, c.values)
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
				return nil, errorAt(k.Line, "YAML merge keys (<<) are not supported")
			}
			if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
				return nil, errorAt(k.Line, "a map key must be a string")
			}
			if _, dup := m[k.Value]; dup {
				// As a Karta's loader (and sigs.k8s.io/yaml's strict
				// mode) refuses it: the last value would silently win.
				return nil, errorAt(k.Line, "duplicate key %q (first at line %d)", k.Value, lines[k.Value])
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
	return nil, errorAt(n.Line, "unsupported YAML node")
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
			return nil, errorAt(n.Line, "%v", err)
		}
		return b, nil
	case "!!int", "!!float":
		if json.Valid([]byte(n.Value)) {
			return json.Number(n.Value), nil
		}
		// YAML spellings JSON lacks (0x1F, 1_000, .inf): use their value.
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, errorAt(n.Line, "%v", err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, errorAt(n.Line, "%s is not a JSON number", n.Value)
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

// DecodeValue reads a single YAML or JSON document of any shape (a list of
// revisions, say) into Go JSON values, with number literals kept as
// json.Number as Decode keeps them. source names the input in errors,
// which are *DecodeError. An empty input is ErrEmpty (wrapped), more than
// one document an error.
func DecodeValue(data []byte, source string) (any, error) {
	if err := checkInput(data, source); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	doc, err := yamlerr.Next(dec)
	if errors.Is(err, io.EOF) {
		return nil, &DecodeError{Source: source, Message: ErrEmpty.Error(), err: ErrEmpty}
	}
	if err != nil {
		return nil, syntaxError(data, source, 1, err)
	}
	switch extra, err := yamlerr.Next(dec); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(data, source, 2, err)
	default:
		return nil, &DecodeError{Source: source, Line: yamlerr.Resolve(extra).Line, Message: "more than one document"}
	}
	if len(doc.Content) == 0 {
		return nil, &DecodeError{Source: source, Message: ErrEmpty.Error(), err: ErrEmpty}
	}
	v, err := new(converter).toValue(doc.Content[0], 0)
	var pe *posError
	if errors.As(err, &pe) {
		return nil, &DecodeError{Source: source, Line: pe.line, Message: pe.msg}
	}
	return v, err
}

// ErrEmpty is an input without a document.
var ErrEmpty = errors.New("the input is empty")
