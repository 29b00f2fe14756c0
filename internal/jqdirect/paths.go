package jqdirect

import (
	"github.com/kartalua/karta/internal/jqlua"
)

// Paths evaluates path(EXPR) for the program's expression EXPR on in: the
// location of every output, as gojq's path() gives it (string keys and int
// indices, in output order), together with the output's value. ok false
// declines, as Run does: the caller evaluates path(EXPR) with gojq, which
// gives the locations or the error.
//
// The path subset is smaller than Run's: `.`, index steps with a key or a
// non-negative index, `.[]` iteration, `?` on a step, pipes, commas,
// select(f), first(f), if-then-elif-else and `a // b`; conditions are
// evaluated by Run's nodes. Anything else — a negative index, a literal,
// a constructed value (which path() refuses) — declines. Work is charged to the same step
// budget as Run, and more than jqlua.OutputLimit locations decline.
//
// Each location is a fresh slice the caller owns; values are the object's
// own (not converted: they are locations' contents, not results).
func (p *Program) Paths(in any, s *Scratch) (locs [][]any, vals []any, ok bool) {
	c := p.enter(s)
	c.keys = p.boxedKeys()
	var out []located
	out, ok = pathsOf(c, p.root, in, nil, out)
	c.keys = nil
	p.leave(c)
	if !ok || len(out) > jqlua.OutputLimit {
		return nil, nil, false
	}
	locs = make([][]any, len(out))
	vals = make([]any, len(out))
	for i, o := range out {
		locs[i], vals[i] = o.at, o.v
	}
	return locs, vals, true
}

// boxedKeys returns the steps of every path node of p as interface
// values, made once: a location's keys are then the same boxed strings on
// every call instead of a new allocation each.
func (p *Program) boxedKeys() map[*pathNode][]any {
	if m := p.keys.Load(); m != nil {
		return *m
	}
	m := map[*pathNode][]any{}
	var visit func(n dnode)
	visit = func(n dnode) {
		switch x := n.(type) {
		case *pathNode:
			b := make([]any, len(x.steps))
			for i, st := range x.steps {
				if st.isIndex {
					b[i] = st.index
				} else {
					b[i] = st.key
				}
			}
			m[x] = b
			if x.base != nil {
				visit(x.base)
			}
		case *pipeNode:
			visit(x.l)
			visit(x.r)
		case *commaNode:
			visit(x.l)
			visit(x.r)
		case *altNode:
			visit(x.l)
			visit(x.r)
		case *firstNode:
			visit(x.f)
		case *ifNode:
			for i := range x.conds {
				visit(x.thens[i])
			}
			if x.els != nil {
				visit(x.els)
			}
		}
	}
	visit(p.root)
	p.keys.Store(&m)
	return m
}

// located is one output of path mode: its location and its value.
type located struct {
	at []any
	v  any
}

// extend returns at + e in a new backing array, so that locations built
// from one prefix never share one.
func extend(at []any, e any) []any {
	out := make([]any, len(at), len(at)+1)
	copy(out, at)
	return append(out, e)
}

// pathsOf appends the locations of n's outputs on in, in is at location
// at.
func pathsOf(c *dctx, n dnode, in any, at []any, out []located) ([]located, bool) {
	switch x := n.(type) {
	case identityNode:
		return append(out, located{at, in}), true
	case *pathNode:
		if x.base == nil {
			return x.pathWalk(c, in, at, 0, out)
		}
		bases, ok := pathsOf(c, x.base, in, at, nil)
		if !ok || !c.step(len(bases)) {
			return out, false
		}
		for _, b := range bases {
			if out, ok = x.pathWalk(c, b.v, b.at, 0, out); !ok {
				return out, false
			}
		}
		return out, true
	case *pipeNode:
		ls, ok := pathsOf(c, x.l, in, at, nil)
		if !ok || !c.step(len(ls)) {
			return out, false
		}
		for _, l := range ls {
			if out, ok = pathsOf(c, x.r, l.v, l.at, out); !ok {
				return out, false
			}
		}
		return out, true
	case *commaNode:
		out, ok := pathsOf(c, x.l, in, at, out)
		if !ok {
			return out, false
		}
		return pathsOf(c, x.r, in, at, out)
	case *selectNode:
		// select(f) is `if f then . else empty end`: f's outputs are
		// values, and each truthy one yields the input's location.
		tmp := c.buf()
		tmp, ok := x.f.eval(c, in, tmp)
		if ok {
			for _, v := range tmp {
				if truthy(v) {
					out = append(out, located{at, in})
				}
			}
		}
		c.free(tmp)
		return out, ok
	case *firstNode:
		// first(f): the first location of f, an operand of its top
		// commas at a time, as firstNode evaluates it (within an operand
		// whole: an error after its first output declines).
		for _, f := range x.alts {
			ls, ok := pathsOf(c, f, in, at, nil)
			if !ok {
				return out, false
			}
			if len(ls) > 0 {
				return append(out, ls[0]), true
			}
		}
		return out, true
	case *ifNode:
		return x.pathBranch(c, 0, in, at, out)
	case *altNode:
		// a // b: the locations of a's truthy outputs, or else b's. An
		// error in a, which jq swallows here, declines.
		ls, ok := pathsOf(c, x.l, in, at, nil)
		if !ok {
			return out, false
		}
		found := false
		for _, l := range ls {
			if truthy(l.v) {
				out, found = append(out, l), true
			}
		}
		if found {
			return out, true
		}
		return pathsOf(c, x.r, in, at, out)
	}
	return out, false
}

// pathWalk applies steps[i:] to v at location at. The keys up to the
// next iteration are added in one new slice.
func (n *pathNode) pathWalk(c *dctx, v any, at []any, i int, out []located) ([]located, bool) {
	j := i
	for j < len(n.steps) && !n.steps[j].iter {
		j++
	}
	if j > i {
		loc := make([]any, len(at), len(at)+j-i)
		copy(loc, at)
		boxed := c.keys[n]
		for ; i < j; i++ {
			s := &n.steps[i]
			if s.isIndex && s.index < 0 {
				return out, false
			}
			next, ok := index(v, s)
			if !ok {
				// A `?` step that fails on a JSON value has no output.
				return out, s.opt && isJSONValue(v)
			}
			switch {
			case boxed != nil:
				loc = append(loc, boxed[i])
			case s.isIndex:
				loc = append(loc, s.index)
			default:
				loc = append(loc, s.key)
			}
			v = next
		}
		at = loc
	}
	if i < len(n.steps) {
		return n.pathIterate(c, v, at, i, out)
	}
	return append(out, located{at, v}), true
}

// pathIterate is .[] (steps[i]) in path mode: arrays by index, objects by
// sorted key, as jq does; anything else (null included) is jq's error and
// declines.
func (n *pathNode) pathIterate(c *dctx, v any, at []any, i int, out []located) ([]located, bool) {
	ok := true
	switch x := v.(type) {
	case []any:
		if !c.step(len(x)) {
			return out, false
		}
		for j, e := range x {
			if out, ok = n.pathWalk(c, e, extend(at, j), i+1, out); !ok {
				return out, false
			}
		}
		return out, true
	case map[string]any:
		if !c.step(len(x)) {
			return out, false
		}
		for _, k := range sortedKeys(x) {
			if out, ok = n.pathWalk(c, x[k], extend(at, k), i+1, out); !ok {
				return out, false
			}
		}
		return out, true
	}
	// Iterating null or a scalar is an error, or no output with `?`.
	return out, n.steps[i].opt && isJSONScalar(v)
}

// pathBranch is ifNode.branch in path mode: the conditions are values,
// the branches locations; no else is `.`.
func (n *ifNode) pathBranch(c *dctx, i int, in any, at []any, out []located) ([]located, bool) {
	if i == len(n.conds) {
		if n.els == nil {
			return append(out, located{at, in}), true
		}
		return pathsOf(c, n.els, in, at, out)
	}
	tmp := c.buf()
	tmp, ok := n.conds[i].eval(c, in, tmp)
	if ok {
		ok = c.step(len(tmp))
	}
	for j := 0; ok && j < len(tmp); j++ {
		if truthy(tmp[j]) {
			out, ok = pathsOf(c, n.thens[i], in, at, out)
		} else {
			out, ok = n.pathBranch(c, i+1, in, at, out)
		}
	}
	c.free(tmp)
	return out, ok
}
