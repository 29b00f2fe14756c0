package jqdirect

import (
	"reflect"
	"strings"
)

// splitIndexNode is split(SEP) | .[K] for a constant string SEP and a
// constant integer K: the K-th piece (from the end when negative), null
// past either end, without the array of every piece. Argo Workflows pods
// name their template in the ARGO_TEMPLATE variable, a JSON object the
// Workflow Karta reads with `ltrimstr("{\"name\":\"") | split("\"") |
// .[0]`: the general form boxed every piece of that JSON, eighty
// allocations of a PlacePod's hundred, to keep the first. The outputs,
// the declines and the steps and bytes charged are the general form's —
// split/1's charges for the array it would build, the pipe's step — so
// budgets end the same runs (TestSplitIndexAgreesWithGeneral).
type splitIndexNode struct {
	sep string
	k   int
}

// newSplitIndex returns the node of l | r when l is split of a string
// literal and r a constant integer index of its input, nil otherwise.
func newSplitIndex(l, r dnode) dnode {
	if unfused {
		return nil
	}
	f, ok := l.(*func1Node)
	if !ok || !sameFunc(f.fn, fnSplit) {
		return nil
	}
	lit, ok := f.arg.(*literalNode)
	if !ok {
		return nil
	}
	sep, ok := lit.v.(string)
	if !ok {
		return nil
	}
	p, ok := r.(*pathNode)
	if !ok || p.base != nil || len(p.steps) != 1 || !p.steps[0].isIndex || p.steps[0].iter {
		return nil
	}
	return &splitIndexNode{sep: sep, k: p.steps[0].index}
}

// unfused makes Compile keep the general form of what this file and
// array_fusions.go fuse, so that a test can hold the two forms equal.
var unfused bool

func (n *splitIndexNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	return evalOne(c, n, in, out)
}

func (n *splitIndexNode) eval1(c *dctx, in any) (any, bool, bool) {
	// func1Node: the separator's one output.
	if !c.step(1) {
		return nil, false, false
	}
	s, ok := in.(string)
	if !ok || !c.step(chargeString(len(s))) {
		return nil, false, false
	}
	var piece string
	found := false
	switch {
	case s == "":
		// split gives [] without charging for it: every index is null.
	case n.sep == "":
		parts := strings.Split(s, "")
		if !c.step(len(parts)) || !c.alloc(arrayBytes(len(parts))) {
			return nil, false, false
		}
		if i := n.at(len(parts)); i >= 0 {
			piece, found = parts[i], true
		}
	default:
		count := strings.Count(s, n.sep) + 1
		if !c.step(count) || !c.alloc(arrayBytes(count)) {
			return nil, false, false
		}
		if count == 1 {
			if n.at(1) < 0 {
				break
			}
			// The one piece is the input: no new string.
			return c.pipeStep(in)
		}
		if i := n.at(count); i >= 0 {
			piece, found = nthPiece(s, n.sep, i), true
		}
	}
	// The pipe's step for split's one output, then the index.
	if !c.step(1) {
		return nil, false, false
	}
	if !found {
		return nil, true, true
	}
	return piece, true, true
}

// pipeStep charges the pipe's step for split's output and gives v.
func (c *dctx) pipeStep(v any) (any, bool, bool) {
	if !c.step(1) {
		return nil, false, false
	}
	return v, true, true
}

// at is the piece K names among count, -1 past either end.
func (n *splitIndexNode) at(count int) int {
	i := n.k
	if i < 0 {
		i += count
	}
	if i < 0 || i >= count {
		return -1
	}
	return i
}

// nthPiece is strings.Split(s, sep)[i] for a non-empty sep and an i
// within the pieces.
func nthPiece(s, sep string, i int) string {
	for range i {
		s = s[strings.Index(s, sep)+len(sep):]
	}
	if j := strings.Index(s, sep); j >= 0 {
		return s[:j]
	}
	return s
}

// sameFunc reports whether two builtins' functions are the same function
// (Go compares functions only with nil).
func sameFunc(a, b any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }

// evalOne is eval of a node that gives at most one output: its eval1's
// output, if any.
func evalOne(c *dctx, n oner, in any, out []any) ([]any, bool) {
	v, has, ok := n.eval1(c, in)
	if ok && has {
		out = append(out, v)
	}
	return out, ok
}
