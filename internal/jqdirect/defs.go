package jqdirect

import (
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Function definitions and reduce: what a Karta writes when one
// expression computes a whole pod template (TrainJob's strategic merge of
// podTemplateOverrides: `def byKey($k; f): reduce … as $x (…; …)`).
//
// A definition is inlined at each call, compiled afresh there: its
// `$param`s get slots of their own (`def f($a): body` is
// `def f(a): a as $a | body`, as in jq), and a filter parameter is a
// closure — the call's argument, compiled where the body names it with the
// variables and functions in scope at the call. Since evaluation is eager
// and a binding's slot holds its value while its body runs, a closure
// reads the caller's variables from their slots as the caller would.
// Recursion is not inlined: past maxInline nested inlinings the
// expression is outside the subset, and runs on the Lua path.

// maxInline is the deepest nesting of inlined definitions.
const maxInline = 16

// funcBinding is a function in scope: a definition, or a filter parameter
// (a closure over its argument).
type funcBinding struct {
	name  string
	arity int
	def   *gojq.FuncDef // nil for a closure
	arg   *gojq.Query   // a closure's argument
	// scope and funcs are what the definition's body (a def) or the
	// argument (a closure) sees: the variables and functions in scope
	// where it was written. Both are capped slices, so that appending to
	// them copies.
	scope []binding
	funcs []funcBinding
}

// capped returns s with its capacity cut to its length: an append to it
// copies instead of writing into a slice another snapshot shares.
func capped[T any](s []T) []T { return s[:len(s):len(s)] }

// withDefs compiles q with its definitions in scope: each sees itself
// (recursion, which inlining refuses) and the ones before it.
func (cp *compiler) withDefs(q *gojq.Query) dnode {
	saved := cp.funcs
	defer func() { cp.funcs = saved }()
	for _, fd := range q.FuncDefs {
		fb := funcBinding{name: fd.Name, arity: len(fd.Args), def: fd, scope: capped(cp.scope)}
		cp.funcs = append(capped(cp.funcs), fb)
		// The body sees the functions before it and itself.
		cp.funcs[len(cp.funcs)-1].funcs = capped(cp.funcs)
	}
	body := *q
	body.FuncDefs = nil
	return cp.query(&body)
}

// lookupFunc finds the innermost function in scope of that name and
// arity.
func (cp *compiler) lookupFunc(name string, arity int) *funcBinding {
	for i := len(cp.funcs) - 1; i >= 0; i-- {
		if f := &cp.funcs[i]; f.name == name && f.arity == arity {
			return f
		}
	}
	return nil
}

// in compiles f with the variables and functions of another place in
// scope (a closure's call site, a definition's), then restores the
// compiler's.
func (cp *compiler) in(scope []binding, funcs []funcBinding, f func() dnode) dnode {
	savedScope, savedFuncs := cp.scope, cp.funcs
	cp.scope, cp.funcs = capped(scope), capped(funcs)
	defer func() { cp.scope, cp.funcs = savedScope, savedFuncs }()
	return f()
}

// call compiles a call of a function in scope: a closure's argument, or
// the definition's body inlined with its parameters bound.
func (cp *compiler) call(fb *funcBinding, args []*gojq.Query) dnode {
	if fb.def == nil {
		return cp.in(fb.scope, fb.funcs, func() dnode { return cp.query(fb.arg) })
	}
	if cp.inlined >= maxInline {
		return nil
	}
	cp.inlined++
	defer func() { cp.inlined-- }()
	callScope, callFuncs := capped(cp.scope), capped(cp.funcs)
	// Every parameter is a closure over its argument; a $param is also a
	// variable bound to each of the argument's outputs in turn.
	funcs := fb.funcs
	scope := fb.scope
	type valueParam struct {
		arg  *gojq.Query
		slot int
	}
	var values []valueParam
	for i, name := range fb.def.Args {
		closure := funcBinding{arity: 0, arg: args[i], scope: callScope, funcs: callFuncs}
		if name != "" && name[0] == '$' {
			closure.name = name[1:]
			slot := len(cp.vars) + cp.slots
			cp.slots++
			scope = append(capped(scope), binding{name: name, slot: slot})
			values = append(values, valueParam{arg: args[i], slot: slot})
		} else {
			closure.name = name
		}
		funcs = append(capped(funcs), closure)
	}
	body := cp.in(scope, funcs, func() dnode { return cp.query(fb.def.Body) })
	if body == nil {
		return nil
	}
	// `a as $a | b as $b | body`: the first parameter outermost.
	for i := len(values) - 1; i >= 0; i-- {
		src := cp.in(callScope, callFuncs, func() dnode { return cp.query(values[i].arg) })
		if src == nil {
			return nil
		}
		body = &bindNode{src: src, slot: values[i].slot, body: body}
	}
	return body
}

// reduce compiles `reduce SRC as $x (START; UPDATE)`; a destructuring
// pattern is outside the subset.
func (cp *compiler) reduce(r *gojq.Reduce) dnode {
	if len(r.Patterns) != 1 || r.Patterns[0].Name == "" {
		return nil
	}
	src, start := cp.query(r.Query), cp.query(r.Start)
	if src == nil || start == nil {
		return nil
	}
	slot := len(cp.vars) + cp.slots
	cp.slots++
	cp.scope = append(capped(cp.scope), binding{name: r.Patterns[0].Name, slot: slot})
	update := cp.query(r.Update)
	cp.scope = cp.scope[:len(cp.scope)-1]
	if update == nil {
		return nil
	}
	return &reduceNode{src: src, slot: slot, start: start, update: update}
}

// reduceNode is reduce as gojq runs it: for each output of start (on the
// input), the state begins there and each output of src (on the input)
// in turn, bound to the slot, replaces it by update's last output on the
// state. An update without output declines (gojq keeps the state there,
// jq 1.7 makes it null: the Lua path's gojq decides).
type reduceNode struct {
	src, start, update dnode
	slot               int
}

func (n *reduceNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	starts := c.buf()
	starts, ok := n.start.eval(c, in, starts)
	if !ok {
		c.free(starts)
		return out, false
	}
	xs := c.buf()
	xs, ok = n.src.eval(c, in, xs)
	// The source's outputs are held while the state folds over them, as
	// a binding's are.
	if ok && c.alloc(slotBytes*len(xs)) {
		out, ok = n.fold(c, starts, xs, out)
	} else {
		ok = false
	}
	c.free(xs)
	c.free(starts)
	return out, ok
}

// fold runs the reduction from each start over xs.
func (n *reduceNode) fold(c *dctx, starts, xs, out []any) ([]any, bool) {
	old := c.vars[n.slot]
	defer func() { c.vars[n.slot] = old }()
	us := c.buf()
	defer func() { c.free(us) }()
	for _, acc := range starts {
		if !c.step(len(xs) + 1) {
			return out, false
		}
		for _, x := range xs {
			c.vars[n.slot] = x
			var ok bool
			if us, ok = n.update.eval(c, acc, us[:0]); !ok || len(us) == 0 {
				return out, false
			}
			acc = us[len(us)-1]
		}
		out = append(out, acc)
	}
	return out, true
}

// toEntries is gojq's definition of to_entries (builtin.jq), compiled
// where it is called.
var toEntries = mustParse(`[keys[] as $k | {key: $k, value: .[$k]}]`)

func mustParse(text string) *gojq.Query {
	q, err := gojq.Parse(text)
	if err != nil {
		panic(err)
	}
	return q
}

// builtinDef compiles the body of a builtin gojq defines in jq: with
// neither the expression's variables nor its functions in scope, as
// gojq's builtins see none of them.
func (cp *compiler) builtinDef(q *gojq.Query) dnode {
	return cp.in(nil, nil, func() dnode { return cp.query(q) })
}
