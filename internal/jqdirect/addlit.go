package jqdirect

import (
	"github.com/kartalua/karta/internal/third_party/gojq"

	"github.com/kartalua/karta/internal/jqlua"
)

// addLiteralNode is l + {k: v, …} (constant keys) or l + [f]: the literal
// on the right is merged into, or appended to, each output of l directly,
// where binNode builds the literal first and then copies it again into
// the sum. A view's `.spec.template + {spec: (…)}` and
// `containers + [sidecar]` so cost one new object or array each, not two.
// The outputs, their order and the errors are binNode's: the right side
// is evaluated first; anything but one output per pair of the object, or
// a left side that is neither null nor of the literal's type, is left to
// binNode.
type addLiteralNode struct {
	bin *binNode
	obj *objectNode // the right side, an object of constant keys; or
	arr *arrayNode  // the right side, an array construction
}

// newAddLiteral returns the node for l + r when r is such a literal, nil
// otherwise.
func newAddLiteral(op gojq.Operator, l, r dnode) dnode {
	if op != gojq.OpAdd {
		return nil
	}
	n := &addLiteralNode{bin: &binNode{op: op, l: l, r: r}}
	switch x := r.(type) {
	case *objectNode:
		if x.asRecord || len(x.pairs) == 0 {
			return nil
		}
		for _, p := range x.pairs {
			if p.keyNode != nil {
				return nil
			}
		}
		n.obj = x
	case *arrayNode:
		if x.q == nil {
			return nil
		}
		n.arr = x
	default:
		return nil
	}
	return n
}

func (n *addLiteralNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	// The right side's values: one per pair of the object, or the
	// array's elements.
	rv := c.buf()
	defer func() { c.free(rv) }()
	var ok bool
	if n.obj != nil {
		for i := range n.obj.pairs {
			vs := c.buf()
			vs, ok = n.obj.pairs[i].val.eval(c, in, vs)
			one := ok && len(vs) == 1
			if one {
				rv = append(rv, vs[0])
			}
			c.free(vs)
			if !ok {
				return out, false
			}
			if !one {
				return n.bin.eval(c, in, out)
			}
		}
		if !c.step(len(n.obj.pairs)) {
			return out, false
		}
	} else if rv, ok = n.arr.q.eval(c, in, rv); !ok || len(rv) > jqlua.OutputLimit {
		return out, false
	}
	ls := c.buf()
	defer func() { c.free(ls) }()
	if ls, ok = n.bin.l.eval(c, in, ls); !ok || !c.step(len(ls)) {
		return out, false
	}
	for _, l := range ls {
		v, ok := n.add(c, l, rv)
		if !ok {
			return out, false
		}
		out = append(out, v)
	}
	return out, true
}

// add is l + the literal of values rv.
func (n *addLiteralNode) add(c *dctx, l any, rv []any) (any, bool) {
	if n.obj != nil {
		x, isObj := l.(map[string]any)
		if l != nil && !isObj {
			return binary(c, gojq.OpAdd, l, n.object(rv))
		}
		if !c.step(len(x)+len(rv)+1) || !c.alloc(objectBytes(len(x)+len(rv))) {
			return nil, false
		}
		m := make(map[string]any, len(x)+len(rv))
		for k, e := range x {
			o, ok := outValue(e)
			if !ok {
				return nil, false
			}
			m[k] = o
		}
		for i, v := range rv {
			o, ok := outValue(v)
			if !ok {
				return nil, false
			}
			m[n.obj.pairs[i].key] = o
		}
		return m, true
	}
	x, isArr := l.([]any)
	if l != nil && !isArr {
		return binary(c, gojq.OpAdd, l, rv)
	}
	if x == nil {
		// null + [f] is a new array of f's outputs: never rv itself, a
		// buffer that is cleared once the node returns.
		x = []any{}
	}
	v, _, ok := addComposite(c, x, rv)
	return v, ok
}

// object is the right side's object of values rv, for binary's errors.
func (n *addLiteralNode) object(rv []any) map[string]any {
	m := make(map[string]any, len(rv))
	for i, v := range rv {
		m[n.obj.pairs[i].key] = v
	}
	return m
}
