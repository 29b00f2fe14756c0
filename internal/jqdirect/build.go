package jqdirect

import (
	"math"
	"unicode/utf8"

	"github.com/kartalua/karta/internal/jqlua"
)

// Object construction, computed indexes and slices. gojq evaluates the
// generators of these in a fixed order (compiler.go): an object's pairs
// first to last, each key before its value, the last varying fastest; an
// index .[k] and a slice .[s:e] as calls whose last argument is outermost
// (the key; the start, then the end), the indexed term innermost. Every
// generator runs on the term's input.

// objectPair is one key: value of an object construction; keyNode nil
// means the constant key.
type objectPair struct {
	key string
	// keyAny is key as an interface value, made once at compile time:
	// each conversion of the string to one allocates.
	keyAny  any
	keyNode dnode
	val     dnode
}

// objectNode is {k: v, ...}: an object per combination of the pairs'
// outputs, values converted as the Lua path's table holds them.
type objectNode struct {
	pairs []objectPair
	// asRecord: the keys are constants and the object only flows into an
	// expression that reads constant keys of it (keyedOnly), so a record
	// stands in for the map.
	asRecord bool
	keys     []string // the constant keys, for records
}

func (n *objectNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	sel := c.buf()
	for range 2 * len(n.pairs) {
		sel = append(sel, nil)
	}
	out, ok := n.build(c, in, 0, sel, out)
	c.free(sel)
	return out, ok
}

// record is an object under construction's stand-in where nothing but
// constant keys of it is read (objectNode.asRecord): its values by the
// index of their key, the last of equal keys winning as in gojq.
type record struct {
	keys []string
	vals []any
}

func (r *record) get(k string) any {
	for i := len(r.keys) - 1; i >= 0; i-- {
		if r.keys[i] == k {
			return r.vals[i]
		}
	}
	return nil
}

// keyedOnly reports that n reads its input only through constant keys
// (.k… paths), so that the input may be a record: it never reaches an
// output, an operator or a builtin whole.
func keyedOnly(n dnode) bool {
	switch x := n.(type) {
	case *literalNode, emptyNode, emptyObjectNode, declineNode, varNode:
		return true
	case *pathNode:
		if x.base != nil {
			return keyedOnly(x.base)
		}
		return len(x.steps) > 0 && !x.steps[0].iter && !x.steps[0].isIndex
	case *pipeNode:
		if sel, ok := x.l.(*selectNode); ok {
			// select passes its input on: what reads it next must read
			// only keys too (PodCliqueSet's `{n: …, g: …} | select(…) |
			// .g.replicas`).
			return keyedOnly(sel.f) && keyedOnly(x.r)
		}
		return keyedOnly(x.l)
	case *subOneNode:
		return keyedOnly(x.l) && keyedOnly(x.x)
	case *arrayIndexNode:
		return keyedOnly(x.q)
	case *interpNode:
		for _, p := range x.parts {
			if !keyedOnly(p) {
				return false
			}
		}
		return true
	case *commaNode:
		return keyedOnly(x.l) && keyedOnly(x.r)
	case *altNode:
		return keyedOnly(x.l) && keyedOnly(x.r)
	case *binNode:
		return keyedOnly(x.l) && keyedOnly(x.r)
	case *logicNode:
		return keyedOnly(x.l) && keyedOnly(x.r)
	case *ifNode:
		if x.els == nil || !keyedOnly(x.els) {
			return false
		}
		for i := range x.conds {
			if !keyedOnly(x.conds[i]) || !keyedOnly(x.thens[i]) {
				return false
			}
		}
		return true
	case *objectNode:
		for _, p := range x.pairs {
			if p.keyNode != nil && !keyedOnly(p.keyNode) || !keyedOnly(p.val) {
				return false
			}
		}
		return true
	case *arrayNode:
		return x.q == nil || keyedOnly(x.q)
	case *firstNode:
		return keyedOnly(x.f)
	case *errorNode:
		return keyedOnly(x.f)
	case *negNode:
		return keyedOnly(x.x)
	case *bindNode:
		// `E as $x | body` gives body the same input: AppWrapper's
		// following binds `.s as $s | .c.template | …`.
		return keyedOnly(x.src) && keyedOnly(x.body)
	case *indexNode:
		return x.base != nil && keyedOnly(x.base) && keyedOnly(x.key)
	case *sliceNode:
		return x.base != nil && keyedOnly(x.base) &&
			(x.start == nil || keyedOnly(x.start)) && (x.end == nil || keyedOnly(x.end))
	}
	// The identity, select, if without else, builtins of the input…
	return false
}

// recordInto makes l, when it is an object construction of constant keys
// piped into r, build records (see record), and reports whether it made
// any. Through the nodes whose outputs are their branches' (if, //, the
// comma, a pipe's right side), every such construction among l's outputs
// does: Spark's memory strings are parsed by an if of ten branches that
// each build {n: …, m: …}, read as .n and .m (a map each before). A
// branch that builds no object gives r what it gave before; r reads only
// keys, of a record or of anything else.
func recordInto(l, r dnode) bool {
	// The walk of r only where l has a construction to change (a
	// Karta's pipes are many; keyedOnly walks all of r).
	if !recordsOf(l, false) || !keyedOnly(r) {
		return false
	}
	return recordsOf(l, true)
}

// recordsOf reports whether an object construction of constant keys is
// among n's outputs and, with apply, makes every such one build records;
// see recordInto.
func recordsOf(n dnode, apply bool) bool {
	switch x := n.(type) {
	case *objectNode:
		if !x.constKeys() {
			return false
		}
		if apply {
			keys := make([]string, len(x.pairs))
			for i, p := range x.pairs {
				keys[i] = p.key
			}
			x.asRecord, x.keys = true, keys
		}
		return true
	case *ifNode:
		found := x.els != nil && recordsOf(x.els, apply)
		for _, t := range x.thens {
			found = recordsOf(t, apply) || found
		}
		return found
	case *altNode:
		l := recordsOf(x.l, apply)
		return recordsOf(x.r, apply) || l
	case *commaNode:
		l := recordsOf(x.l, apply)
		return recordsOf(x.r, apply) || l
	case *pipeNode:
		return recordsOf(x.r, apply)
	}
	return false
}

// build chooses the key and value of pair i for each of their outputs,
// sel holding the choices of the pairs before it.
func (n *objectNode) build(c *dctx, in any, i int, sel, out []any) ([]any, bool) {
	if i == len(n.pairs) {
		if !c.step(len(n.pairs)) || len(out) >= jqlua.OutputLimit || !c.alloc(objectBytes(len(n.pairs))) {
			return out, false
		}
		if n.asRecord {
			r := newRecord(n.keys)
			for j := range r.vals {
				r.vals[j] = sel[2*j+1]
			}
			return append(out, r), true
		}
		m := make(map[string]any, len(n.pairs))
		for j := 0; j < len(sel); j += 2 {
			k, ok := sel[j].(string)
			if !ok {
				return out, false
			}
			if m[k], ok = outValue(sel[j+1]); !ok {
				return out, false
			}
		}
		return append(out, m), true
	}
	p := &n.pairs[i]
	ks := c.buf()
	defer func() { c.free(ks) }()
	ok := true
	if p.keyNode == nil {
		ks = append(ks, p.keyAny)
	} else if ks, ok = p.keyNode.eval(c, in, ks); !ok {
		return out, false
	}
	for _, k := range ks {
		vs := c.buf()
		vs, ok = p.val.eval(c, in, vs)
		if ok && c.step(len(vs)) {
			for _, v := range vs {
				sel[2*i], sel[2*i+1] = k, v
				if out, ok = n.build(c, in, i+1, sel, out); !ok {
					break
				}
			}
		} else {
			ok = false
		}
		c.free(vs)
		if !ok {
			return out, false
		}
	}
	return out, true
}

// indexNode is base[key] for a computed key: for each output of key (on
// the input), each output of base (nil: the input) indexed by it.
type indexNode struct{ base, key dnode }

func (n *indexNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	ks := c.buf()
	defer func() { c.free(ks) }()
	ks, ok := n.key.eval(c, in, ks)
	if !ok {
		return out, false
	}
	if len(ks) == 0 {
		return out, true
	}
	bs := c.buf()
	defer func() { c.free(bs) }()
	if n.base == nil {
		bs = append(bs, in)
	} else if bs, ok = n.base.eval(c, in, bs); !ok {
		return out, false
	}
	if !c.step(len(ks) * len(bs)) {
		return out, false
	}
	for _, k := range ks {
		s, ok := keyStep(k)
		if !ok {
			return out, false
		}
		for _, b := range bs {
			v, ok := index(b, &s)
			if !ok {
				return out, false
			}
			out = append(out, v)
		}
	}
	return out, true
}

// keyStep is the step of a computed key: .[k] of a string, an integer
// index of a number, ok false (a decline) for any other key.
func keyStep(k any) (pathStep, bool) {
	if x, ok := k.(string); ok {
		return pathStep{key: x}, true
	}
	i, ok := intIndex(k)
	return pathStep{isIndex: true, index: i}, ok
}

// intIndex is a number used as an index or a slice bound when it is an
// integer small enough for any length: gojq floors and ceils other
// numbers, which declines here.
func intIndex(k any) (int, bool) {
	f, ok := dnumber(k)
	if !ok || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// sliceNode is base[start:end] (a nil start or end is absent).
type sliceNode struct{ base, start, end dnode }

func (n *sliceNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	ss := c.buf()
	defer func() { c.free(ss) }()
	ss, ok := evalOrNull(c, n.start, in, ss)
	if !ok {
		return out, false
	}
	for _, s := range ss {
		es := c.buf()
		es, ok = evalOrNull(c, n.end, in, es)
		if ok {
			for _, e := range es {
				bs := c.buf()
				if n.base == nil {
					bs = append(bs, in)
				} else {
					bs, ok = n.base.eval(c, in, bs)
				}
				for _, b := range bs {
					if !ok {
						break
					}
					var v any
					if v, ok = slice(c, b, s, e); ok {
						out = append(out, v)
					}
				}
				c.free(bs)
				if !ok {
					break
				}
			}
		}
		c.free(es)
		if !ok {
			return out, false
		}
	}
	return out, true
}

// evalOrNull is the outputs of n, or null for an absent bound.
func evalOrNull(c *dctx, n dnode, in any, out []any) ([]any, bool) {
	if n == nil {
		return append(out, nil), true
	}
	return n.eval(c, in, out)
}

// slice is gojq's slice of an array or a string (by code point), null of
// null; bounds count from the end when negative and are clamped.
func slice(c *dctx, v, s, e any) (any, bool) {
	var length int
	switch x := v.(type) {
	case nil:
		return nil, true
	case []any:
		length = len(x)
	case string:
		if !utf8.ValidString(x) {
			return nil, false
		}
		length = utf8.RuneCountInString(x)
	default:
		return nil, false
	}
	start, end := 0, length
	if s != nil {
		i, ok := intIndex(s)
		if !ok {
			return nil, false
		}
		start = clampIndex(i, 0, length)
	}
	if e != nil {
		i, ok := intIndex(e)
		if !ok {
			return nil, false
		}
		end = clampIndex(i, start, length)
	}
	if !c.step(end-start+1) || !c.alloc(arrayBytes(end-start)) {
		return nil, false
	}
	switch x := v.(type) {
	case []any:
		if end == start {
			return emptyArray, true
		}
		// A new array, as the Lua path builds one.
		arr := make([]any, end-start)
		for i, y := range x[start:end] {
			var ok bool
			if arr[i], ok = outValue(y); !ok {
				return nil, false
			}
		}
		return arr, true
	case string:
		if start == 0 && end == length {
			return v, true // the whole string, boxed already
		}
		return boxString(x[runeOffset(x, start):runeOffset(x, end)]), true
	}
	return nil, false
}

// clampIndex is gojq's: i from the end when negative, within [lo, hi].
func clampIndex(i, lo, hi int) int {
	if i < 0 {
		i += hi
	}
	return min(max(i, lo), hi)
}

// runeOffset is the byte offset of code point n of s (len(s) past its
// end).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}
