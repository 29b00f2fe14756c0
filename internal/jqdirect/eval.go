package jqdirect

import (
	"math"
	"sync"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/luaapi"
)

// The nodes of direct evaluation (direct.go). Values in flight are the
// object's own Go values (numbers of any Go type a decoder produces) plus
// float64 results and []any arrays the expression builds, whose elements
// are already converted as outValue converts them.

// dctx is one evaluation's Scratch: buffers for intermediate outputs,
// reused across evaluations through dctxPool so that a pipe costs no
// allocation.
type dctx struct {
	bufs [][]any
	top  int // buffers in use: bufs[:top]
	// steps counts the call's elements iterated and pairs combined, so
	// that an expression whose work explodes on a hostile object (nested
	// iterations, cartesian products) declines to the metered back end,
	// which ends it with the call's limits, instead of running unbounded.
	steps int
	// bytes counts what the call builds and buffers (arrays, objects,
	// strings, the outputs iteration holds): the direct path's memory,
	// which steps do not weigh. The direct path runs outside the call's
	// memory guard: a declined run's bytes are charged to the call before
	// its expression runs on gojq under the guard, and this bound keeps
	// them small (a cartesian product of pairs built ~30 MB before its
	// steps ran out).
	bytes int
	// keys are the boxed path keys of the program Paths evaluates.
	keys map[*pathNode][]any
	// vars are the run's variables: the call's (Scratch.Vars), then the
	// slots of the expression's own bindings (Program.env) in env.
	vars []any
	env  []any
}

// directStepBudget is the work one call may do in direct evaluation; a
// real object takes hundreds of steps.
const directStepBudget = 1 << 20

// step charges n steps and reports whether the budget holds.
func (c *dctx) step(n int) bool {
	c.steps += n
	return c.steps <= directStepBudget
}

// directByteBudget is what one call may build and buffer in direct
// evaluation: a real object's views take kilobytes. Past it the call
// declines, and the Lua path charges the work to the memory guard.
const directByteBudget = 4 << 20

// The sizes alloc charges, as the Go runtime lays the values out on a
// 64-bit machine: an interface slot, a slice's header boxed in an
// interface, a map's header and one entry of string key and any value
// with its share of the buckets.
const (
	slotBytes     = 16
	sliceBytes    = 24
	mapBytes      = 48
	mapEntryBytes = 64
)

// alloc charges n bytes and reports whether the budget holds.
func (c *dctx) alloc(n int) bool {
	c.bytes += n
	return c.bytes <= directByteBudget
}

// arrayBytes is what a new array of n values costs.
func arrayBytes(n int) int { return sliceBytes + slotBytes*n }

// objectBytes is what a new object of n members costs.
func objectBytes(n int) int { return mapBytes + mapEntryBytes*n }

var dctxPool = sync.Pool{New: func() any { return &dctx{} }}

// buf takes the next buffer of the stack. Buffers are taken and freed in
// LIFO order (each node frees what it took before returning), so the
// stack's slots are reused without writing slice headers back.
func (c *dctx) buf() []any {
	if c.top == len(c.bufs) {
		c.bufs = append(c.bufs, make([]any, 0, 8))
	}
	b := c.bufs[c.top][:0]
	c.top++
	return b
}

// free gives the top buffer back, cleared so that the pool keeps no object
// alive. b is that buffer, perhaps grown by append: the grown one is kept,
// up to maxKeptBuf slots (a declined evaluation may have grown it to
// millions, which the rest of the call, its exact evaluation included,
// must not carry).
func (c *dctx) free(b []any) {
	clear(b)
	c.top--
	if cap(b) > cap(c.bufs[c.top]) && cap(b) <= maxKeptBuf {
		c.bufs[c.top] = b[:0]
	}
}

// maxKeptBuf is the most slots a context keeps in a buffer between runs.
const maxKeptBuf = 4096

// Scratch is one call's Scratch: the buffers of intermediate outputs
// (taken from dctxPool on first use, given back by Release) and the arena
// that the call's outputs are appended to, so that its evaluations cost one
// allocation between them. Arena slices stay valid after Release: the
// arena is never reused.
type Scratch struct {
	c     *dctx
	arena []any
	// Size is the first arena's capacity (16 when 0).
	Size int
	// Vars are the values of the variables the call's programs were
	// compiled with (Compile's vars), in that order: the values every
	// other back end binds for the call. A variable past the end is null.
	Vars []any
	// Share lets the programs compiled with CompileShared evaluate their
	// prefix once per object until Release (shared.go): the caller
	// promises that an object it runs them on does not change meanwhile.
	Share  bool
	shared []sharedOut
}

func (s *Scratch) ctx() *dctx {
	if s.c == nil {
		s.c = dctxPool.Get().(*dctx)
		s.c.steps, s.c.bytes, s.c.top = 0, 0, 0
	}
	s.c.vars = s.Vars
	return s.c
}

// Spent is the work the call's runs have done so far, in the units of
// its budgets (steps: elements iterated and pairs combined; bytes: what
// they built and buffered): what a run that declined spent is the
// difference across it.
func (s *Scratch) Spent() (steps, bytes int) {
	if s.c == nil {
		return 0, 0
	}
	return s.c.steps, s.c.bytes
}

// Release gives the buffers back; the Scratch may be used again after.
func (s *Scratch) Release() {
	clear(s.shared)
	s.shared = s.shared[:0]
	if s.c != nil {
		s.c.vars = nil // the pool keeps no object alive
		dctxPool.Put(s.c)
		s.c = nil
	}
}

// Reuse is an empty Scratch for another call that keeps the room of s's
// shared-prefix table (Release cleared it) but not s's arena, which the
// released call's outputs alias: a pooled caller keeps the table's
// allocation from call to call.
func (s *Scratch) Reuse() Scratch {
	clear(s.shared)
	return Scratch{shared: s.shared[:0]}
}

// run evaluates the program on in and returns its outputs converted as the
// Lua path converts them; ok false declines. Like the Lua accessors, it
// allows at most jqlua.OutputLimit outputs (one more declines, and the Lua path
// reports the error). The outputs live in s's arena; the returned slice is
// capped, so appending to it copies.
func (p *Program) Run(in any, s *Scratch) ([]any, bool) {
	if p.path != nil {
		// A plain path (.a.b["c"], no iteration): no buffers at all.
		v, found, ok := p.path.one(in)
		if !ok {
			return nil, false
		}
		if !found {
			return nil, true
		}
		o, ok := outValue(v)
		if !ok {
			return nil, false
		}
		return s.keep(o), true
	}
	if p.pre != nil && s.Share {
		if m, ok := in.(map[string]any); ok {
			return p.runShared(m, s)
		}
	}
	// The runs with a context are functions of their own: with their
	// returns here, Run had too many returns for its defers to be
	// open-coded (the compiler's bound is 15 returns × defers), and every
	// evaluation paid the runtime's deferred calls (a Milvus GetPodSpecs
	// makes 73).
	if p.one {
		return p.runOne(in, s)
	}
	return p.runAll(in, s)
}

// runOne is Run of a program that gives at most one output (eval1).
func (p *Program) runOne(in any, s *Scratch) ([]any, bool) {
	c := p.enter(s)
	defer p.leave(c)
	v, has, ok := one(c, p.root, in)
	if !ok {
		return nil, false
	}
	if !has {
		return nil, true
	}
	if v, ok = outValue(v); !ok {
		return nil, false
	}
	return s.keep(v), true
}

// runAll is Run of any other program, on the general form.
func (p *Program) runAll(in any, s *Scratch) ([]any, bool) {
	c := p.enter(s)
	defer p.leave(c)
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := p.root.eval(c, in, tmp)
	if !ok || len(tmp) > jqlua.OutputLimit {
		return nil, false
	}
	return s.output(tmp)
}

// output appends a run's outputs to the arena, converted as outValue
// converts them, and returns them; ok false declines.
func (s *Scratch) output(tmp []any) ([]any, bool) {
	if len(tmp) == 0 {
		return nil, true
	}
	s.arena = s.grow(len(tmp))
	start := len(s.arena)
	for _, v := range tmp {
		o, ok := outValue(v)
		if !ok {
			s.arena = s.arena[:start]
			return nil, false
		}
		s.arena = append(s.arena, o)
	}
	return s.arena[start:len(s.arena):len(s.arena)], true
}

// enter takes s's context for a run of p: with the expression's own
// bindings, an environment of the call's variables (padded to the ones p
// was compiled with) and a slot per binding.
func (p *Program) enter(s *Scratch) *dctx {
	c := s.ctx()
	if p.locals == 0 {
		return c
	}
	n := p.nvars + p.locals
	if cap(c.env) < n {
		c.env = make([]any, n)
	}
	c.env = c.env[:n]
	copy(c.env, s.Vars[:min(len(s.Vars), p.nvars)])
	c.vars = c.env
	return c
}

// leave ends a run: the environment is cleared, so that a pooled context
// keeps no value alive.
func (p *Program) leave(c *dctx) {
	if p.locals > 0 {
		clear(c.env)
		c.vars = nil
	}
}

// grow makes room for n more outputs in the arena. A full arena is not
// copied (slices of it may be held): a new one starts, of s.Size (16
// when unset) or more.
func (s *Scratch) grow(n int) []any {
	if cap(s.arena)-len(s.arena) >= n {
		return s.arena
	}
	size := s.Size
	if size <= 0 {
		size = 16
	}
	return make([]any, 0, max(size, 2*cap(s.arena), n))
}

// keep appends one output to the arena and returns it as a slice.
func (s *Scratch) keep(v any) []any {
	s.arena = s.grow(1)
	s.arena = append(s.arena, v)
	n := len(s.arena)
	return s.arena[n-1 : n : n]
}

// outValue converts a value in flight as FromLua converts what the Lua
// path returns: integral numbers within ±2^53 become int64 and other
// finite numbers float64; maps and slices are returned as they are (the
// Lua path hands back the very value a view wraps). Anything that is not
// a JSON value declines.
func outValue(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string, map[string]any, []any:
		return v, true
	case int64:
		if x >= -maxExactFloat && x <= maxExactFloat {
			return v, true
		}
	}
	f, ok := luaapi.GoNumber(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	if f == math.Trunc(f) && math.Abs(f) <= maxExactFloat {
		return int64(f), true
	}
	return f, true
}

// dnumber returns v as the float64 the generated Lua holds for it.
func dnumber(v any) (float64, bool) {
	switch v.(type) {
	case nil, bool, string, map[string]any, []any:
		return 0, false
	}
	f, ok := luaapi.GoNumber(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func truthy(v any) bool { return v != nil && v != false }

// smallFloats holds 0…255 as boxed float64s: counts and small arithmetic
// results are the common numbers in flight, and boxing them afresh was an
// allocation each.
var smallFloats = func() (t [256]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// boxFloat returns f as an any, without allocating for 0…255.
func boxFloat(f float64) any {
	if f >= 0 && f < float64(len(smallFloats)) && f == math.Trunc(f) && !math.Signbit(f) {
		return smallFloats[int(f)]
	}
	return f
}

type identityNode struct{}

func (identityNode) eval(_ *dctx, in any, out []any) ([]any, bool) { return append(out, in), true }

type emptyNode struct{}

func (emptyNode) eval(_ *dctx, _ any, out []any) ([]any, bool) { return out, true }

type emptyObjectNode struct{}

func (emptyObjectNode) eval(_ *dctx, _ any, out []any) ([]any, bool) {
	return append(out, map[string]any{}), true
}

type literalNode struct{ v any }

func (n *literalNode) eval(_ *dctx, _ any, out []any) ([]any, bool) { return append(out, n.v), true }

// varNode is $name: the value the call binds to the variable in slot
// (Scratch.Vars), null when it binds fewer — as gojq pads them. The
// value is the binder's own, in flight like the object's values.
type varNode struct{ slot int }

func (n varNode) eval(c *dctx, _ any, out []any) ([]any, bool) {
	var v any
	if n.slot < len(c.vars) {
		v = c.vars[n.slot]
	}
	return append(out, v), true
}

// bindNode is `src as $x | body`: body on the input once per output of
// src, with $x (slot) bound to it. Evaluation is eager (body's outputs are
// all appended before the next binding), so one slot serves every
// binding in turn; the value before is restored after.
type bindNode struct {
	src  dnode
	slot int
	body dnode
}

func (n *bindNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.src.eval(c, in, tmp)
	if !ok || !c.step(len(tmp)) || !c.alloc(slotBytes*len(tmp)) {
		return out, false
	}
	old := c.vars[n.slot]
	defer func() { c.vars[n.slot] = old }()
	for _, v := range tmp {
		c.vars[n.slot] = v
		if out, ok = n.body.eval(c, in, out); !ok {
			return out, false
		}
	}
	return out, true
}

// pathStep is one index (.key, .[n]) or iteration (.[]) step; opt marks a
// step followed by `?`, whose error is no output instead.
type pathStep struct {
	key     string
	index   int
	isIndex bool
	iter    bool
	opt     bool
}

// pathNode applies steps to each output of base (the input itself when
// base is nil).
type pathNode struct {
	base  dnode
	steps []pathStep
	// single: no step iterates, so each input gives at most one output.
	single bool
}

func newPathNode(base dnode, steps []pathStep) *pathNode {
	n := &pathNode{base: base, steps: steps, single: true}
	for _, s := range steps {
		if s.iter {
			n.single = false
		}
	}
	return n
}

func (n *pathNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	if n.base == nil {
		return n.walk(c, in, 0, out)
	}
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.base.eval(c, in, tmp)
	if !ok {
		return out, false
	}
	for _, v := range tmp {
		if out, ok = n.walk(c, v, 0, out); !ok {
			return out, false
		}
	}
	return out, true
}

// walk applies steps[i:] to v.
func (n *pathNode) walk(c *dctx, v any, i int, out []any) ([]any, bool) {
	for ; i < len(n.steps); i++ {
		s := &n.steps[i]
		if s.iter {
			return n.iterate(c, v, i, out)
		}
		next, ok := index(v, s)
		if !ok {
			// A `?` step that fails on a JSON value has no output; any
			// other failure is jq's error, which the Lua path reports.
			return out, s.opt && optFails(v, s)
		}
		v = next
	}
	return append(out, v), true
}

// one applies the steps of a single-output path without a base to v:
// found is false when a `?` step failed (no output), ok false declines.
func (n *pathNode) one(v any) (res any, found, ok bool) {
	for i := range n.steps {
		s := &n.steps[i]
		next, ok := index(v, s)
		if !ok {
			if s.opt && optFails(v, s) {
				return nil, false, true
			}
			return nil, false, false
		}
		v = next
	}
	return v, true, true
}

// iterate is .[] (steps[i]) on v, then the rest of the steps on each
// element: arrays in order, objects by sorted key, as jq does.
func (n *pathNode) iterate(c *dctx, v any, i int, out []any) ([]any, bool) {
	ok := true
	switch x := v.(type) {
	case []any:
		// Each element is an output held in a buffer until its consumer
		// is done: charged as one slot.
		if !c.step(len(x)) || !c.alloc(slotBytes*len(x)) {
			return out, false
		}
		for _, e := range x {
			if out, ok = n.walk(c, e, i+1, out); !ok {
				return out, false
			}
		}
		return out, true
	case map[string]any:
		if !c.step(len(x)) || !c.alloc(slotBytes*len(x)) {
			return out, false
		}
		for _, k := range sortedKeys(x) {
			if out, ok = n.walk(c, x[k], i+1, out); !ok {
				return out, false
			}
		}
		return out, true
	}
	// Iterating null or a scalar is an error, or no output with `?`.
	return out, n.steps[i].opt && isJSONScalar(v)
}

// optFails reports that step s fails on v in gojq, so that with `?` it
// has no output: v is a JSON value, and not a string indexed by a number
// (which gojq indexes by code point, and which declines here).
func optFails(v any, s *pathStep) bool {
	if _, isStr := v.(string); isStr && s.isIndex {
		return false
	}
	return isJSONValue(v)
}

// isJSONValue reports a JSON value at the top: a scalar, an array or an
// object.
func isJSONValue(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return isJSONScalar(v)
}

// isJSONScalar reports null, a boolean, a number or a string: values whose
// error under `?` is known to be no output. Anything else declines.
func isJSONScalar(v any) bool {
	switch v.(type) {
	case nil, bool, string:
		return true
	}
	_, ok := dnumber(v)
	return ok
}

// index is one .key or .[n] step; ok false is jq's error (indexing a
// value of the wrong type).
func index(v any, s *pathStep) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case *record:
		// Only constant keys of a record are read (keyedOnly).
		return x.get(s.key), !s.isIndex
	case map[string]any:
		if s.isIndex {
			return nil, false
		}
		return x[s.key], true
	case []any:
		if !s.isIndex {
			return nil, false
		}
		i := s.index
		if i < 0 {
			i += len(x)
		}
		if i < 0 || i >= len(x) {
			return nil, true
		}
		return x[i], true
	}
	return nil, false
}

// pipeNode is l | r; lOne: l is single (one.go), and r runs on its output
// without a buffer.
type pipeNode struct {
	l, r dnode
	lOne bool
}

func (n *pipeNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	if n.lOne {
		v, has, ok := one(c, n.l, in)
		if !ok || !stepOne(c, has) || !has {
			return out, ok
		}
		return n.r.eval(c, v, out)
	}
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.l.eval(c, in, tmp)
	if !ok || !c.step(len(tmp)) {
		return out, false
	}
	for _, v := range tmp {
		if out, ok = n.r.eval(c, v, out); !ok {
			return out, false
		}
	}
	return out, true
}

type commaNode struct{ l, r dnode }

func (n *commaNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	out, ok := n.l.eval(c, in, out)
	if !ok {
		return out, false
	}
	return n.r.eval(c, in, out)
}

// altNode is l // r: the truthy outputs of l, or else the outputs of r.
type altNode struct{ l, r dnode }

func (n *altNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.l.eval(c, in, tmp)
	if !ok {
		return out, false
	}
	found := false
	for _, v := range tmp {
		if truthy(v) {
			out, found = append(out, v), true
		}
	}
	if found {
		return out, true
	}
	return n.r.eval(c, in, out)
}

// logicNode is l and r, l or r, as gojq compiles them: for each output of
// l, a decided result or each output of r as a boolean.
type logicNode struct {
	l, r dnode
	and  bool
}

func (n *logicNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.l.eval(c, in, tmp)
	if !ok || !c.step(len(tmp)) {
		return out, false
	}
	for _, v := range tmp {
		if truthy(v) != n.and {
			// false and …, true or …
			out = append(out, !n.and)
			continue
		}
		rs := c.buf()
		rs, ok = n.r.eval(c, in, rs)
		for _, r := range rs {
			out = append(out, truthy(r))
		}
		c.free(rs)
		if !ok {
			return out, false
		}
	}
	return out, true
}

type ifNode struct {
	conds, thens []dnode
	els          dnode // nil: identity
}

func (n *ifNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	return n.branch(c, 0, in, out)
}

func (n *ifNode) branch(c *dctx, i int, in any, out []any) ([]any, bool) {
	if i == len(n.conds) {
		if n.els == nil {
			return append(out, in), true
		}
		return n.els.eval(c, in, out)
	}
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.conds[i].eval(c, in, tmp)
	if !ok || !c.step(len(tmp)) {
		return out, false
	}
	for _, v := range tmp {
		if truthy(v) {
			out, ok = n.thens[i].eval(c, in, out)
		} else {
			out, ok = n.branch(c, i+1, in, out)
		}
		if !ok {
			return out, false
		}
	}
	return out, true
}

type negNode struct{ x dnode }

func (n *negNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.x.eval(c, in, tmp)
	if !ok {
		return out, false
	}
	for _, v := range tmp {
		f, ok := dnumber(v)
		if !ok {
			return out, false
		}
		out = append(out, -f)
	}
	return out, true
}

// arrayNode is [q]: the outputs of q, converted as outValue converts them
// (the Lua path builds a table of Lua values, which FromLua converts).
type arrayNode struct{ q dnode }

func (n *arrayNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	if n.q == nil {
		return append(out, []any{}), true
	}
	arr, ok := gatherArray(c, n.q, in, true)
	if !ok {
		return out, false
	}
	return append(out, arr), true
}

// gatherArray is [q] on in: q's outputs gathered, the array's bytes
// charged, each output checked to be a value an array may hold; with
// build the array, else nil (presentArray checks without building).
func gatherArray(c *dctx, q dnode, in any, build bool) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := q.eval(c, in, tmp)
	if !ok || len(tmp) > jqlua.OutputLimit || !c.alloc(arrayBytes(len(tmp))) {
		return nil, false
	}
	var arr []any
	if build {
		arr = make([]any, len(tmp))
	}
	for i, v := range tmp {
		o, ok := outValue(v)
		if !ok {
			return nil, false
		}
		if build {
			arr[i] = o
		}
	}
	return arr, true
}

// selectNode is select(f); fOne: f is single (one.go).
type selectNode struct {
	f    dnode
	fOne bool
}

func (n *selectNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	if n.fOne {
		v, has, ok := n.eval1(c, in)
		if has {
			out = append(out, v)
		}
		return out, ok
	}
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.f.eval(c, in, tmp)
	if !ok {
		return out, false
	}
	for _, v := range tmp {
		if truthy(v) {
			out = append(out, in)
		}
	}
	return out, true
}

// firstNode is first(f). f is evaluated an operand of its top commas at a
// time (alts, left to right), up to the first that gives an output: jq's
// first never evaluates f past its first output, so the operands after it
// can neither add an output nor fail (KServe's model server is `first(.model
// | select(. != null)), (.[]? | …), .model)`: the model, without walking
// the predictor's members). Within an operand the evaluation is whole: an
// error after its first output, which jq never reaches, only declines.
type firstNode struct {
	f    dnode
	alts []dnode // f's operands, split at its top commas
}

func newFirst(f dnode) *firstNode {
	n := &firstNode{f: f}
	var split func(d dnode)
	split = func(d dnode) {
		if c, ok := d.(*commaNode); ok {
			split(c.l)
			split(c.r)
			return
		}
		n.alts = append(n.alts, d)
	}
	split(f)
	return n
}

func (n *firstNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	for _, f := range n.alts {
		var ok bool
		if tmp, ok = f.eval(c, in, tmp); !ok {
			return out, false
		}
		if len(tmp) > 0 {
			return append(out, tmp[0]), true
		}
	}
	return out, true
}

// hasNode is has(k) for an object and a string key, or an array and a
// number.
type hasNode struct{ k dnode }

func (n *hasNode) eval(c *dctx, in any, out []any) ([]any, bool) {
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	tmp, ok := n.k.eval(c, in, tmp)
	if !ok {
		return out, false
	}
	for _, k := range tmp {
		switch x := in.(type) {
		case map[string]any:
			s, ok := k.(string)
			if !ok {
				return out, false
			}
			_, has := x[s]
			out = append(out, has)
		case []any:
			f, ok := dnumber(k)
			if !ok {
				return out, false
			}
			out = append(out, f >= 0 && f < float64(len(x)))
		default:
			return out, false
		}
	}
	return out, true
}
