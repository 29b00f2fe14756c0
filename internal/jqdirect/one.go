package jqdirect

// Single-output evaluation. Most of a Karta's expressions give at most one
// output on any input — `select(.spec.mode == "cluster") |
// .spec.components.proxy.image`, a comparison, an `if` of paths — yet
// every node of the general form takes a buffer from the stack for its
// operands' outputs and frees it under a deferred call. A Karta with many
// components (Milvus: 101 expressions, 84 evaluated per GetPodSpecs) paid
// that per node and per evaluation. A node that is single by construction
// (isSingle) also evaluates through eval1, which returns its output, if
// any, without buffers; its steps, declines and outputs are exactly its
// eval's (TestOneAgreesWithEval). Program.Run takes that way for a single
// expression, a pipe for its single left side, select for its condition
// and an operator for single operands.

// oner is a node whose every input gives at most one output.
type oner interface {
	dnode
	// eval1 is eval for a single output: has false is no output, ok false
	// declines.
	eval1(c *dctx, in any) (v any, has, ok bool)
}

// isSingle reports that n gives at most one output on any input by its
// construction (and its operands'): it is an oner.
func isSingle(n dnode) bool {
	if generalOnly {
		return false
	}
	switch x := n.(type) {
	case identityNode, emptyNode, emptyObjectNode, *literalNode, varNode, funcNode, *splitIndexNode, *interpNode, *arrayIndexNode, *subOneNode:
		return true
	case *pathNode:
		return x.single && (x.base == nil || isSingle(x.base))
	case *pipeNode:
		return isSingle(x.l) && isSingle(x.r)
	case *binNode:
		return isSingle(x.l) && isSingle(x.r)
	case *logicNode:
		return isSingle(x.l) && isSingle(x.r)
	case *altNode:
		return isSingle(x.l) && isSingle(x.r)
	case *selectNode:
		return isSingle(x.f)
	case *negNode:
		return isSingle(x.x)
	case *func1Node:
		return isSingle(x.arg)
	case *arrayNode, *arrayFnNode, *firstNode, *anyAllNode, *anyAllOfNode, *presentObject, *presentArray:
		// One array, one first output or none, one boolean.
		return true
	case *objectNode:
		for _, p := range x.pairs {
			if p.keyNode != nil && !isSingle(p.keyNode) || !isSingle(p.val) {
				return false
			}
		}
		return true
	case *indexNode:
		return (x.base == nil || isSingle(x.base)) && isSingle(x.key)
	case *sliceNode:
		return (x.base == nil || isSingle(x.base)) && (x.start == nil || isSingle(x.start)) && (x.end == nil || isSingle(x.end))
	case *hasNode:
		return isSingle(x.k)
	case *errorNode:
		// No output ever: f's first output is the error.
		return isSingle(x.f)
	case *bindNode:
		return isSingle(x.src) && isSingle(x.body)
	case *reduceNode:
		return isSingle(x.start)
	case *ifNode:
		if x.els != nil && !isSingle(x.els) {
			return false
		}
		for i := range x.conds {
			if !isSingle(x.conds[i]) || !isSingle(x.thens[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// generalOnly makes Compile build the general form only, so that a test
// can compare the two forms (TestOneAgreesWithEval).
var generalOnly bool

// one evaluates a node isSingle approved.
func one(c *dctx, n dnode, in any) (any, bool, bool) { return n.(oner).eval1(c, in) }

// stepOne charges what the general form charges for an operand's
// outputs: one step for an output, none for none.
func stepOne(c *dctx, has bool) bool {
	if has {
		return c.step(1)
	}
	return true
}

func (identityNode) eval1(_ *dctx, in any) (any, bool, bool)    { return in, true, true }
func (emptyNode) eval1(*dctx, any) (any, bool, bool)            { return nil, false, true }
func (emptyObjectNode) eval1(*dctx, any) (any, bool, bool)      { return map[string]any{}, true, true }
func (n *literalNode) eval1(*dctx, any) (any, bool, bool)       { return n.v, true, true }
func (n funcNode) eval1(c *dctx, in any) (v any, has, ok bool)  { v, ok = n.fn(c, in); return v, ok, ok }
func (n varNode) eval1(c *dctx, in any) (any, bool, bool)       { return n.value(c), true, true }
func (n *pathNode) eval1(c *dctx, in any) (v any, has, ok bool) { return n.oneOn(c, in) }

func (n varNode) value(c *dctx) any {
	if n.slot < len(c.vars) {
		return c.vars[n.slot]
	}
	return nil
}

func (n *pathNode) oneOn(c *dctx, v any) (any, bool, bool) {
	if n.base != nil {
		b, has, ok := one(c, n.base, v)
		if !ok || !has {
			return nil, false, ok
		}
		v = b
	}
	for i := range n.steps {
		s := &n.steps[i]
		next, ok := index(v, s)
		if !ok {
			return nil, false, s.opt && optFails(v, s)
		}
		v = next
	}
	return v, true, true
}

func (n *pipeNode) eval1(c *dctx, in any) (any, bool, bool) {
	v, has, ok := one(c, n.l, in)
	if !ok || !stepOne(c, has) || !has {
		return nil, false, ok
	}
	return one(c, n.r, v)
}

// binNode: the right operand first, the left only when the right has an
// output, the pair charged.
func (n *binNode) eval1(c *dctx, in any) (any, bool, bool) { return n.oneOf(c, in) }

func (n *binNode) oneOf(c *dctx, in any) (any, bool, bool) {
	if n.chain {
		// An operand is an arithmetic operator: its number unboxed
		// (arith.go).
		f, v, num, has, ok := n.num(c, in)
		if num {
			return boxFloat(f), true, true
		}
		return v, has, ok
	}
	r, has, ok := one(c, n.r, in)
	if !ok || !has {
		return nil, false, ok
	}
	l, has, ok := one(c, n.l, in)
	if !ok || !stepOne(c, has) {
		return nil, false, false
	}
	if !has {
		return nil, false, true
	}
	v, ok := binary(c, n.op, l, r)
	return v, ok, ok
}

func (n *logicNode) eval1(c *dctx, in any) (any, bool, bool) {
	l, has, ok := one(c, n.l, in)
	if !ok || !stepOne(c, has) || !has {
		return nil, false, ok
	}
	if truthy(l) != n.and {
		return !n.and, true, true
	}
	r, has, ok := one(c, n.r, in)
	if !ok || !has {
		return nil, false, ok
	}
	return truthy(r), true, true
}

func (n *altNode) eval1(c *dctx, in any) (any, bool, bool) {
	l, has, ok := one(c, n.l, in)
	if !ok {
		return nil, false, false
	}
	if has && truthy(l) {
		return l, true, true
	}
	return one(c, n.r, in)
}

func (n *selectNode) eval1(c *dctx, in any) (any, bool, bool) {
	v, has, ok := one(c, n.f, in)
	if !ok || !has || !truthy(v) {
		return nil, false, ok
	}
	return in, true, true
}

func (n *negNode) eval1(c *dctx, in any) (any, bool, bool) {
	v, has, ok := one(c, n.x, in)
	if !ok || !has {
		return nil, false, ok
	}
	f, ok := dnumber(v)
	if !ok {
		return nil, false, false
	}
	return -f, true, true
}

func (n *func1Node) eval1(c *dctx, in any) (any, bool, bool) {
	x, has, ok := one(c, n.arg, in)
	if !ok || !stepOne(c, has) || !has {
		return nil, false, ok
	}
	v, ok := n.fn(c, in, x)
	return v, ok, ok
}

func (n *ifNode) eval1(c *dctx, in any) (any, bool, bool) {
	for i := range n.conds {
		v, has, ok := one(c, n.conds[i], in)
		if !ok || !stepOne(c, has) || !has {
			return nil, false, ok
		}
		if truthy(v) {
			return one(c, n.thens[i], in)
		}
	}
	if n.els == nil {
		return in, true, true
	}
	return one(c, n.els, in)
}

// The nodes below build or gather their output whatever their operands
// give; being single lets the nodes above them take the single form, and
// their own eval1 is their eval's one output.

func (n *arrayNode) eval1(c *dctx, in any) (any, bool, bool)    { return viaEval(c, n, in) }
func (n *arrayFnNode) eval1(c *dctx, in any) (any, bool, bool)  { return viaEval(c, n, in) }
func (n *firstNode) eval1(c *dctx, in any) (any, bool, bool)    { return viaEval(c, n, in) }
func (n *anyAllNode) eval1(c *dctx, in any) (any, bool, bool)   { return viaEval(c, n, in) }
func (n *anyAllOfNode) eval1(c *dctx, in any) (any, bool, bool) { return viaEval(c, n, in) }

func (n *sliceNode) eval1(c *dctx, in any) (any, bool, bool)  { return viaEval(c, n, in) }
func (n *hasNode) eval1(c *dctx, in any) (any, bool, bool)    { return viaEval(c, n, in) }
func (n *bindNode) eval1(c *dctx, in any) (any, bool, bool)   { return viaEval(c, n, in) }
func (n *reduceNode) eval1(c *dctx, in any) (any, bool, bool) { return viaEval(c, n, in) }

// eval1 of a computed index of a single key and base: indexNode.eval's
// order, steps and declines (the key first, none of the base without
// one; the key's type checked even when the base gives nothing) without
// its two buffers. AppWrapper's templates follow a podSet's keys with
// four nested indexes, `.c.template[.s[1]][.s[2]]…`, on every call.
func (n *indexNode) eval1(c *dctx, in any) (any, bool, bool) {
	k, has, ok := one(c, n.key, in)
	if !ok || !has {
		return nil, false, ok
	}
	b, hasBase := in, true
	if n.base != nil {
		if b, hasBase, ok = one(c, n.base, in); !ok {
			return nil, false, false
		}
	}
	if !stepOne(c, hasBase) {
		return nil, false, false
	}
	s, ok := keyStep(k)
	if !ok {
		return nil, false, false
	}
	if !hasBase {
		return nil, false, true
	}
	v, ok := index(b, &s)
	return v, ok, ok
}

// eval1 of error(f): no output, or the error of f's first output, which
// declines (errorNode.eval). Being single lets an `if` whose last branch
// fails (AppWrapper's "podSet path … is deeper than this Karta follows")
// take the single form.
func (n *errorNode) eval1(c *dctx, in any) (any, bool, bool) {
	_, has, ok := one(c, n.f, in)
	return nil, false, ok && !has
}

// viaEval is eval1 of a single node through its eval.
func viaEval(c *dctx, n dnode, in any) (any, bool, bool) {
	tmp := c.buf()
	tmp, ok := n.eval(c, in, tmp)
	var v any
	has := ok && len(tmp) > 0
	if has {
		v = tmp[0]
	}
	c.free(tmp)
	return v, has, ok
}

// eval1 of an object: objectNode.one when its keys are constant
// (construct.go).
func (n *objectNode) eval1(c *dctx, in any) (any, bool, bool) {
	if n.constKeys() {
		return n.one(c, in)
	}
	return viaEval(c, n, in)
}
