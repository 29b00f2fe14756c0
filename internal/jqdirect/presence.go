package jqdirect

// Presence. The gang hooks read a component's podTemplateSpecPath only to
// know whether each instance is present (a null template is an absent
// instance), yet a path that computes its template built it on every
// call: RayJob's submitter, when the RayJob names no submitterPodTemplate,
// is `{spec: {restartPolicy: …, containers: [{name: …, image: …,
// resources: …}]}}` — three maps and an array per PlacePod to be compared
// with null. Program.Presence is the program whose outputs have the
// original's count and nullness, and whose declines and steps are the
// original's, with the constructions it outputs evaluated but not built:
// each stands for itself by presentMark.

// presentMark is what a construction that was not built outputs: not
// null, and true as an object or an array is.
var presentMark any = true

// Presence returns the program for presence only, or nil when p builds
// nothing it outputs (a path, a comparison…) and is its own presence
// program — or shares a prefix, which its rest reads.
func (p *Program) Presence() *Program {
	if p == nil || p.pre != nil || p.path != nil {
		return nil
	}
	root, changed := presenceOf(p.root)
	if !changed {
		return nil
	}
	return &Program{root: root, nvars: p.nvars, locals: p.locals, one: isSingle(root)}
}

// presenceOf is n with the constructions in its output positions (n
// itself, an if's branches, the two sides of // and of a comma, the
// right of a pipe, a construction's values) not built; changed reports
// that there was one.
func presenceOf(n dnode) (dnode, bool) {
	switch x := n.(type) {
	case *objectNode:
		if !x.constKeys() || !isSingle(x) {
			return n, false
		}
		vals := make([]dnode, len(x.pairs))
		for i := range x.pairs {
			vals[i], _ = presenceOf(x.pairs[i].val)
		}
		return &presentObject{n: x, vals: vals}, true
	case *arrayNode:
		if x.q == nil {
			return n, false // [] is one shared value
		}
		q, _ := presenceOf(x.q)
		return &presentArray{q: q}, true
	case *ifNode:
		y := &ifNode{conds: x.conds, thens: make([]dnode, len(x.thens)), els: x.els}
		changed := false
		for i, t := range x.thens {
			var c bool
			y.thens[i], c = presenceOf(t)
			changed = changed || c
		}
		if x.els != nil {
			var c bool
			y.els, c = presenceOf(x.els)
			changed = changed || c
		}
		return y, changed
	case *altNode:
		l, cl := presenceOf(x.l)
		r, cr := presenceOf(x.r)
		return &altNode{l: l, r: r}, cl || cr
	case *commaNode:
		l, cl := presenceOf(x.l)
		r, cr := presenceOf(x.r)
		return &commaNode{l: l, r: r}, cl || cr
	case *pipeNode:
		r, c := presenceOf(x.r)
		return &pipeNode{l: x.l, r: r, lOne: x.lOne}, c
	}
	return n, false
}

// presentObject is an object of constant keys and single values
// (objectNode.one) that is not built: its values are evaluated in order,
// with one's steps, byte charge and declines (a value that is not a JSON
// value declines where the map would, after every value had an output),
// then presentMark.
type presentObject struct {
	n *objectNode
	// vals are the pairs' values, their own constructions not built.
	vals []dnode
}

func (p *presentObject) eval1(c *dctx, in any) (any, bool, bool) {
	valid := true
	for _, val := range p.vals {
		v, has, ok := one(c, val, in)
		if !ok || !stepOne(c, has) {
			return nil, false, false
		}
		if !has {
			return nil, false, true
		}
		if !p.n.asRecord {
			_, ok := outValue(v)
			valid = valid && ok
		}
	}
	if !c.step(len(p.vals)) || !c.alloc(objectBytes(len(p.vals))) || !valid {
		return nil, false, false
	}
	return presentMark, true, true
}

func (p *presentObject) eval(c *dctx, in any, out []any) ([]any, bool) {
	v, has, ok := p.eval1(c, in)
	if has {
		out = append(out, v)
	}
	return out, ok
}

// presentArray is [q] not built: q's outputs gathered and checked as
// arrayNode gathers them, then presentMark.
type presentArray struct{ q dnode }

func (p *presentArray) eval(c *dctx, in any, out []any) ([]any, bool) {
	if _, ok := gatherArray(c, p.q, in, false); !ok {
		return out, false
	}
	return append(out, presentMark), true
}

func (p *presentArray) eval1(c *dctx, in any) (any, bool, bool) { return viaEval(c, p, in) }
