package jqdirect

// Constructions of constant keys, built without the general form's
// machinery. A view builds the containers an operator adds to its pods
// (KServe's storage-initializer, Knative's queue-proxy, Spark's and
// Flink's resources): objects of constant keys whose values are constants
// or single expressions, nested a few levels deep. The general form
// (objectNode.build) takes a buffer per pair and per key, recurses once per
// pair under a deferred free, and builds every nested constant afresh on
// every call — KServe's storage-initializer was 43 allocations and 10 µs
// per call, most of it its constant resources and volume mounts.
//
// Two things change, neither the outputs:
//
//   - A construction whose every value is a constant is one at compile
//     time (constantOf): `{limits: {cpu: "1", memory: "1Gi"}}`, `[{name:
//     "x", mountPath: "/m"}]`. Its value is built once, converted as the
//     construction converts its values (outValue), and every evaluation
//     gives that value, as gojq gives a constant object it compiled to one
//     push. Values in flight are never written (nothing in this package
//     mutates a map or slice it did not just make), and the hooks' results
//     are read-only to their callers (interpreter/api.go, "Aliasing"), so
//     the value may be shared. `{}` and `[]` stay fresh per evaluation, as
//     before.
//   - An object of constant keys whose values are single (one.go) is built
//     by eval1 in one loop over its pairs (objectNode.one): each value's
//     output, or none (then no object, and the later pairs are not
//     evaluated, as in build), then the object. Its steps, declines and
//     outputs are build's (TestOneAgreesWithEval).

// constantOf is the value n always gives when it is a literal, or a
// construction of literals under constant keys (folded bottom-up as the
// compiler builds them); ok false otherwise.
func constantOf(n dnode) (any, bool) {
	switch x := n.(type) {
	case *literalNode:
		return outValue(x.v)
	case *objectNode:
		if x.asRecord || len(x.pairs) == 0 {
			return nil, false
		}
		m := make(map[string]any, len(x.pairs))
		for _, p := range x.pairs {
			if p.keyNode != nil {
				return nil, false
			}
			v, ok := literalValue(p.val)
			if !ok {
				return nil, false
			}
			m[p.key] = v // the last of equal keys wins, as in build
		}
		return m, true
	case *arrayNode:
		if x.q == nil {
			return nil, false
		}
		var elems []any
		if !commaLiterals(x.q, &elems) {
			return nil, false
		}
		return elems, true
	}
	return nil, false
}

// literalValue is the converted value of a literal node (a folded
// construction is one), ok false for anything else.
func literalValue(n dnode) (any, bool) {
	if l, ok := n.(*literalNode); ok {
		return outValue(l.v)
	}
	return nil, false
}

// commaLiterals appends the values of q when it is literals joined by
// commas, in output order.
func commaLiterals(q dnode, out *[]any) bool {
	if c, ok := q.(*commaNode); ok {
		return commaLiterals(c.l, out) && commaLiterals(c.r, out)
	}
	v, ok := literalValue(q)
	if ok {
		*out = append(*out, v)
	}
	return ok
}

// folded is n, or the literal of its constant value when it has one
// (constantOf); only constructions are folded, a literal is kept.
func folded(n dnode) dnode {
	switch n.(type) {
	case *objectNode, *arrayNode:
		if v, ok := constantOf(n); ok {
			return &literalNode{v}
		}
	}
	return n
}

// constKeys reports that every key of n is constant: objectNode.one may
// build it.
func (n *objectNode) constKeys() bool {
	for _, p := range n.pairs {
		if p.keyNode != nil {
			return false
		}
	}
	return true
}

// one is eval1 of an object of constant keys (isSingle approved its
// values): build's outputs, steps and declines without its buffers and
// recursion.
func (n *objectNode) one(c *dctx, in any) (any, bool, bool) {
	vals := c.buf()
	defer func() { c.free(vals) }()
	for i := range n.pairs {
		v, has, ok := one(c, n.pairs[i].val, in)
		if !ok || !stepOne(c, has) {
			return nil, false, false
		}
		if !has {
			return nil, false, true
		}
		vals = append(vals, v)
	}
	if !c.step(len(n.pairs)) || !c.alloc(objectBytes(len(n.pairs))) {
		return nil, false, false
	}
	if n.asRecord {
		// One allocation for a record of up to four keys, as build makes.
		r := newRecord(n.keys)
		copy(r.vals, vals)
		return r, true, true
	}
	m := make(map[string]any, len(n.pairs))
	for i, v := range vals {
		o, ok := outValue(v)
		if !ok {
			return nil, false, false
		}
		m[n.pairs[i].key] = o
	}
	return m, true, true
}
