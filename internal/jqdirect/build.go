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
	key     string
	keyNode dnode
	val     dnode
}

// objectNode is {k: v, ...}: an object per combination of the pairs'
// outputs, values converted as the Lua path's table holds them.
type objectNode struct{ pairs []objectPair }

func (n *objectNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	sel := make([]any, 2*len(n.pairs))
	return n.build(c, in, 0, sel, out)
}

// build chooses the key and value of pair i for each of their outputs,
// sel holding the choices of the pairs before it.
func (n *objectNode) build(c *dctx, in any, i int, sel, out []any) ([]any, bool) {
	if i == len(n.pairs) {
		if !c.step(len(n.pairs)) || len(out) >= jqlua.OutputLimit {
			return out, false
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
		ks = append(ks, p.key)
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
		var s pathStep
		switch x := k.(type) {
		case string:
			s.key = x
		default:
			i, ok := intIndex(k)
			if !ok {
				return out, false
			}
			s.isIndex, s.index = true, i
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
	if !c.step(end - start + 1) {
		return nil, false
	}
	switch x := v.(type) {
	case []any:
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
		return x[runeOffset(x, start):runeOffset(x, end)], true
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
