package jqlua

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kartalua/karta/internal/third_party/gojq"

	"github.com/kartalua/karta/luaapi"
)

// isOne reports whether q has exactly one output (or fails) on every
// input, so that val can compute it in straight-line code.
func isOne(q *gojq.Query) bool {
	if q.Term != nil {
		return isOneTerm(q.Term)
	}
	if q.Op == gojq.OpComma {
		return false
	}
	return isOne(q.Left) && isOne(q.Right)
}

func isOneTerm(t *gojq.Term) bool {
	for _, s := range t.SuffixList {
		if s.Index == nil || !isOneIndex(s.Index) {
			return false
		}
	}
	switch t.Type {
	case gojq.TermTypeIdentity, gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse,
		gojq.TermTypeNumber, gojq.TermTypeArray:
		return true
	case gojq.TermTypeString:
		return isOneString(t.Str)
	case gojq.TermTypeIndex:
		return isOneIndex(t.Index)
	case gojq.TermTypeFunc:
		if isVariable(t.Func.Name) {
			return true
		}
		if q, ok := desugar(t.Func); ok {
			return isOne(q)
		}
		if _, ok := unaryPrimitives[t.Func.Name]; ok {
			return isOne(t.Func.Args[0])
		}
		switch t.Func.Name {
		case "length", "keys", "to_entries", "add", "tostring", "tonumber", "type", "not", "map",
			"min", "max", "tojson", "ascii_downcase", "ascii_upcase":
			return true
		case "first":
			return isOne(t.Func.Args[0])
		case "last":
			return isOne(t.Func.Args[0])
		}
		return false
	case gojq.TermTypeObject:
		for _, kv := range t.Object.KeyVals {
			if kv.KeyQuery != nil && !isOne(kv.KeyQuery) ||
				kv.KeyString != nil && !isOneString(kv.KeyString) ||
				kv.Val != nil && !isOne(kv.Val) {
				return false
			}
		}
		return true
	case gojq.TermTypeUnary:
		return isOneTerm(t.Unary.Term)
	case gojq.TermTypeIf:
		if !isOne(t.If.Cond) || !isOne(t.If.Then) || t.If.Else != nil && !isOne(t.If.Else) {
			return false
		}
		for _, e := range t.If.Elif {
			if !isOne(e.Cond) || !isOne(e.Then) {
				return false
			}
		}
		return true
	case gojq.TermTypeQuery:
		return isOne(t.Query)
	}
	return false
}

func isOneIndex(x *gojq.Index) bool {
	if _, ok := indexKey(x); ok {
		return true
	}
	switch {
	case x.Str != nil:
		return isOneString(x.Str)
	case !x.IsSlice:
		return isOne(x.Start)
	}
	return (x.Start == nil || isOne(x.Start)) && (x.End == nil || isOne(x.End))
}

func isOneString(s *gojq.String) bool {
	for _, q := range s.Queries {
		if !isOne(q) {
			return false
		}
	}
	return true
}

// constKey is a constant index: a key (string or number) or slice bounds,
// as Lua literals. gojq compiles these to a single opindex (toIndexKey).
type constKey struct {
	expr     string // the key
	str      bool   // the key is a string
	name     string // a name for the result
	slice    bool
	from, to string // slice bounds, NULL when missing
}

// indexKey is gojq's Index.toIndexKey.
func indexKey(x *gojq.Index) (constKey, bool) {
	switch {
	case x.Name != "":
		return constKey{expr: LuaString(x.Name), name: x.Name, str: true}, true
	case x.Str != nil:
		if x.Str.Queries != nil {
			return constKey{}, false
		}
		return constKey{expr: LuaString(x.Str.Str), name: x.Str.Str, str: true}, true
	case !x.IsSlice:
		return queryKey(x.Start)
	}
	key := constKey{slice: true, name: "slice", from: "NULL", to: "NULL"}
	if x.Start != nil {
		k, ok := queryKey(x.Start)
		if !ok {
			return constKey{}, false
		}
		key.from = k.expr
	}
	if x.End != nil {
		k, ok := queryKey(x.End)
		if !ok {
			return constKey{}, false
		}
		key.to = k.expr
	}
	return key, true
}

// queryKey is gojq's Query.toIndexKey: a number (folded as gojq folds it)
// or a plain string.
func queryKey(q *gojq.Query) (constKey, bool) {
	if q == nil || q.Term == nil || len(q.Term.SuffixList) > 0 {
		return constKey{}, false
	}
	t := q.Term
	if t.Type == gojq.TermTypeString && t.Str.Queries == nil {
		return constKey{expr: LuaString(t.Str.Str), name: t.Str.Str, str: true}, true
	}
	if f, ok := literalNumber(t); ok {
		return constKey{expr: luaNumber(f), name: "item"}, true
	}
	return constKey{}, false
}

// constIndex reads a constant key from b; opt gives the `?` variant, whose
// result is nil where J.index would raise.
func (g *gen) constIndex(b value, key constKey, opt bool) value {
	suffix := ""
	if opt {
		suffix = "_opt"
	}
	if key.slice {
		return g.call(key.name, false, false, "J.slice%s(%s, %s, %s)", suffix, b.expr, key.from, key.to)
	}
	if !opt && key.str && b.atom && !b.lit {
		return g.directIndex(b, key)
	}
	if !opt && key.str {
		return g.call(key.name, false, false, "J.field(%s, %s)", b.expr, key.expr)
	}
	return g.call(key.name, false, false, "J.index%s(%s, %s)", suffix, b.expr, key.expr)
}

// directIndex reads the constant string key of b, a local, on the portable
// runtime. Inline (the default): b[key] straight from the table when b is
// a table and the member is there and neither false nor nil; J.field
// otherwise (J.index for a string key), whose answer it is in every case
// (null, a missing or false member, an array or a scalar: its null, its
// value or its error). An array, runtime-made or decoded, has no string
// keys, so its read falls to J.field, which raises: the table needs no
// test of being an object. For a compact unit (NewCompactPortableUnit),
// J.field's call alone: half the bytes, a fifth more VM instructions per
// run. One line either way: exported chunks carry many.
// The reads of one accessor on the same local are made once while the
// result is in scope (g.reads): the value is the same, and an error would
// have been raised by the first.
func (g *gen) directIndex(b value, key constKey) value {
	for i := len(g.reads) - 1; i >= 0; i-- {
		if r := g.reads[i]; r.base == b.expr && r.key == key.expr {
			x := r.val
			x.fresh = false // its producer's local: others may not assign it
			return x
		}
	}
	x := g.names.fresh(key.name)
	if g.compact {
		g.line("local %s = J.field(%s, %s)", x, b.expr, key.expr)
	} else {
		g.line("local %s = type(%s) == \"table\" and %s%s or J.field(%s, %s)",
			x, b.expr, b.expr, fieldRef(key.name), b.expr, key.expr)
	}
	v := value{expr: x, atom: true, fresh: true}
	g.reads = append(g.reads, memoRead{base: b.expr, key: key.expr, val: v, depth: g.w.indent})
	return v
}

// dropReads forgets the direct reads declared in the block that ends.
func (g *gen) dropReads() {
	n := len(g.reads)
	for n > 0 && g.reads[n-1].depth >= g.w.indent {
		n--
	}
	g.reads = g.reads[:n]
}

// assigned forgets the direct reads into or of local x, which is about to
// be assigned another value.
func (g *gen) assigned(x string) {
	kept := g.reads[:0]
	for _, r := range g.reads {
		if r.val.expr != x && r.base != x {
			kept = append(kept, r)
		}
	}
	g.reads = kept
}

// constIndexValue reads key (any value) from b, named after the key when
// it is a literal.
func (g *gen) constIndexValue(b value, key value) value {
	return g.call(key.raw, false, false, "J.index(%s, %s)", b.expr, key.expr)
}

// isArrayTerm reports an array construction, [f], alone.
func isArrayTerm(q *gojq.Query) bool {
	return q.Term != nil && q.Left == nil && q.Term.Type == gojq.TermTypeArray && len(q.Term.SuffixList) == 0
}

// isCall reports a call of the builtin name without arguments, alone.
func isCall(q *gojq.Query, name string) bool {
	return q.Term != nil && q.Left == nil && q.Term.Type == gojq.TermTypeFunc && q.Term.Func.Name == name &&
		len(q.Term.Func.Args) == 0 && len(q.Term.SuffixList) == 0
}

// val generates q, which must satisfy isOne, as statements and returns its
// value.
func (g *gen) val(q *gojq.Query, in string) value {
	if v, ok := fold(q); ok {
		return v
	}
	if q.Term != nil {
		return g.valTerm(q.Term, in)
	}
	if len(q.Patterns) > 0 {
		// bind's straight-line form: one output of LEFT, then BODY's one.
		name, _ := bindingName(q.Patterns)
		x := g.val(q.Left, in)
		outer := g.vars
		g.vars = g.bindLocal(name, x)
		defer func() { g.vars = outer }()
		return g.val(q.Right, in)
	}
	switch q.Op {
	case gojq.OpPipe:
		x := g.atom(g.val(q.Left, in))
		if isArrayTerm(q.Left) && isCall(q.Right, "length") {
			// [f] | length: J.length of an array this accessor built is
			// its Lua length, and needs none of J.length's other kinds.
			return g.call("len", false, false, "#%s", x.expr)
		}
		if x.key {
			if g.keyInputs == nil {
				g.keyInputs = map[string]bool{}
			}
			g.keyInputs[x.expr] = true
		}
		rest := q.Right
		for x.fresh {
			// `f | if c then g else . end | …` with f's value in a local
			// of its own (fresh): the if assigns that local when c holds,
			// where it would copy it into another. The reads of it
			// before are forgotten, those of the condition too.
			head, tail := rest, (*gojq.Query)(nil)
			if rest.Term == nil && rest.Op == gojq.OpPipe && len(rest.Patterns) == 0 && len(rest.FuncDefs) == 0 {
				head, tail = rest.Left, rest.Right
			}
			c := ifOf(head)
			if c == nil || !thenOnly(c) {
				break
			}
			g.assigned(x.expr)
			g.assignThen(c, x.expr, x.expr)
			g.assigned(x.expr)
			if tail == nil {
				return x
			}
			rest = tail
		}
		return g.val(rest, x.expr)
	case gojq.OpAlt:
		l := g.val(q.Left, in)
		t := l
		if !l.atom || !l.fresh {
			t = g.local("t", l, l.boolean, l.str)
		} else {
			g.assigned(t.expr)
		}
		g.open("if %s then", g.falsy(t))
		r := g.val(q.Right, in)
		g.line("%s = %s", t.expr, r.expr)
		g.close()
		return value{expr: t.expr, atom: true, fresh: true, boolean: l.boolean && r.boolean, str: l.str && r.str, arr: l.arr && r.arr}
	case gojq.OpAnd, gojq.OpOr:
		l := g.val(q.Left, in)
		if !l.boolean {
			l = g.atom(l)
		}
		if l.lit {
			return g.literalAndOr(q.Op, l, q.Right, in)
		}
		if x, ok := g.pureAndOr(q.Op, l, q.Right, in); ok {
			return x
		}
		b := g.names.fresh("b")
		cond := g.truthy(l)
		if q.Op == gojq.OpAnd {
			g.line("local %s = false", b)
		} else {
			g.line("local %s = true", b)
			cond = g.falsy(l)
		}
		g.branch(cond, func() { g.line("%s = %s", b, g.truthy(g.val(q.Right, in))) }, nil)
		return value{expr: b, atom: true, fresh: true, boolean: true}
	}
	r := g.val(q.Right, in)
	l := g.val(q.Left, in)
	return g.binop(q.Op, l, r)
}

// literalAndOr is l and r, or l or r, for a literal l (a reference's
// exportFallback in its place, (null // null) == null, is one): its
// answer when l decides it, else r's truthiness, as jq evaluates them.
func (g *gen) literalAndOr(op gojq.Operator, l value, right *gojq.Query, in string) value {
	if lt := g.truthy(l) == "true"; lt == (op == gojq.OpOr) {
		return value{expr: strconv.FormatBool(lt), atom: true, lit: true, boolean: true}
	}
	r := g.val(right, in)
	if r.boolean {
		return r
	}
	if r.lit {
		return value{expr: g.truthy(r), atom: true, lit: true, boolean: true}
	}
	return value{expr: g.truthy(g.atom(r)), boolean: true}
}

// pureAndOr is l and r, or l or r, as one Lua expression when r's value
// takes no statement (a comparison with a literal, a local): Lua's and
// and or of two booleans evaluate r exactly when jq's do, and give jq's
// answer. Otherwise false, and nothing is written.
func (g *gen) pureAndOr(op gojq.Operator, l value, right *gojq.Query, in string) (value, bool) {
	saved, reads, helpers, budget, named := g.w, len(g.reads), len(g.helpers), g.budget, len(g.names.order)
	g.w = &writer{indent: saved.indent + 1} // where the branch would compute it
	r := g.val(right, in)
	lines := g.w.lines
	g.w = saved
	if lines > 0 || !r.boolean && !r.atom {
		g.reads, g.helpers, g.budget = g.reads[:reads], g.helpers[:helpers], budget
		g.names.rollback(named)
		return value{}, false
	}
	lc, rc := g.truthy(l), g.truthy(r)
	if lc == "true" || lc == "false" || rc == "true" || rc == "false" {
		return value{}, false // see branch: no literal in a condition
	}
	word := " and "
	if op == gojq.OpOr {
		word = " or "
	}
	return value{expr: andOrOperand(lc) + word + andOrOperand(rc), boolean: true}, true
}

// andOrOperand parenthesizes a condition holding and or or, so that the
// operators of two conditions do not mix.
func andOrOperand(c string) string {
	if strings.Contains(c, " and ") || strings.Contains(c, " or ") {
		return "(" + c + ")"
	}
	return c
}

// binop applies a binary operator to two computed operands.
func (g *gen) binop(op gojq.Operator, l, r value) value {
	if op == gojq.OpAdd && l.str && r.str {
		// Both are strings: + is concatenation, and cannot fail.
		return value{expr: g.concatOperand(l) + " .. " + g.concatOperand(r), str: true}
	}
	l, r = g.atom(l), g.atom(r)
	if op == gojq.OpAdd && (l.str || r.str) {
		// A string and anything: concatenation, the string alone (the
		// other is null) or plus's error; the answer is a string.
		return g.call("t", false, true, "J.plus_string(%s, %s)", l.expr, r.expr)
	}
	if op == gojq.OpAdd && l.arr && r.arr {
		// Two arrays this accessor built: their concatenation.
		x := g.call("t", false, false, "J.plus_arrays(%s, %s)", l.expr, r.expr)
		x.arr = true
		return x
	}
	var fn string
	boolean := true
	switch op {
	case gojq.OpEq, gojq.OpNe:
		if l.lit || r.lit {
			// A scalar literal equals a value exactly when Lua says so.
			cmp := " == "
			if op == gojq.OpNe {
				cmp = " ~= "
			}
			return value{expr: l.expr + cmp + r.expr, boolean: true}
		}
		fn = map[gojq.Operator]string{gojq.OpEq: "eq", gojq.OpNe: "ne"}[op]
	case gojq.OpLt, gojq.OpLe, gojq.OpGt, gojq.OpGe:
		if c, ok := numberCompare(op, l, r); ok {
			return g.call("t", true, false, "%s", c)
		}
		fn = map[gojq.Operator]string{gojq.OpLt: "lt", gojq.OpLe: "le", gojq.OpGt: "gt", gojq.OpGe: "ge"}[op]
	default:
		boolean = false
		fn = map[gojq.Operator]string{
			gojq.OpAdd: "plus", gojq.OpSub: "minus", gojq.OpMul: "times",
			gojq.OpDiv: "divide", gojq.OpMod: "modulo",
		}[op]
	}
	return g.call("t", boolean, false, "J.%s(%s, %s)", fn, l.expr, r.expr)
}

// numberCompare is an ordering of a value and a number literal (either
// side) as J.cmpn's, which needs none of compare's machinery for other
// types: `.n > 0` is J.cmpn(n, 0) > 0, `0 < .n` J.cmpn(n, 0) > 0 too.
func numberCompare(op gojq.Operator, l, r value) (string, bool) {
	isNumber := func(v value) bool { return v.lit && !v.str && !v.boolean && v.expr != "NULL" }
	ops := map[gojq.Operator]string{gojq.OpLt: "<", gojq.OpLe: "<=", gojq.OpGt: ">", gojq.OpGe: ">="}
	switch {
	case isNumber(r):
		return fmt.Sprintf("J.cmpn(%s, %s) %s 0", l.expr, r.expr, ops[op]), true
	case isNumber(l):
		// n op v is v op' n, the operator mirrored.
		mirror := map[gojq.Operator]gojq.Operator{gojq.OpLt: gojq.OpGt, gojq.OpLe: gojq.OpGe, gojq.OpGt: gojq.OpLt, gojq.OpGe: gojq.OpLe}
		return fmt.Sprintf("J.cmpn(%s, %s) %s 0", r.expr, l.expr, ops[mirror[op]]), true
	}
	return "", false
}

// concatOperand returns v as an operand of .., keeping chains flat.
func (g *gen) concatOperand(v value) string {
	if v.atom || strings.Contains(v.expr, " .. ") && v.str {
		return v.expr
	}
	return g.atom(v).expr
}

// unary applies unary minus or plus.
func (g *gen) unary(op gojq.Operator, x value) value {
	if op == gojq.OpSub {
		return g.call("t", false, false, "J.negate(%s)", x.expr)
	}
	return g.call("t", false, false, "J.unary_plus(%s)", x.expr)
}

// valTerm generates a term that satisfies isOneTerm.
func (g *gen) valTerm(t *gojq.Term, in string) value {
	if n := len(t.SuffixList); n > 0 {
		base := *t
		base.SuffixList = t.SuffixList[:n-1]
		return g.valIndex(&base, t.SuffixList[n-1].Index, in)
	}
	switch t.Type {
	case gojq.TermTypeIdentity:
		return input(in)
	case gojq.TermTypeNull:
		return value{expr: "NULL", atom: true, lit: true}
	case gojq.TermTypeTrue:
		return value{expr: "true", atom: true, lit: true, boolean: true}
	case gojq.TermTypeFalse:
		return value{expr: "false", atom: true, lit: true, boolean: true}
	case gojq.TermTypeNumber:
		f, _ := numberLiteral(t.Number)
		return value{expr: luaNumber(f), atom: true, lit: true}
	case gojq.TermTypeString:
		if t.Str.Queries == nil {
			return stringLit(t.Str.Str)
		}
		return g.val(interpolation(t.Str), in)
	case gojq.TermTypeIndex:
		return g.valIndex(&gojq.Term{Type: gojq.TermTypeIdentity}, t.Index, in)
	case gojq.TermTypeFunc:
		if isVariable(t.Func.Name) {
			return g.variable(t.Func.Name)
		}
		if q, ok := desugar(t.Func); ok {
			return g.val(q, in)
		}
		return g.valCall(t.Func, in)
	case gojq.TermTypeObject:
		return g.valObject(t.Object, in)
	case gojq.TermTypeArray:
		return g.valArray(t.Array.Query, in)
	case gojq.TermTypeUnary:
		if f, ok := literalNumber(t); ok {
			return value{expr: luaNumber(f), atom: true, lit: true}
		}
		return g.unary(t.Unary.Op, g.atom(g.valTerm(t.Unary.Term, in)))
	case gojq.TermTypeIf:
		return g.valIf(t.If, in)
	case gojq.TermTypeQuery:
		return g.val(t.Query, in)
	}
	panic("jqlua: val on a term with other than one output: " + t.String())
}

// valIndex generates base[x], following compileIndex: a computed key before
// the term, slice bounds start, end, then the term.
func (g *gen) valIndex(base *gojq.Term, x *gojq.Index, in string) value {
	if key, ok := indexKey(x); ok {
		return g.constIndex(g.atom(g.valTerm(base, in)), key, false)
	}
	switch {
	case x.Str != nil:
		key := g.atom(g.val(interpolation(x.Str), in))
		b := g.atom(g.valTerm(base, in))
		return g.call("t", false, false, "J.index(%s, %s)", b.expr, key.expr)
	case !x.IsSlice:
		key := g.atom(g.val(x.Start, in))
		b := g.atom(g.valTerm(base, in))
		return g.call("t", false, false, "J.index(%s, %s)", b.expr, key.expr)
	}
	from, to := value{expr: "NULL"}, value{expr: "NULL"}
	if x.Start != nil {
		from = g.atom(g.val(x.Start, in))
	}
	if x.End != nil {
		to = g.atom(g.val(x.End, in))
	}
	b := g.atom(g.valTerm(base, in))
	return g.call("slice", false, false, "J.slice(%s, %s, %s)", b.expr, from.expr, to.expr)
}

// valCall generates the builtins with one output.
func (g *gen) valCall(f *gojq.Func, in string) value {
	switch f.Name {
	case "not":
		return value{expr: in + " == NULL or " + in + " == false", boolean: true}
	case "map":
		// def map(f): [.[] | f];
		return g.valArray(&gojq.Query{
			Left:  &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIdentity, SuffixList: []*gojq.Suffix{{Iter: true}}}},
			Op:    gojq.OpPipe,
			Right: f.Args[0],
		}, in)
	case "first", "last":
		return g.val(f.Args[0], in)
	case "tostring", "type", "tojson", "ascii_downcase", "ascii_upcase":
		if f.Name == "tostring" && g.keyInputs[in] {
			// A key is a string or a number: no JSON encoder.
			return g.call("str", false, true, "J.tostring_key(%s)", in)
		}
		return g.call(resultNames[f.Name], false, true, "J.%s(%s)", f.Name, in)
	case "keys":
		x := g.call("keys", false, false, "J.keys(%s)", in)
		x.keys = true
		return x
	}
	if boolean, ok := unaryPrimitives[f.Name]; ok {
		arg := g.atom(g.val(f.Args[0], in))
		return g.call(resultNames[f.Name], boolean, resultIsString[f.Name], "J.%s(%s, %s)", f.Name, in, arg.expr)
	}
	return g.call(resultNames[f.Name], false, false, "J.%s(%s)", f.Name, in)
}

// resultIsString are the builtins whose result is always a string.
var resultIsString = map[string]bool{"join": true, "ltrimstr": true, "rtrimstr": true}

// resultNames name the results of builtins.
var resultNames = map[string]string{
	"length": "len", "keys": "keys", "to_entries": "entries", "add": "sum",
	"tostring": "str", "tonumber": "num", "type": "typ", "has": "has",
	"min": "least", "max": "most", "tojson": "json", "ascii_downcase": "lower", "ascii_upcase": "upper",
	"join": "joined", "split": "parts", "startswith": "starts", "endswith": "ends",
	"ltrimstr": "trimmed", "rtrimstr": "trimmed",
}

// valArray generates [q]: every output of q appended to a new array.
func (g *gen) valArray(q *gojq.Query, in string) value {
	if q == nil {
		return value{expr: "J.array()", arr: true} // a new table each time: not an atom
	}
	if items := commaItems(q, nil); !slices.ContainsFunc(items, func(q *gojq.Query) bool { return !isOne(q) }) {
		// Items of one output each, computed in order: a Lua table
		// constructor of them, made an array by J.array_of, one line
		// where an append per item was.
		elems := make([]string, len(items))
		for i, item := range items {
			elems[i] = g.atom(g.val(item, in)).expr
		}
		arr := g.call("arr", false, false, "J.array_of({%s})", strings.Join(elems, ", "))
		arr.arr = true
		return arr
	}
	arr := g.call("arr", false, false, "J.array()")
	arr.arr = true
	g.query(q, in, cont{small: true, emit: func(x value) {
		g.line("%s[#%s + 1] = %s", arr.expr, arr.expr, x.expr)
	}})
	return arr
}

// commaItems appends the items of q, a comma's operands in order (q
// itself when it is no comma), to items.
func commaItems(q *gojq.Query, items []*gojq.Query) []*gojq.Query {
	if q.Op == gojq.OpComma && q.Term == nil && len(q.Patterns) == 0 && len(q.FuncDefs) == 0 {
		return commaItems(q.Right, commaItems(q.Left, items))
	}
	return append(items, q)
}

// valObject generates an object construction whose entries all have one
// output: entries in order, each key then its value.
func (g *gen) valObject(o *gojq.Object, in string) value {
	if len(o.KeyVals) == 0 {
		return value{expr: "J.object()"} // a new table each time: not an atom
	}
	constKeys := true
	for _, kv := range o.KeyVals {
		if kv.KeyQuery != nil || kv.KeyString != nil && kv.KeyString.Queries != nil || isVariable(kv.Key) && kv.Val != nil {
			constKeys = false
		}
	}
	if constKeys {
		// The values in order, each an atom, then the object in one
		// constructor.
		var parts []value
		for _, kv := range o.KeyVals {
			g.objectKey(kv, in, cont{small: true, emit: func(key value) {
				g.objectValue(kv, key, in, cont{small: true, emit: func(x value) { parts = append(parts, key, x) }})
			}})
		}
		return g.buildObject(parts)
	}
	var args []string
	for _, kv := range o.KeyVals {
		g.objectKey(kv, in, cont{small: true, emit: func(key value) {
			g.objectValue(kv, key, in, cont{small: true, emit: func(x value) {
				args = append(args, key.expr, x.expr)
			}})
		}})
	}
	return g.call("obj", false, false, "J.make_object(%s)", strings.Join(args, ", "))
}

// fieldRef renders a table field access for a string key.
func fieldRef(key string) string {
	if isLuaIdent(key) && !luaKeywords[key] {
		return "." + key
	}
	return "[" + LuaString(key) + "]"
}

// buildObject makes an object of key/value pairs computed by object.
func (g *gen) buildObject(parts []value) value {
	constKeys := true
	for i := 0; i < len(parts); i += 2 {
		if !parts[i].lit || !parts[i].str {
			constKeys = false
		}
	}
	if !constKeys {
		args := make([]string, len(parts))
		for i, p := range parts {
			args[i] = p.expr
		}
		return g.call("obj", false, false, "J.make_object(%s)", strings.Join(args, ", "))
	}
	// A Lua table constructor of the entries, made an object by
	// J.object_of: one line, where a line per entry assigned it before.
	// Lua assigns a constructor's fields in order, so the last entry of
	// a repeated key wins, as in jq. The values are atoms, computed
	// already in jq's order.
	fields := make([]string, 0, len(parts)/2)
	for i := 0; i < len(parts); i += 2 {
		fields = append(fields, strings.TrimPrefix(fieldRef(parts[i].raw), ".")+" = "+parts[i+1].expr)
	}
	obj := g.call("obj", false, false, "J.object_of({%s})", strings.Join(fields, ", "))
	for i := 0; i < len(parts); i += 2 {
		key, val := parts[i], parts[i+1]
		if val.atom {
			// A later .key of this object, which nothing changes, is val
			// (directIndex's reads; the last entry of a repeated key is
			// found first).
			g.reads = append(g.reads, memoRead{base: obj.expr, key: key.expr, val: value{expr: val.expr, atom: true, lit: val.lit, str: val.str, arr: val.arr, boolean: val.boolean, raw: val.raw}, depth: g.w.indent})
		}
	}
	return obj
}

// valIf generates an if whose parts all have one output.
func (g *gen) valIf(x *gojq.If, in string) value {
	// t is declared first, so that a condition computed into a local
	// right above the if can be that if's condition (inlineLocals).
	t := g.names.fresh("t")
	if thenOnly(x) {
		// t starts as the input, and only the then branch assigns it.
		g.line("local %s = %s", t, in)
		g.assignThen(x, in, t)
		return value{expr: t, atom: true, fresh: true}
	}
	g.line("local %s", t)
	c := g.val(x.Cond, in)
	str, arr := g.ifChain(c, x.Then, x.Elif, x.Else, in, t)
	return value{expr: t, atom: true, fresh: true, str: str, arr: arr}
}

// ifChain writes the branches of an if … elif … else chain assigning
// their values to t, and reports whether every one is a string and
// whether every one is an array this accessor built.
func (g *gen) ifChain(c value, thenQ *gojq.Query, elifs []*gojq.IfElif, elseQ *gojq.Query, in, t string) (str, arr bool) {
	str, arr = true, true
	g.branch(g.truthy(c), func() {
		str, arr = g.assignVal(thenQ, in, t)
	}, func() {
		var s, a bool
		switch {
		case len(elifs) > 0:
			s, a = g.ifChain(g.val(elifs[0].Cond, in), elifs[0].Then, elifs[1:], elseQ, in, t)
		case elseQ != nil:
			s, a = g.assignVal(elseQ, in, t)
		default:
			g.line("%s = %s", t, in)
		}
		str, arr = str && s, arr && a
	})
	return str, arr
}

// assignVal assigns the value of q, which has one output, to t, and
// reports whether it is a string and whether an array this accessor
// built. A branch that is an if itself assigns t in its own branches,
// rather than in a local of its own that t is then assigned.
func (g *gen) assignVal(q *gojq.Query, in, t string) (str, arr bool) {
	x := ifOf(q)
	switch {
	case x == nil:
		v := g.val(q, in)
		g.line("%s = %s", t, v.expr)
		return v.str, v.arr
	case thenOnly(x):
		g.line("%s = %s", t, in)
		g.assignThen(x, in, t)
		return false, false
	}
	return g.ifChain(g.val(x.Cond, in), x.Then, x.Elif, x.Else, in, t)
}

// thenOnly reports whether x is `if c then f else . end` (or without
// else): its value is the input unless c holds.
func thenOnly(x *gojq.If) bool {
	return len(x.Elif) == 0 && (x.Else == nil || isIdentity(x.Else))
}

// assignThen writes the branch of x, a thenOnly if on in, into t, which
// holds in already: t is assigned f's value when c holds.
func (g *gen) assignThen(x *gojq.If, in, t string) {
	c := g.val(x.Cond, in)
	g.branch(g.truthy(c), func() { g.line("%s = %s", t, g.val(x.Then, in).expr) }, nil)
}

// ifOf is the if that q is, in parentheses or not, else nil.
func ifOf(q *gojq.Query) *gojq.If {
	if q.Term == nil || len(q.Term.SuffixList) > 0 || len(q.Patterns) > 0 || len(q.FuncDefs) > 0 {
		return nil
	}
	switch q.Term.Type {
	case gojq.TermTypeIf:
		return q.Term.If
	case gojq.TermTypeQuery:
		return ifOf(q.Term.Query)
	}
	return nil
}

// isIdentity reports whether q is `.`.
func isIdentity(q *gojq.Query) bool {
	return q.Term != nil && q.Term.Type == gojq.TermTypeIdentity && len(q.Term.SuffixList) == 0 &&
		q.Left == nil && q.Right == nil && len(q.Patterns) == 0 && len(q.FuncDefs) == 0
}

// isConstant reports whether q computes one value from literals alone:
// literals combined by operators, with no input, function or stream.
func isConstant(q *gojq.Query) bool {
	if q.Term != nil {
		return isConstantTerm(q.Term)
	}
	switch q.Op {
	case gojq.OpComma, gojq.OpPipe:
		return false
	}
	return isConstant(q.Left) && isConstant(q.Right)
}

func isConstantTerm(t *gojq.Term) bool {
	if len(t.SuffixList) > 0 {
		return false
	}
	switch t.Type {
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
		return true
	case gojq.TermTypeString:
		return t.Str.Queries == nil
	case gojq.TermTypeUnary:
		return isConstantTerm(t.Unary.Term)
	case gojq.TermTypeQuery:
		return isConstant(t.Query)
	}
	return false
}

// fold evaluates a constant operation with gojq at translation time, so
// that its value is gojq's to the bit (`0.0 * -1` is -0, which Lua's int
// rules would make 0) and the Lua reads `8` for `2 * 4`. Operations that
// fail stay in the code, to fail when evaluated.
// The budget of folding one constant.
const (
	foldSteps  = 10000
	foldMemory = 64 << 10
)

func fold(q *gojq.Query) (value, bool) {
	if q.Term != nil && q.Term.Type != gojq.TermTypeUnary && q.Term.Type != gojq.TermTypeQuery || !isConstant(q) {
		return value{}, false
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return value{}, false
	}
	// A constant can be expensive too (`"x" * 1e9`): folding runs under a
	// small budget, and what does not fit is left to run, under the
	// call's limits, when evaluated.
	iter := code.RunWithContext(gojq.NewBudget(context.Background(), foldSteps, foldMemory), nil)
	v, ok := iter.Next()
	if _, isErr := v.(error); !ok || isErr {
		return value{}, false
	}
	if _, more := iter.Next(); more {
		return value{}, false
	}
	switch x := v.(type) {
	case nil:
		return value{expr: "NULL", atom: true, lit: true}, true
	case bool:
		return value{expr: strconv.FormatBool(x), atom: true, lit: true, boolean: true}, true
	case string:
		return stringLit(x), true
	}
	f, isNum := luaapi.GoNumber(v)
	if !isNum || f == math.Trunc(f) && math.Abs(f) > luaapi.MaxExactInt && !isFloat(v) {
		return value{}, false
	}
	return value{expr: luaNumber(f), atom: true, lit: true}, true
}

func isFloat(v any) bool {
	_, ok := v.(float64)
	return ok
}
