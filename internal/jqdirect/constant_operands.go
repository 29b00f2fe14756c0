package jqdirect

import "github.com/kartalua/karta/internal/third_party/gojq"

// Values that need no allocation per evaluation, or fewer.

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

// smallRecord is a record of at most four keys with its values inline:
// one allocation instead of the record's and its values' (Volcano's
// `{t: …} | {t: .t, i: …}`, AppWrapper's staged records).
type smallRecord struct {
	record
	room [4]any
}

// newRecord is an empty record of keys' values.
func newRecord(keys []string) *record {
	if len(keys) <= 4 {
		r := &smallRecord{}
		r.keys, r.vals = keys, r.room[:len(keys):len(keys)]
		return &r.record
	}
	return &record{keys: keys, vals: make([]any, len(keys))}
}

// recordPrefix makes a shared prefix that ends in an object construction
// of constant keys build records when the rest of its program reads only
// keys of them (recordInto), and returns what tells its outputs apart in
// the prefix's key: a program whose rest needs maps must not share
// records, so it shares with the programs that need maps only.
// AppWrapper's instance ids, templates and replicas share `… | {c: …, n:
// …, p: …, s: …}` per podSet, which each then reads by key.
func recordPrefix(pre, rest dnode) string {
	last := pre
	for {
		p, ok := last.(*pipeNode)
		if !ok {
			break
		}
		last = p.r
	}
	if recordInto(last, rest) {
		return "\x00record"
	}
	return ""
}
