// Package jqdirect is the direct back end of karta's jq subset: the part
// that Karta paths use — paths, computed indexes and slices, `//`,
// comparisons, `and`/`or`, `if`, `select`, array and object construction,
// string interpolation, arithmetic, the builtins the built-ins use, the
// variables the caller binds (a Karta's references, $name, read from the
// call's Scratch.Vars), `E as $name | …`, reduce and definitions — compiled
// once into a tree of Go nodes that read the object in place, without a Lua
// state, a view or a conversion. The nodes are in eval.go (paths, pipes,
// control), ops.go (operators and jq's order), build.go (construction,
// indexes, slices), funcs.go (builtins) and defs.go (def, reduce).
//
// Package interpreter runs every expression of the Go-side hook algorithms
// (GetPodSpecs, GetGangGroups, PlacePod, ReviseSpec, …) and of
// InterpretStatus that has a direct form on it. Direct evaluation only
// covers the happy path: anything else — a type error, a division by
// zero, a value that is not JSON, too many outputs — declines, and that
// evaluation alone runs again on the expression's gojq program, which
// gives the error (or the value) exactly. A direct result is therefore
// always the result the other back ends give: values are
// converted at the boundary as FromLua converts them (integral numbers
// within ±2^53 become int64, other numbers float64, maps and slices of the
// object are the object's own), and numbers are computed in float64 as the
// generated Lua computes them.
package jqdirect

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Program is one jq expression compiled for direct evaluation.
type Program struct {
	root dnode
	// nvars are the variables the caller binds (Compile's vars), locals
	// the slots after them for the variables the expression binds itself
	// (`E as $x | …`): the environment of a run.
	nvars, locals int
	// one: root gives at most one output (one.go).
	one bool
	// pre and rest are root split after a prefix other programs share,
	// preID the prefix's identity (CompileShared); nil without one.
	pre, rest dnode
	preID     int
	// restPath is rest when it is a plain path (a fragment below its
	// component's shared prefix), which runShared reads without buffers.
	restPath *pathNode
	// restOne: rest gives at most one output per input (one.go), which
	// runShared evaluates through eval1 (shared_one.go).
	restOne bool
	// path is root when it is a plain path (no base, no iteration), which
	// run evaluates without buffers.
	path *pathNode
	// keys are the path nodes' keys boxed once, for Paths (paths.go).
	keys atomic.Pointer[map[*pathNode][]any]
}

// dnode is a compiled jq expression. eval appends the outputs of the
// expression on in to out; ok false declines (see above).
type dnode interface {
	eval(c *dctx, in any, out []any) (res []any, ok bool)
}

// Compile compiles a parsed expression, or returns nil when it is
// outside the direct subset (the expression then always runs on Lua).
// vars are the variables the caller binds when it runs the program
// ("$name", in the order of Scratch.Vars): a Karta's references. A
// variable among them reads its value from the call (varNode), and so
// does one the expression binds with `E as $name | …`, `reduce … as
// $name` or a definition's `$param` (defs.go); any other variable (a
// destructuring pattern, foreach) is outside the subset.
func Compile(q *gojq.Query, vars ...string) *Program {
	cp := compiler{vars: vars}
	n := cp.query(q)
	if n == nil {
		return nil
	}
	p := &Program{root: n, nvars: len(vars), locals: cp.slots, one: isSingle(n)}
	if pn, ok := n.(*pathNode); ok && pn.single && pn.base == nil {
		p.path = pn
	}
	return p
}

// compiler is one compilation: the variables it may read, the caller's
// and those in scope of the expression's own bindings.
type compiler struct {
	vars []string
	// scope is the expression's bindings in scope, innermost last; slots
	// counts them all, each its own slot after the caller's variables.
	scope []binding
	slots int
	// funcs are the definitions and filter parameters in scope, innermost
	// last; inlined counts the definitions being inlined (defs.go).
	funcs   []funcBinding
	inlined int
}

type binding struct {
	name string
	slot int
}

// variable is $name's node, nil when name is not among the bound
// variables (gojq fails to compile it).
func (cp *compiler) variable(name string) dnode {
	for i := len(cp.scope) - 1; i >= 0; i-- {
		if cp.scope[i].name == name {
			return varNode{slot: cp.scope[i].slot}
		}
	}
	for i := len(cp.vars) - 1; i >= 0; i-- {
		// The last of equal names wins, as in gojq's scope.
		if cp.vars[i] == name {
			return varNode{slot: i}
		}
	}
	return nil
}

func (cp *compiler) query(q *gojq.Query) dnode {
	if q == nil || q.Meta != nil || len(q.Imports) > 0 {
		return nil
	}
	if len(q.FuncDefs) > 0 {
		return cp.withDefs(q)
	}
	if len(q.Patterns) > 0 {
		return cp.bind(q)
	}
	if q.Term != nil {
		return cp.term(q.Term)
	}
	l, r := cp.query(q.Left), cp.query(q.Right)
	if l == nil || r == nil {
		return nil
	}
	switch q.Op {
	case gojq.OpPipe:
		if n := subOneCount(l, r); n != nil {
			return n
		}
		if n := arrayIndexInto(l, r); n != nil {
			return n
		}
		if n := arrayInto(l, r); n != nil {
			return n
		}
		if n := newSplitIndex(l, r); n != nil {
			return n
		}
		recordInto(l, r)
		return &pipeNode{l: l, r: r, lOne: isSingle(l)}
	case gojq.OpComma:
		return &commaNode{l, r}
	case gojq.OpAlt:
		return &altNode{l, r}
	case gojq.OpAnd:
		return &logicNode{l: l, r: r, and: true}
	case gojq.OpOr:
		return &logicNode{l: l, r: r}
	case gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod,
		gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpLe, gojq.OpGt, gojq.OpGe:
		if a := newAddLiteral(q.Op, l, r); a != nil {
			return a
		}
		if n := newSubOne(q.Op, l, r); n != nil {
			return n
		}
		l, r = comparedConstant(q.Op, l), comparedConstant(q.Op, r)
		b := &binNode{op: q.Op, l: l, r: r, ones: isSingle(l) && isSingle(r)}
		_, lc := arithChain(l)
		_, rc := arithChain(r)
		b.chain = b.ones && isArith(q.Op) && (lc || rc)
		return b
	}
	return nil
}

// bind compiles `l as $name | r`: r sees $name in a slot of its own. A
// destructuring pattern or ?// alternatives are not in the subset.
func (cp *compiler) bind(q *gojq.Query) dnode {
	if len(q.Patterns) != 1 || q.Op != gojq.OpPipe || q.Patterns[0].Name == "" {
		return nil
	}
	src := cp.query(q.Left)
	if src == nil {
		return nil
	}
	slot := len(cp.vars) + cp.slots
	cp.slots++
	cp.scope = append(cp.scope, binding{name: q.Patterns[0].Name, slot: slot})
	body := cp.query(q.Right)
	cp.scope = cp.scope[:len(cp.scope)-1]
	if body == nil {
		return nil
	}
	return &bindNode{src: src, slot: slot, body: body}
}

// term compiles a term and its suffixes. Index, iteration and `?`
// suffixes become the steps of a pathNode over the base term; a computed
// index or a slice ends the steps so far, which become its base.
func (cp *compiler) term(t *gojq.Term) dnode {
	var base dnode
	var steps []pathStep
	// index appends an index suffix: a step, or a node over the term so
	// far (nil base: the input).
	index := func(x *gojq.Index) bool {
		if s, ok := indexStep(x); ok {
			steps = append(steps, s)
			return true
		}
		b := base
		if len(steps) > 0 {
			b, steps = newPathNode(base, steps), nil
		}
		base = cp.computedIndex(b, x)
		return base != nil
	}
	switch t.Type {
	case gojq.TermTypeIdentity:
	case gojq.TermTypeIndex:
		if !index(t.Index) {
			return nil
		}
	case gojq.TermTypeNull:
		base = &literalNode{nil}
	case gojq.TermTypeTrue:
		base = &literalNode{true}
	case gojq.TermTypeFalse:
		base = &literalNode{false}
	case gojq.TermTypeNumber:
		f, ok := literalNumber(t.Number)
		if !ok {
			return nil
		}
		base = &literalNode{f}
	case gojq.TermTypeString:
		if t.Str == nil {
			return nil
		}
		if t.Str.Queries != nil {
			if base = cp.interpolation(t.Str); base == nil {
				return nil
			}
			break
		}
		base = &literalNode{t.Str.Str}
	case gojq.TermTypeQuery:
		if base = cp.query(t.Query); base == nil {
			return nil
		}
	case gojq.TermTypeArray:
		a := &arrayNode{}
		if t.Array.Query != nil {
			if a.q = cp.query(t.Array.Query); a.q == nil {
				return nil
			}
		}
		base = folded(a)
	case gojq.TermTypeFunc:
		if base = cp.function(t.Func); base == nil {
			return nil
		}
	case gojq.TermTypeUnary:
		if t.Unary.Op != gojq.OpSub {
			return nil
		}
		x := cp.term(t.Unary.Term)
		if x == nil {
			return nil
		}
		base = &negNode{x}
		if l, ok := x.(*literalNode); ok {
			// A negative literal (Milvus' `.replicas == -1`) is its
			// value, not a negation boxed on every evaluation.
			if f, ok := l.v.(float64); ok {
				base = &literalNode{-f}
			}
		}
	case gojq.TermTypeIf:
		if base = cp.ifThen(t.If); base == nil {
			return nil
		}
	case gojq.TermTypeReduce:
		if base = cp.reduce(t.Reduce); base == nil {
			return nil
		}
	case gojq.TermTypeObject:
		if len(t.Object.KeyVals) == 0 {
			// A fresh empty object per evaluation.
			base = emptyObjectNode{}
			break
		}
		if base = cp.object(t.Object); base == nil {
			return nil
		}
		base = folded(base)
	default:
		return nil
	}
	for _, s := range t.SuffixList {
		switch {
		case s.Index != nil:
			if !index(s.Index) {
				return nil
			}
		case s.Iter:
			steps = append(steps, pathStep{iter: true})
		case s.Optional:
			// `?` covers the step just before it (gojq compiles x.a? as
			// x | try .a); a `?` on a whole term other than a path is
			// not in the subset.
			if len(steps) == 0 {
				return nil
			}
			steps[len(steps)-1].opt = true
		default:
			return nil
		}
	}
	if n, rest := newArrayIndex(base, steps); n != nil {
		base, steps = n, rest
	}
	if len(steps) == 0 {
		if base == nil {
			return identityNode{}
		}
		return base
	}
	return newPathNode(base, steps)
}

// indexStep compiles .name, ."name", .["name"] and .[n] (an integer
// literal); other indexes (slices, computed keys) are computedIndex's.
func indexStep(x *gojq.Index) (pathStep, bool) {
	if x.IsSlice {
		return pathStep{}, false
	}
	if x.Name != "" {
		return pathStep{key: x.Name}, true
	}
	if x.Str != nil {
		if x.Str.Queries != nil {
			return pathStep{}, false
		}
		return pathStep{key: x.Str.Str}, true
	}
	if x.Start == nil || x.Start.Term == nil || len(x.Start.Term.SuffixList) > 0 {
		return pathStep{}, false
	}
	t := x.Start.Term
	switch t.Type {
	case gojq.TermTypeString:
		if t.Str.Queries != nil {
			return pathStep{}, false
		}
		return pathStep{key: t.Str.Str}, true
	case gojq.TermTypeNumber:
		n, err := strconv.Atoi(t.Number)
		if err != nil || n > math.MaxInt32 {
			return pathStep{}, false
		}
		return pathStep{isIndex: true, index: n}, true
	case gojq.TermTypeUnary:
		if t.Unary.Op != gojq.OpSub || t.Unary.Term.Type != gojq.TermTypeNumber || len(t.Unary.Term.SuffixList) > 0 {
			return pathStep{}, false
		}
		n, err := strconv.Atoi(t.Unary.Term.Number)
		if err != nil || n > math.MaxInt32 {
			return pathStep{}, false
		}
		return pathStep{isIndex: true, index: -n}, true
	}
	return pathStep{}, false
}

// literalNumber is a number literal as the generated Lua holds it: a
// float64, exact (integers beyond ±2^53 are not in the subset).
func literalNumber(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	if f == math.Trunc(f) && math.Abs(f) > maxExactFloat {
		return 0, false
	}
	return f, true
}

// maxExactFloat is 2^53: integers up to it are exact in a float64.
const maxExactFloat = 1 << 53

func (cp *compiler) ifThen(x *gojq.If) dnode {
	n := &ifNode{}
	cond, then := cp.query(x.Cond), cp.query(x.Then)
	if cond == nil || then == nil {
		return nil
	}
	n.conds, n.thens = append(n.conds, cond), append(n.thens, then)
	for _, e := range x.Elif {
		c, t := cp.query(e.Cond), cp.query(e.Then)
		if c == nil || t == nil {
			return nil
		}
		n.conds, n.thens = append(n.conds, c), append(n.thens, t)
	}
	if x.Else != nil {
		if n.els = cp.query(x.Else); n.els == nil {
			return nil
		}
	}
	return n
}

// computedIndex compiles base[f] and base[f:g] (base nil: the input).
func (cp *compiler) computedIndex(base dnode, x *gojq.Index) dnode {
	if x.IsSlice {
		n := &sliceNode{base: base}
		if x.Start != nil {
			if n.start = cp.query(x.Start); n.start == nil {
				return nil
			}
		}
		if x.End != nil {
			if n.end = cp.query(x.End); n.end == nil {
				return nil
			}
		}
		return n
	}
	n := &indexNode{base: base}
	switch {
	case x.Str != nil:
		n.key = cp.term(&gojq.Term{Type: gojq.TermTypeString, Str: x.Str})
	case x.Start != nil:
		n.key = cp.query(x.Start)
	}
	if n.key == nil {
		return nil
	}
	return n
}

// interpolation compiles "…\(f)…" as gojq does: the parts joined by +,
// each query's outputs through tostring.
func (cp *compiler) interpolation(s *gojq.String) dnode {
	var q *gojq.Query
	for _, e := range s.Queries {
		if e == nil || e.Term == nil {
			return nil
		}
		if e.Term.Str == nil {
			e = &gojq.Query{Left: e, Op: gojq.OpPipe, Right: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "tostring"}}}}
		}
		if q == nil {
			q = e
		} else {
			q = &gojq.Query{Left: q, Op: gojq.OpAdd, Right: e}
		}
	}
	n := cp.query(q)
	if n == nil {
		return nil
	}
	return newInterpolation(n)
}

// object compiles {k: f, "k": f, (f): g, "\(f)": g, k, "k", $x}; a
// format key is not in the subset.
func (cp *compiler) object(o *gojq.Object) dnode {
	n := &objectNode{}
	for _, kv := range o.KeyVals {
		var p objectPair
		switch {
		case kv.Key != "" && kv.Key[0] == '$':
			// {$x} is {x: $x}.
			if kv.Val != nil {
				return nil
			}
			if p.val = cp.variable(kv.Key); p.val == nil {
				return nil
			}
			p.key = kv.Key[1:]
			p.keyAny = p.key
			n.pairs = append(n.pairs, p)
			continue
		case kv.Key != "":
			if kv.Key[0] == '@' {
				return nil
			}
			p.key = kv.Key
		case kv.KeyString != nil && kv.KeyString.Queries == nil:
			p.key = kv.KeyString.Str
		case kv.KeyString != nil:
			if kv.Val == nil {
				return nil
			}
			if p.keyNode = cp.interpolation(kv.KeyString); p.keyNode == nil {
				return nil
			}
		case kv.KeyQuery != nil:
			if p.keyNode = cp.query(kv.KeyQuery); p.keyNode == nil {
				return nil
			}
		default:
			return nil
		}
		if kv.Val == nil {
			// {k} is {k: .k}.
			if p.keyNode != nil {
				return nil
			}
			p.val = newPathNode(nil, []pathStep{{key: p.key}})
		} else if p.val = cp.query(kv.Val); p.val == nil {
			return nil
		}
		if p.keyNode == nil {
			p.keyAny = p.key
		}
		n.pairs = append(n.pairs, p)
	}
	return n
}

// function compiles the builtins of the subset and the bound variables;
// a name with another arity, another variable or any other function is
// not in it.
func (cp *compiler) function(f *gojq.Func) dnode {
	if strings.HasPrefix(f.Name, "$") {
		if len(f.Args) > 0 {
			return nil
		}
		return cp.variable(f.Name)
	}
	// A function the expression defines (or a definition's filter
	// parameter) shadows a builtin of its name and arity.
	if fb := cp.lookupFunc(f.Name, len(f.Args)); fb != nil {
		return cp.call(fb, f.Args)
	}
	args := make([]dnode, len(f.Args))
	for i, a := range f.Args {
		if args[i] = cp.query(a); args[i] == nil {
			return nil
		}
	}
	switch len(args) {
	case 0:
		switch f.Name {
		case "length":
			return funcNode{fn: fnLength, ofArray: lengthOf}
		case "not":
			return funcNode{fn: fnNot}
		case "type":
			return funcNode{fn: fnType}
		case "tostring":
			return funcNode{fn: fnToString}
		case "keys":
			return funcNode{fn: fnKeys}
		case "empty":
			return emptyNode{}
		case "min":
			return funcNode{fn: fnMin, ofArray: minOf}
		case "max":
			return funcNode{fn: fnMax, ofArray: maxOf}
		case "add":
			return funcNode{fn: fnAdd, ofArray: addOf}
		case "any":
			return funcNode{fn: fnAny, ofArray: anyOf}
		case "all":
			return funcNode{fn: fnAll, ofArray: allOf}
		case "first":
			return newPathNode(nil, []pathStep{{isIndex: true}})
		case "tonumber":
			return funcNode{fn: fnToNumber}
		case "ascii_downcase":
			return funcNode{fn: fnASCIIDowncase}
		case "ascii_upcase":
			return funcNode{fn: fnASCIIUpcase}
		case "error":
			return declineNode{}
		case "to_entries":
			return cp.builtinDef(toEntries)
		}
	case 1:
		switch f.Name {
		case "select":
			return &selectNode{f: args[0], fOne: isSingle(args[0])}
		case "first":
			return newFirst(args[0])
		case "has":
			return &hasNode{args[0]}
		case "map":
			return &arrayNode{q: &pipeNode{l: newPathNode(nil, []pathStep{{iter: true}}), r: args[0]}}
		case "any":
			return &anyAllNode{f: args[0], isAny: true}
		case "all":
			return &anyAllNode{f: args[0]}
		case "error":
			return &errorNode{args[0]}
		case "startswith":
			return &func1Node{fn: fnStartsWith, arg: args[0]}
		case "endswith":
			return &func1Node{fn: fnEndsWith, arg: args[0]}
		case "ltrimstr":
			return &func1Node{fn: fnLtrimstr, arg: args[0]}
		case "rtrimstr":
			return &func1Node{fn: fnRtrimstr, arg: args[0]}
		case "split":
			return &func1Node{fn: fnSplit, arg: args[0]}
		case "join":
			return &func1Node{fn: fnJoin, arg: args[0]}
		}
	case 2:
		switch f.Name {
		case "any":
			return &anyAllOfNode{gen: args[0], cond: args[1], isAny: true}
		case "all":
			return &anyAllOfNode{gen: args[0], cond: args[1]}
		}
	}
	return nil
}
