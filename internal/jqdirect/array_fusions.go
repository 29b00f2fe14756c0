package jqdirect

import (
	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Arrays built only to be read once. PodCliqueSet finds a clique's scaling
// group with jq's membership idiom, `[{n: …, g: …} | select((.g.cliqueNames
// - [.n] | length) < (.g.cliqueNames | length)) | .g.replicas // 1][0]`,
// for each clique and scale path: the general form built [.n], the
// difference and the outer array — six allocations per clique — to read a
// count and an element. These nodes read them without building them;
// their outputs, declines, steps and bytes are the general form's
// (TestFusionsAgreeWithGeneral, TestAgreesWithGojq).

// arrayIndexNode is [q][k] (and [q] | .[k]) for a constant integer k: q's
// outputs converted as arrayNode converts them, the k-th (from the end
// when negative) or null past either end.
type arrayIndexNode struct {
	q dnode
	k int
	// pipe: written [q] | .[k], whose pipe charges a step for the array.
	pipe bool
}

// newArrayIndex returns the node of base followed by steps when base is
// an array construction and steps begin with a constant index, with the
// steps after it; nil otherwise.
func newArrayIndex(base dnode, steps []pathStep) (dnode, []pathStep) {
	a, ok := base.(*arrayNode)
	if unfused || !ok || a.q == nil || len(steps) == 0 || !steps[0].isIndex || steps[0].iter {
		return nil, steps
	}
	return &arrayIndexNode{q: a.q, k: steps[0].index}, steps[1:]
}

// arrayIndexInto is newArrayIndex for l | r, r a constant index of its
// input.
func arrayIndexInto(l, r dnode) dnode {
	p, ok := r.(*pathNode)
	if !ok || p.base != nil || len(p.steps) != 1 {
		return nil
	}
	n, rest := newArrayIndex(l, p.steps)
	if n == nil || len(rest) > 0 {
		return nil
	}
	n.(*arrayIndexNode).pipe = true
	return n
}

func (n *arrayIndexNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	v, _, ok := n.eval1(c, in)
	if !ok {
		return out, false
	}
	return append(out, v), true
}

func (n *arrayIndexNode) eval1(c *dctx, in any) (any, bool, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.q.eval(c, in, tmp)
	if !ok || len(tmp) > jqlua.OutputLimit || !c.alloc(arrayBytes(len(tmp))) {
		return nil, false, false
	}
	at := n.k
	if at < 0 {
		at += len(tmp)
	}
	var v any
	for i, x := range tmp {
		o, ok := outValue(x)
		if !ok {
			return nil, false, false
		}
		if i == at {
			v = o
		}
	}
	if n.pipe && !c.step(1) {
		return nil, false, false
	}
	return v, true, true
}

// subOneNode is l - [x] for single l and x: l without the elements equal
// to x, without building [x]; count: the count of that array (l - [x] |
// length), without building it either.
type subOneNode struct {
	l, x  dnode
	count bool
}

// newSubOne returns the node of l - r when r is an array of one single
// query and l is single, nil otherwise.
func newSubOne(op gojq.Operator, l, r dnode) dnode {
	a, ok := r.(*arrayNode)
	if unfused || op != gojq.OpSub || !ok || a.q == nil || !isSingle(a.q) || !isSingle(l) {
		return nil
	}
	return &subOneNode{l: l, x: a.q}
}

// subOneCount returns l | length as a counting subOneNode when l is a
// subOneNode, nil otherwise.
func subOneCount(l, r dnode) dnode {
	s, ok := l.(*subOneNode)
	f, isFunc := r.(funcNode)
	if !ok || s.count || !isFunc || !sameFunc(f.fn, fnLength) {
		return nil
	}
	return &subOneNode{l: s.l, x: s.x, count: true}
}

func (n *subOneNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	return evalOne(c, n, in, out)
}

func (n *subOneNode) eval1(c *dctx, in any) (any, bool, bool) {
	// binNode: the right operand first, [x] always one array.
	x, hasX, ok := one(c, n.x, in)
	if !ok {
		return nil, false, false
	}
	rlen := 0
	if hasX {
		if x, ok = outValue(x); !ok {
			return nil, false, false
		}
		rlen = 1
	}
	if !c.alloc(arrayBytes(rlen)) {
		return nil, false, false
	}
	l, has, ok := one(c, n.l, in)
	if !ok || !stepOne(c, has) {
		return nil, false, false
	}
	if !has {
		return nil, false, true
	}
	la, isArr := l.([]any)
	if !isArr {
		// Not an array: binary's rules (an error, which declines), on
		// the array built after all.
		r := []any{}
		if hasX {
			r = []any{x}
		}
		v, ok := binary(c, gojq.OpSub, l, r)
		if ok && n.count {
			if !c.step(1) {
				return nil, false, false
			}
			v, ok = fnLength(c, v)
		}
		return v, ok, ok
	}
	// subArrays' charges, then its comparisons.
	if !c.step(len(la)*rlen+len(la)+1) || !c.alloc(arrayBytes(len(la))) {
		return nil, false, false
	}
	var arr []any
	if !n.count {
		arr = make([]any, 0, len(la))
	}
	kept := 0
	for _, e := range la {
		if hasX {
			cmp, ok := compare(c, e, x)
			if !ok {
				return nil, false, false
			}
			if cmp == 0 {
				continue
			}
		}
		o, ok := outValue(e)
		if !ok {
			return nil, false, false
		}
		if !n.count {
			arr = append(arr, o)
		}
		kept++
	}
	if !n.count {
		return arr, true, true
	}
	// The pipe's step for the difference; length of an array.
	if !c.step(1) {
		return nil, false, false
	}
	return boxFloat(float64(kept)), true, true
}
