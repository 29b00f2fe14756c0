package karta

import (
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// This file checks a parsed document before it is decoded: how deep it
// nests, and that every key and scalar can become JSON. Found here, the
// problems keep their field path and line; found later by the YAML or JSON
// library, they would lose one or both.

// yamlMaxDepth is the nesting the YAML library itself refuses to parse
// past ("exceeded max depth of 10000").
const yamlMaxDepth = 10000

// maxProblemsPerDocument caps the problems reported for one document, so a
// large broken file gives a readable answer instead of a million lines.
const maxProblemsPerDocument = 50

// depthChecker measures nesting, aliases included: an alias nests its
// anchor's content where the alias stands, so a shallow-looking document
// can expand into a deep one.
type depthChecker struct {
	max int
	// height memoizes the height of anchored nodes, the only ones aliases
	// reach, so that an alias bomb costs one visit per anchor.
	height map[*yaml.Node]int
	// active holds the anchored nodes being measured, to catch an alias
	// used inside its own anchor.
	active map[*yaml.Node]bool
	err    *LoadError
}

// checkDepth reports a document that nests more than max levels of maps
// and lists, or that contains an alias inside its own anchor. Its
// recursion stops at max+1 levels, so it is safe on any tree the YAML
// library returns.
func checkDepth(root *yaml.Node, max int) *LoadError {
	c := &depthChecker{max: max, height: map[*yaml.Node]int{}, active: map[*yaml.Node]bool{}}
	c.visit(root, 1)
	return c.err
}

// visit returns the height of n (0 for a scalar, 1 for a flat map or list)
// when n starts at the given level.
func (c *depthChecker) visit(n *yaml.Node, level int) int {
	if c.err != nil || n == nil {
		return 0
	}
	switch n.Kind {
	case yaml.AliasNode:
		t := n.Alias
		if t == nil {
			return 0
		}
		if c.active[t] {
			c.err = &LoadError{Line: n.Line, Message: fmt.Sprintf(
				"the alias *%s is used inside its own anchor &%s, which would make the document infinitely deep; remove the alias", n.Value, t.Anchor)}
			return 0
		}
		h, ok := c.height[t]
		if !ok {
			return c.visit(t, level)
		}
		if level-1+h > c.max {
			c.err = depthError(c.max, n.Line)
		}
		return h
	case yaml.MappingNode, yaml.SequenceNode:
		if level > c.max {
			c.err = depthError(c.max, n.Line)
			return 0
		}
		if n.Anchor != "" {
			c.active[n] = true
		}
		h := 0
		for _, child := range n.Content {
			h = max(h, c.visit(child, level+1))
		}
		h++
		if n.Anchor != "" {
			delete(c.active, n)
			if c.err == nil {
				c.height[n] = h
			}
		}
		return h
	case yaml.DocumentNode:
		for _, child := range n.Content {
			c.visit(child, level)
		}
	}
	return 0
}

func depthError(max, line int) *LoadError {
	return &LoadError{Line: line, Message: fmt.Sprintf(
		"the document nests maps and lists more than %d levels deep; a Karta needs far fewer, so check the indentation and brackets", max)}
}

// nodeChecker walks a document's tree (aliases are not followed: their
// anchors are checked where they are defined) and collects problems.
type nodeChecker struct {
	errs []*LoadError
}

// checkNodes reports keys that are not strings, keys given twice, and
// scalars that have no JSON form. It also turns timestamps into strings,
// so that a date keeps its spelling instead of becoming a Go time. The
// top-level status is skipped: Load ignores it.
func checkNodes(root *yaml.Node) []*LoadError {
	c := &nodeChecker{}
	c.walk(root, nil, true)
	return c.errs
}

func (c *nodeChecker) add(path fieldPath, line int, format string, args ...any) {
	if len(c.errs) == maxProblemsPerDocument {
		c.errs = append(c.errs, &LoadError{Line: line, Message: fmt.Sprintf(
			"more problems follow; fix the %d above first", maxProblemsPerDocument)})
	}
	if len(c.errs) > maxProblemsPerDocument {
		return
	}
	c.errs = append(c.errs, &LoadError{Field: path.String(), Line: line, Message: fmt.Sprintf(format, args...)})
}

func (c *nodeChecker) walk(n *yaml.Node, path fieldPath, top bool) {
	switch n.Kind {
	case yaml.MappingNode:
		c.mapping(n, path, top)
	case yaml.SequenceNode:
		for i, child := range n.Content {
			c.walk(child, path.at(i), false)
		}
	case yaml.ScalarNode:
		c.scalar(n, path)
	}
}

func (c *nodeChecker) mapping(n *yaml.Node, path fieldPath, top bool) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			// The merged maps are checked where they are written; the YAML
			// library checks that the value is a map or a list of maps.
			c.walk(v, path, false)
			continue
		}
		rk := resolve(k)
		if rk == nil {
			continue
		}
		if rk.Kind != yaml.ScalarNode {
			c.add(path, k.Line, "a key must be a string, not %s", kindName(rk))
			continue
		}
		switch rk.ShortTag() {
		case "!!str":
		case "!!timestamp":
			// A date as a key is text to JSON, as it is in values.
			rk.Tag = "!!str"
		default:
			if rk.Value == "" {
				c.add(path, k.Line, "a key is empty (null); write a string key")
			} else {
				c.add(path, k.Line, "the key %s is %s, not a string; quote it: %s", spell(rk.Value), kindName(rk), strconv.Quote(rk.Value))
			}
			continue
		}
		if !utf8.ValidString(rk.Value) {
			c.add(path, k.Line, "a key is not valid UTF-8 text; check its \\x and \\u escapes")
			continue
		}
		field := path.child(rk.Value)
		if first, dup := seen[rk.Value]; dup {
			c.add(field, k.Line, "%q is given twice (first at line %d); keep one", rk.Value, first)
			continue
		}
		seen[rk.Value] = k.Line
		if top && rk.Value == "status" {
			continue
		}
		c.walk(v, field, false)
	}
}

func (c *nodeChecker) scalar(n *yaml.Node, path fieldPath) {
	switch n.ShortTag() {
	case "!!timestamp":
		// JSON has no timestamps; keep the text as written.
		n.Tag = "!!str"
	case "!!binary":
		c.add(path, n.Line, "binary (!!binary) values are not supported; write the text itself")
	case "!!float":
		var f float64
		if err := n.Decode(&f); err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
			c.add(path, n.Line, "%s is not a number JSON can hold; quote it if it is text: %s", spell(n.Value), strconv.Quote(n.Value))
		}
	case "!!str":
		if !utf8.ValidString(n.Value) {
			c.add(path, n.Line, "the text is not valid UTF-8; check its \\x and \\u escapes")
		}
	}
}

// spell shows a value as written when that is unambiguous in a message,
// quoted otherwise.
func spell(v string) string {
	for _, r := range v {
		if r <= ' ' || r == '"' || r == 0x7f || !unicode.IsPrint(r) {
			return strconv.Quote(v)
		}
	}
	if v == "" {
		return `""`
	}
	return v
}
