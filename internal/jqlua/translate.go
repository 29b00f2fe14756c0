package jqlua

import (
	"fmt"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// The translator mirrors gojq's compiler (compiler.go) node for node, so
// that evaluation order, and with it which error wins, is gojq's: the right
// operand of a binary operator before the left, an index key before the
// indexed term, slice bounds start, end, then term, object entries key
// then value in order, and `X?` trying only the last suffix of X.
//
// Code is generated in continuation-passing style at generation time: an
// expression is generated together with a continuation (cont) that writes
// the code consuming each of its outputs, so a stream becomes nested loops
// and branches with no run-time closures. A continuation needed at several
// places (after `,`, in the branches of `if` and `//`) becomes a local
// function once, unless it is a single line. Expressions with exactly one
// output ("one", see isOne) are generated as straight-line statements
// computing a value (val), which is what most Karta paths are.
//
// The accessor is then rewritten as text, keeping what it evaluates and
// in which order (inline.go): a local used once, on the next line, becomes
// its expression there (inlineLocals), and an else holding one if alone
// an elseif (elseIfs), so an if … elif chain is flat and a chain of
// field reads one line.
//
// Constructs that stop a stream or catch its errors run in helper
// functions defined next to the accessor: first(f) returns from its helper
// at f's first output, and try runs its body to completion with J.try and
// then feeds the outputs on, which is indistinguishable from gojq's
// interleaving because the body is pure.

// value is an expression computing one jq value.
type value struct {
	expr    string
	atom    bool   // a local or a literal: cheap and safe to repeat
	fresh   bool   // a local made for this value alone: its producer may reassign it
	boolean bool   // always true or false
	str     bool   // always a string
	arr     bool   // always an array: one this accessor built ([…]), or a sum of two
	keys    bool   // J.keys's array: its elements are strings or numbers
	key     bool   // always a string or a number: an element of keys
	lit     bool   // a scalar literal
	raw     string // the text of a string literal, to name what it indexes
}

// cont consumes the outputs of an expression; emit receives an atom.
type cont struct {
	emit  func(x value)
	small bool // one line: fine to write at several places
	stops bool // may `return` from the enclosing first() helper
}

// gen generates one accessor: its function and its helpers.
type gen struct {
	w       *writer
	names   names
	helpers []string // finished helper definitions, inner ones first
	budget  int      // lines left before the translation counts as too big
	// Accessors run on the portable runtime, whose values are plain
	// tables: a constant string key is read from the table directly
	// (directIndex), and a read repeated on the same local is reused.
	// compact accessors read a constant key with J.field's call
	// (NewCompactPortableUnit).
	compact bool
	reads   []memoRead // the direct reads in scope, innermost last
	vars    []binding  // the variables bound (as) where the generator is, innermost last
	// keyInputs are the locals piped into a filter that hold a key
	// (value.key): loop variables, which nothing assigns.
	keyInputs map[string]bool
}

// binding is a jq variable in scope and the Lua local holding its value,
// which nothing assigns again.
type binding struct {
	name string // "$x"
	val  value
}

// memoRead is a direct read b[key] whose result is in a local that is in
// scope at the current line and has not been assigned since.
type memoRead struct {
	base, key string
	val       value
	depth     int // the writer's indent where the local was declared
}

// errTooBig aborts a translation that outgrows maxLines.
type errTooBig struct{}

// maxLines bounds one accessor's Lua; a bigger one is not translated.
const maxLines = 4000

func (g *gen) line(format string, args ...any) {
	if g.budget--; g.budget < 0 {
		panic(errTooBig{})
	}
	g.w.linef(format, args...)
}

func (g *gen) open(format string, args ...any) {
	g.line(format, args...)
	g.w.indent++
}

func (g *gen) middle(s string) {
	g.dropReads()
	g.w.indent--
	g.line("%s", s)
	g.w.indent++
}

func (g *gen) close() {
	g.dropReads()
	g.w.indent--
	g.line("end")
}

// generate returns the Lua definition of accessor Q[slot] for q, which
// must be translatable. The error is errTooBig when it outgrows maxLines.
func generate(q *gojq.Query, slot int, compact bool) (code string, err error) {
	g := &gen{w: &writer{indent: 1}, names: names{used: map[string]bool{}}, budget: maxLines, compact: compact}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(errTooBig); !ok {
				panic(r)
			}
			err = fmt.Errorf("its Lua would exceed %d lines", maxLines)
		}
	}()
	if isOne(q) {
		// Called without out, an accessor of an expression with one
		// output returns it (Unit.One).
		x := g.atom(g.val(q, "v"))
		if g.compact {
			// J.one's call, a line instead of two.
			g.line("return J.one(out, %s)", x.expr)
		} else {
			g.line("if out == nil then return %s end", x.expr)
			g.line("J.emit(out, %s)", x.expr)
		}
	} else {
		g.query(q, "v", cont{small: true, emit: func(x value) { g.line("J.emit(out, %s)", x.expr) }})
	}
	head := fmt.Sprintf("Q[%d] = function(v, out)\n", slot)
	if len(g.helpers) == 0 {
		return rewrite(head + g.w.sb.String() + "end\n"), nil
	}
	var sb strings.Builder
	sb.WriteString("do\n")
	for _, h := range g.helpers {
		sb.WriteString(indentLines(h))
	}
	sb.WriteString(indentLines(head + g.w.sb.String() + "end\n"))
	sb.WriteString("end\n")
	return rewrite(sb.String()), nil
}

func indentLines(s string) string {
	var sb strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			sb.WriteString("  ")
			sb.WriteString(l)
		}
	}
	return sb.String()
}

// helper writes a local function of the accessor's do block and returns
// its name; body generates its statements. The function is outside the
// accessor: a bound variable its body reads must be passed to it
// (boundParams).
func (g *gen) helper(kind, params string, body func()) string {
	name := g.names.fresh(kind)
	saved, reads := g.w, g.reads
	// The helper is another function: its v is not the accessor's.
	g.w, g.reads = &writer{indent: 1}, nil
	body()
	g.helpers = append(g.helpers, "local function "+name+"("+params+")\n"+g.w.sb.String()+"end\n")
	g.w, g.reads = saved, reads
	return name
}

// closure is helper for a body that reads bound variables (and cannot
// take them as parameters: J.try passes its function the input alone): a
// local function written here, in the accessor, whose upvalues are their
// locals. Those are never assigned, so a caught error closing the upvalues
// (gopher-lua issue #448) leaves the closure their values.
func (g *gen) closure(kind, params string, body func()) string {
	name := g.names.fresh(kind)
	reads := g.reads
	// Inside, v is the function's parameter, not the accessor's.
	g.reads = nil
	g.open("local function %s(%s)", name, params)
	body()
	g.close()
	g.reads = reads
	return name
}

// boundReads are the Lua locals of the bound variables q reads, in the
// order they were bound: the arguments of a helper running q.
func (g *gen) boundReads(q *gojq.Query) []string {
	if len(g.vars) == 0 {
		return nil
	}
	s := &scope{reads: map[string]bool{}}
	for _, b := range g.vars {
		s.vars = append(s.vars, b.name)
	}
	s.query(q)
	var locals []string
	for i, b := range g.vars {
		if s.reads[b.name] && g.innermost(i) {
			locals = append(locals, b.val.expr)
		}
	}
	return locals
}

// innermost reports whether g.vars[i] is the binding of its name in scope
// (no later binding shadows it).
func (g *gen) innermost(i int) bool {
	for _, b := range g.vars[i+1:] {
		if b.name == g.vars[i].name {
			return false
		}
	}
	return true
}

// variable is the value of the bound variable name.
func (g *gen) variable(name string) value {
	for i := len(g.vars) - 1; i >= 0; i-- {
		if g.vars[i].name == name {
			return g.vars[i].val
		}
	}
	panic("jqlua: unbound variable reached the generator: " + name)
}

// bindLocal binds name to x in a Lua local named after it, for the
// generation of the binding's body (see bind).
func (g *gen) bindLocal(name string, x value) []binding {
	outer := g.vars
	if x.atom {
		// A literal, or a local that nothing assigns again but its
		// producer's consumer, which the binding is (fresh): the
		// variable reads it where it is, `.s as $s` is s.
		x.fresh = false
		return append(outer[:len(outer):len(outer)], binding{name: name, val: x})
	}
	local := g.names.fresh(strings.TrimPrefix(name, "$"))
	g.line("local %s = %s", local, x.expr)
	val := value{expr: local, atom: true, boolean: x.boolean, str: x.str, arr: x.arr}
	return append(outer[:len(outer):len(outer)], binding{name: name, val: val})
}

// bind generates `LEFT as $name | BODY`: BODY on the same input for each
// output of LEFT, with $name its value. The continuation k, written inside
// BODY's code, is outside the variable's scope: it runs with the
// variables of the binding's own place, so that a $name of k reads an
// outer binding, not this one.
func (g *gen) bind(q *gojq.Query, in string, k cont) {
	name, _ := bindingName(q.Patterns)
	outer := g.vars
	after := cont{small: k.small, stops: k.stops, emit: func(x value) {
		inner := g.vars
		g.vars = outer
		k.emit(x)
		g.vars = inner
	}}
	g.query(q.Left, in, then(k, func(x value) {
		g.vars = g.bindLocal(name, x)
		g.query(q.Right, in, after)
		g.vars = outer
	}))
}

// then derives a continuation that leads to k.
func then(k cont, emit func(x value)) cont { return cont{emit: emit, stops: k.stops} }

// share makes k usable at several places: a local function called from
// each. Inside a first() helper the function returns the first output, and
// each call passes it on.
func (g *gen) share(k cont) cont {
	if k.small {
		return k
	}
	fn, x := g.names.fresh("k"), g.names.fresh("x")
	g.open("local function %s(%s)", fn, x)
	k.emit(value{expr: x, atom: true})
	g.close()
	if !k.stops {
		return cont{small: true, emit: func(v value) { g.line("%s(%s)", fn, v.expr) }}
	}
	return cont{small: true, stops: true, emit: func(v value) {
		r := g.names.fresh("r")
		g.line("local %s = %s(%s)", r, fn, v.expr)
		g.open("if %s ~= nil then", r)
		g.line("return %s", r)
		g.close()
	}}
}

// input is the value of a jq input variable.
func input(in string) value { return value{expr: in, atom: true} }

// atom makes v usable anywhere, in a local if needed.
func (g *gen) atom(v value) value {
	if v.atom {
		return v
	}
	x := g.local("t", v, v.boolean, v.str)
	x.arr, x.keys, x.key = v.arr, v.keys, v.key
	return x
}

// local declares a local holding v.
func (g *gen) local(base string, v value, boolean, str bool) value {
	name := g.names.fresh(base)
	g.line("local %s = %s", name, v.expr)
	return value{expr: name, atom: true, fresh: true, boolean: boolean, str: str}
}

// call declares a local holding the result of a runtime call.
func (g *gen) call(base string, boolean, str bool, format string, args ...any) value {
	return g.local(base, value{expr: fmt.Sprintf(format, args...)}, boolean, str)
}

// branch writes `if cond then … else … end`, or only the branch that runs
// when cond is the literal true or false (els may be nil). gopher-lua
// miscompiles an if on a literal condition inside a generic for (issue
// #540: wrong registers, panics, hangs), so generated code never has one.
func (g *gen) branch(cond string, then, els func()) {
	switch cond {
	case "true":
		then()
	case "false":
		if els != nil {
			els()
		}
	default:
		g.open("if %s then", cond)
		then()
		if els != nil {
			g.middle("else")
			els()
		}
		g.close()
	}
}

// truthy returns a Lua condition that holds when v is neither null nor
// false: the literal true or false when that is known (see branch).
func (g *gen) truthy(v value) string {
	switch {
	case v.lit:
		if v.expr == "NULL" || v.expr == "false" {
			return "false"
		}
		return "true"
	case v.boolean:
		return v.expr
	}
	v = g.atom(v)
	return v.expr + " ~= NULL and " + v.expr + " ~= false"
}

// falsy is the negation of truthy.
func (g *gen) falsy(v value) string {
	switch {
	case v.lit:
		if v.expr == "NULL" || v.expr == "false" {
			return "true"
		}
		return "false"
	case v.boolean && v.atom:
		return "not " + v.expr
	case v.boolean:
		return "not (" + v.expr + ")"
	}
	v = g.atom(v)
	return v.expr + " == NULL or " + v.expr + " == false"
}

// query generates q on input in; k consumes each output.
func (g *gen) query(q *gojq.Query, in string, k cont) {
	if isOne(q) {
		k.emit(g.atom(g.val(q, in)))
		return
	}
	if q.Term != nil {
		g.term(q.Term, in, k)
		return
	}
	if len(q.Patterns) > 0 {
		g.bind(q, in, k)
		return
	}
	switch q.Op {
	case gojq.OpPipe:
		g.query(q.Left, in, then(k, func(x value) { g.query(q.Right, x.expr, k) }))
	case gojq.OpComma:
		k = g.share(k)
		g.query(q.Left, in, k)
		g.query(q.Right, in, k)
	case gojq.OpAlt:
		g.alt(q.Left, q.Right, in, k)
	case gojq.OpAnd, gojq.OpOr:
		g.andOr(q.Op, q.Left, q.Right, in, k)
	default:
		g.query(q.Right, in, then(k, func(r value) {
			g.query(q.Left, in, then(k, func(l value) {
				k.emit(g.atom(g.binop(q.Op, l, r)))
			}))
		}))
	}
}

// alt generates l // r: the truthy outputs of l, or if there are none, the
// outputs of r. Errors of l propagate, as in gojq.
func (g *gen) alt(l, r *gojq.Query, in string, k cont) {
	k = g.share(k)
	if isOne(l) {
		x := g.atom(g.val(l, in))
		g.branch(g.truthy(x), func() { k.emit(x) }, func() { g.query(r, in, k) })
		return
	}
	// found is a table: a closure sharing the continuation of l writes
	// it, and a plain local would be detached from that closure when an
	// error caught by pcall closes every open upvalue (gopher-lua issue
	// #448; the portable runtime raises with error, which does).
	found := g.names.fresh("found")
	g.line("local %s = {}", found)
	g.query(l, in, then(k, func(x value) {
		g.branch(g.truthy(x), func() {
			g.line("%s[1] = true", found)
			k.emit(x)
		}, nil)
	}))
	g.open("if not %s[1] then", found)
	g.query(r, in, k)
	g.close()
}

// andOr generates l and r, l or r as gojq compiles them: as ifs on l.
func (g *gen) andOr(op gojq.Operator, l, r *gojq.Query, in string, k cont) {
	k = g.share(k)
	right := func() {
		g.query(r, in, then(k, func(y value) {
			if !y.boolean {
				y = g.local("b", value{expr: g.truthy(y)}, true, false)
			}
			k.emit(y)
		}))
	}
	g.query(l, in, then(k, func(x value) {
		constant := func(b string) func() {
			return func() { k.emit(value{expr: b, atom: true, boolean: true, lit: true}) }
		}
		if op == gojq.OpAnd {
			g.branch(g.truthy(x), right, constant("false"))
		} else {
			g.branch(g.truthy(x), constant("true"), right)
		}
	}))
}

// term generates t, following compileTerm: suffixes are peeled from the
// end.
func (g *gen) term(t *gojq.Term, in string, k cont) {
	if isOneTerm(t) {
		k.emit(g.atom(g.valTerm(t, in)))
		return
	}
	if n := len(t.SuffixList); n > 0 {
		base := *t
		base.SuffixList = t.SuffixList[:n-1]
		g.suffix(&base, t.SuffixList[n-1], in, k)
		return
	}
	switch t.Type {
	case gojq.TermTypeIndex:
		g.index(&gojq.Term{Type: gojq.TermTypeIdentity}, t.Index, in, k)
	case gojq.TermTypeFunc:
		if q, ok := desugar(t.Func); ok {
			g.query(q, in, k)
			return
		}
		g.callStream(t.Func, in, k)
	case gojq.TermTypeObject:
		g.object(t.Object, in, k)
	case gojq.TermTypeUnary:
		g.term(t.Unary.Term, in, then(k, func(x value) { k.emit(g.unary(t.Unary.Op, x)) }))
	case gojq.TermTypeIf:
		g.ifStream(t.If.Cond, t.If.Then, t.If.Elif, t.If.Else, in, k)
	case gojq.TermTypeTry:
		g.try(t.Try.Body, t.Try.Catch, in, k)
	case gojq.TermTypeQuery:
		g.query(t.Query, in, k)
	case gojq.TermTypeString:
		g.query(interpolation(t.Str), in, k)
	default:
		panic("jqlua: untranslatable term reached the generator: " + t.String())
	}
}

// suffix generates base followed by s, following compileTermSuffix.
func (g *gen) suffix(base *gojq.Term, s *gojq.Suffix, in string, k cont) {
	switch {
	case s.Index != nil:
		g.index(base, s.Index, in, k)
	case s.Iter:
		g.term(base, in, then(k, func(b value) { g.iterateKeyed(b.expr, false, b.keys, k) }))
	case s.Optional:
		// X? tries only X's last step when that is an index or an
		// iteration: the steps before it are outside the try.
		if n := len(base.SuffixList); n > 0 {
			if u := suffixTerm(base.SuffixList[n-1]); u != nil {
				rest := *base
				rest.SuffixList = base.SuffixList[:n-1]
				g.term(&rest, in, then(k, func(b value) { g.tryTerm(u, b.expr, k) }))
				return
			}
		}
		g.tryTerm(base, in, k)
	}
}

// suffixTerm is gojq's Suffix.toTerm: an index or iteration suffix as a
// term on `.`.
func suffixTerm(s *gojq.Suffix) *gojq.Term {
	switch {
	case s.Index != nil:
		return &gojq.Term{Type: gojq.TermTypeIndex, Index: s.Index}
	case s.Iter:
		return &gojq.Term{Type: gojq.TermTypeIdentity, SuffixList: []*gojq.Suffix{{Iter: true}}}
	}
	return nil
}

// iterate generates .[] (or .[]?) on b.
func (g *gen) iterate(b string, opt bool, k cont) { g.iterateKeyed(b, opt, false, k) }

// iterateKeyed is iterate, on b that is J.keys's array when keys is
// true: its elements are keys (value.key).
func (g *gen) iterateKeyed(b string, opt, keys bool, k cont) {
	x := g.names.fresh("x")
	fn := "each"
	if opt {
		fn = "each_opt"
	}
	g.open("for _, %s in J.%s(%s) do", x, fn, b)
	k.emit(value{expr: x, atom: true, key: keys})
	g.close()
}

// tryTerm generates try u (no catch) on in. A constant index, slice or
// iteration becomes a checked step instead of a try.
func (g *gen) tryTerm(u *gojq.Term, in string, k cont) {
	if len(u.SuffixList) == 0 && u.Type == gojq.TermTypeIndex {
		if key, ok := indexKey(u.Index); ok {
			x := g.constIndex(input(in), key, true)
			g.open("if %s ~= nil then", x.expr)
			k.emit(x)
			g.close()
			return
		}
	}
	if u.Type == gojq.TermTypeIdentity && len(u.SuffixList) == 1 && u.SuffixList[0].Iter {
		g.iterate(in, true, k)
		return
	}
	g.try(&gojq.Query{Term: u}, nil, in, k)
}

// try generates try body catch handler (handler may be nil).
func (g *gen) try(body, handler *gojq.Query, in string, k cont) {
	run := func() {
		g.query(body, "v", cont{small: true, emit: func(x value) { g.line("out[#out + 1] = %s", x.expr) }})
	}
	var h string
	if len(g.boundReads(body)) > 0 {
		h = g.closure("try", "v, out", run)
	} else {
		h = g.helper("try", "v, out", run)
	}
	if handler != nil {
		k = g.share(k)
	}
	outs := g.names.fresh("outs")
	var e string
	if handler != nil {
		e = g.names.fresh("err")
		g.line("local %s, %s = J.try(%s, %s)", outs, e, h, in)
	} else {
		g.line("local %s = J.try(%s, %s)", outs, h, in)
	}
	i := g.names.fresh("i")
	g.open("for %s = 1, #%s do", i, outs)
	k.emit(g.local("x", value{expr: outs + "[" + i + "]"}, false, false))
	g.close()
	if handler != nil {
		g.open("if %s ~= nil then", e)
		g.query(handler, e, k)
		g.close()
	}
}

// index generates term[x], following compileIndex.
func (g *gen) index(t *gojq.Term, x *gojq.Index, in string, k cont) {
	if key, ok := indexKey(x); ok {
		g.term(t, in, then(k, func(b value) { k.emit(g.constIndex(b, key, false)) }))
		return
	}
	switch {
	case x.Str != nil:
		g.dynIndex(t, &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeString, Str: x.Str}}, in, k)
	case !x.IsSlice:
		g.dynIndex(t, x.Start, in, k)
	default:
		g.optional(x.Start, in, then(k, func(s value) {
			g.optional(x.End, in, then(k, func(e value) {
				g.term(t, in, then(k, func(b value) {
					k.emit(g.call("t", false, false, "J.slice(%s, %s, %s)", b.expr, s.expr, e.expr))
				}))
			}))
		}))
	}
}

// dynIndex generates term[key] for a computed key: the key first.
func (g *gen) dynIndex(t *gojq.Term, key *gojq.Query, in string, k cont) {
	g.query(key, in, then(k, func(kv value) {
		g.term(t, in, then(k, func(b value) {
			k.emit(g.call("t", false, false, "J.index(%s, %s)", b.expr, kv.expr))
		}))
	}))
}

// optional generates q, or null when q is nil (a missing slice bound).
func (g *gen) optional(q *gojq.Query, in string, k cont) {
	if q == nil {
		k.emit(value{expr: "NULL", atom: true, lit: true})
		return
	}
	g.query(q, in, k)
}

// callStream generates the builtins with other than one output.
func (g *gen) callStream(f *gojq.Func, in string, k cont) {
	switch f.Name {
	case "empty":
		g.line("-- empty")
	case "error":
		if len(f.Args) == 0 {
			g.line("J.error(%s)", in)
			return
		}
		g.query(f.Args[0], in, then(k, func(x value) {
			if x.str {
				g.line("J.error_string(%s)", x.expr)
				return
			}
			g.line("J.error(%s)", x.expr)
		}))
	case "select":
		pass := func() { k.emit(input(in)) }
		if isOne(f.Args[0]) {
			g.branch(g.truthy(g.val(f.Args[0], in)), pass, nil)
			return
		}
		g.query(f.Args[0], in, then(k, func(c value) { g.branch(g.truthy(c), pass, nil) }))
	case "first":
		// The variables its argument reads are the helper's parameters,
		// named as their locals.
		args := append([]string{in}, g.boundReads(f.Args[0])...)
		params := append([]string{"v"}, args[1:]...)
		h := g.helper("first", strings.Join(params, ", "), func() {
			g.query(f.Args[0], "v", cont{small: true, stops: true, emit: func(x value) { g.line("do return %s end", x.expr) }})
		})
		x := g.call("first", false, false, "%s(%s)", h, strings.Join(args, ", "))
		g.open("if %s ~= nil then", x.expr)
		k.emit(x)
		g.close()
	case "last":
		// gojq's _last: the last output, none when f has none. The cell
		// survives a caught error closing upvalues (see alt).
		cell := g.names.fresh("last")
		g.line("local %s = {}", cell)
		g.query(f.Args[0], in, cont{small: true, emit: func(x value) { g.line("%s[1] = %s", cell, x.expr) }})
		x := g.local("last", value{expr: cell + "[1]"}, false, false)
		g.open("if %s ~= nil then", x.expr)
		k.emit(x)
		g.close()
	default:
		boolean, ok := unaryPrimitives[f.Name]
		if !ok {
			panic("jqlua: unexpected stream builtin " + f.Name)
		}
		g.query(f.Args[0], in, then(k, func(arg value) {
			k.emit(g.call(resultNames[f.Name], boolean, resultIsString[f.Name], "J.%s(%s, %s)", f.Name, in, arg.expr))
		}))
	}
}

// object generates an object construction with streams in it: a nest of
// loops over each entry's key then value, in order, building one object
// per combination.
func (g *gen) object(o *gojq.Object, in string, k cont) {
	var step func(i int, parts []value)
	step = func(i int, parts []value) {
		if i == len(o.KeyVals) {
			k.emit(g.buildObject(parts))
			return
		}
		kv := o.KeyVals[i]
		g.objectKey(kv, in, then(k, func(key value) {
			g.objectValue(kv, key, in, then(k, func(val value) {
				step(i+1, append(parts[:len(parts):len(parts)], key, val))
			}))
		}))
	}
	step(0, nil)
}

func (g *gen) objectKey(kv *gojq.ObjectKeyVal, in string, k cont) {
	switch {
	case isVariable(kv.Key) && kv.Val == nil: // {$x} is {x: $x}
		k.emit(stringLit(kv.Key[1:]))
	case isVariable(kv.Key): // {$x: f} keys f by $x
		k.emit(g.variable(kv.Key))
	case kv.Key != "":
		k.emit(stringLit(kv.Key))
	case kv.KeyString != nil && kv.KeyString.Queries == nil:
		k.emit(stringLit(kv.KeyString.Str))
	case kv.KeyString != nil:
		g.query(interpolation(kv.KeyString), in, k)
	default:
		g.query(kv.KeyQuery, in, k)
	}
}

// objectValue generates an entry's value; {a} and {"\(…)"} read .[key].
func (g *gen) objectValue(kv *gojq.ObjectKeyVal, key value, in string, k cont) {
	if kv.Val != nil {
		g.query(kv.Val, in, k)
		return
	}
	if isVariable(kv.Key) {
		k.emit(g.variable(kv.Key))
		return
	}
	k.emit(g.constIndexValue(input(in), key))
}

// ifStream generates if with streams in it: each output of the condition
// selects a branch on the same input.
func (g *gen) ifStream(cond, thenQ *gojq.Query, elifs []*gojq.IfElif, elseQ *gojq.Query, in string, k cont) {
	k = g.share(k)
	g.query(cond, in, then(k, func(c value) {
		g.branch(g.truthy(c), func() { g.query(thenQ, in, k) }, func() {
			switch {
			case len(elifs) > 0:
				g.ifStream(elifs[0].Cond, elifs[0].Then, elifs[1:], elseQ, in, k)
			case elseQ != nil:
				g.query(elseQ, in, k)
			default:
				k.emit(input(in))
			}
		})
	}))
}

// interpolation is gojq's compileString: "a\(f)b" is "a" + (f | tostring)
// + "b", left associative, so the last part is evaluated first.
func interpolation(s *gojq.String) *gojq.Query {
	var q *gojq.Query
	for _, e := range s.Queries {
		if e.Term == nil || e.Term.Str == nil {
			e = &gojq.Query{Left: e, Op: gojq.OpPipe, Right: &gojq.Query{Term: &gojq.Term{
				Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "tostring"}}}}
		}
		if q == nil {
			q = e
		} else {
			q = &gojq.Query{Left: q, Op: gojq.OpAdd, Right: e}
		}
	}
	if q == nil {
		return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeString, Str: &gojq.String{}}}
	}
	return q
}

func stringLit(s string) value {
	return value{expr: LuaString(s), atom: true, str: true, lit: true, raw: s}
}
