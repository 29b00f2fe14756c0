package jqdirect

import "github.com/kartalua/karta/internal/third_party/gojq"

// Values that need no allocation per evaluation.

// emptyArray is the one empty array slices give, boxed once: AppWrapper
// slices the one piece of each key of a podSet's path, `.[1:]`, for the
// indexes after it, which few have. Nothing can change an empty array:
// an append to it makes a new one.
var emptyArray any = []any{}

// comparedConstant returns the literal of an array construction of
// scalar literals compared by op (==, !=, <, …), n itself otherwise.
// AppWrapper compares each podSet's path with `["template", "spec",
// "template"]` and the like: the general form built the array on every
// evaluation, two allocations each, to compare it and throw it away. A
// compared value never reaches an output, so one array made at compile
// time serves every evaluation; the outputs are the same, only the
// construction's steps and bytes are no longer charged.
func comparedConstant(op gojq.Operator, n dnode) dnode {
	switch op {
	case gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpLe, gojq.OpGt, gojq.OpGe:
	default:
		return n
	}
	a, ok := n.(*arrayNode)
	if !ok {
		return n
	}
	var elems []any
	if a.q != nil && !scalarLiterals(a.q, &elems) {
		return n
	}
	if elems == nil {
		elems = []any{}
	}
	return &literalNode{v: elems}
}

// scalarLiterals appends the values of a comma of scalar literals to
// elems, converted as arrayNode converts its elements; false when q is
// anything else.
func scalarLiterals(q dnode, elems *[]any) bool {
	switch x := q.(type) {
	case *commaNode:
		return scalarLiterals(x.l, elems) && scalarLiterals(x.r, elems)
	case *literalNode:
		switch x.v.(type) {
		case map[string]any, []any:
			return false
		}
		v, ok := outValue(x.v)
		if !ok {
			return false
		}
		*elems = append(*elems, v)
		return true
	}
	return false
}
