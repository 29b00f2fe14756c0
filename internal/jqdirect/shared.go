package jqdirect

import (
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/third_party/gojq"
)

// Shared prefixes. A Karta's expressions for one component often begin
// with the same pipe segments: AppWrapper's instance ids, templates and
// replicas each derive every component's podSets (`{r: ., i: …} | {c: …,
// p: …} | {…, s: …} | …`) before they differ; Milvus' paths each begin
// with the component's `select(.spec.mode == "cluster")`. A program
// compiled with CompileShared evaluates that prefix once per Scratch and
// input object (Scratch.Share), keyed by the prefix's text and the
// variables it reads, and runs the rest of its chain on the prefix's
// outputs: `s1 | … | sk | rest` is rest on each output of `s1 | … | sk`,
// and the prefix, pure, gives the same outputs on the same object and
// variables. Paths (path mode) and a Scratch without Share run the whole
// expression as Compile compiles it.

// Segment is one segment of a query's pipe chain (Segments).
type Segment struct {
	// Text is the segment's jq text.
	Text string
	// Inner says that the segment and the next are keys of one path
	// (`.spec` in `.spec.components`): a prefix cut after it cuts the
	// path, and saves the walk to it only.
	Inner bool
}

// Segments are q's pipe chain from the left (q is s1 | … | sn), a path of
// plain keys one segment per key (`.spec.components.proxy` is `.spec`,
// `.components`, `.proxy`), so that programs that read below the same
// place can share the walk to it (Milvus' fragments and scale paths each
// walk `select(…) | .spec.components.proxy`); a query that binds or
// defines at its top is one segment.
func Segments(q *gojq.Query) []Segment {
	segs := chainOf(q)
	out := make([]Segment, len(segs))
	for i, sg := range segs {
		out[i] = Segment{Text: sg.text(), Inner: sg.inner}
	}
	return out
}

// segment is one segment of a chain: a query, or one key of a plain path
// (key != "", q nil: a Kartas' compilation splits every program's paths,
// and a query per key cost three allocations each).
type segment struct {
	q     *gojq.Query
	key   string
	inner bool // the next segment is a key of the same path
}

// text is the segment's jq text, as gojq prints it (`.key` for a key).
func (sg segment) text() string {
	if sg.key != "" {
		return "." + sg.key
	}
	return sg.q.String()
}

// chainOf is q's chain as Segments describes it.
func chainOf(q *gojq.Query) []segment {
	var out []segment
	for chainLink(q) {
		out = appendSegment(out, q.Left)
		q = q.Right
	}
	return appendSegment(out, q)
}

// appendSegment appends q, a plain path a segment per key: in value mode
// `.a.b` is `.a | .b`, the same outputs and the same failures.
func appendSegment(out []segment, q *gojq.Query) []segment {
	keys := plainKeyPath(q)
	if keys == nil {
		return append(out, segment{q: q})
	}
	for i, k := range keys {
		out = append(out, segment{key: k, inner: i < len(keys)-1})
	}
	return out
}

// plainKeyPath is the keys of q when it is a path of plain keys (`.a.b`,
// nothing optional, iterated, computed or quoted), else nil.
func plainKeyPath(q *gojq.Query) []string {
	if q == nil || q.Term == nil || q.Left != nil || q.Right != nil || len(q.Patterns) > 0 ||
		len(q.FuncDefs) > 0 || q.Meta != nil || len(q.Imports) > 0 {
		return nil
	}
	t := q.Term
	if t.Type != gojq.TermTypeIndex || !plainKey(t.Index) {
		return nil
	}
	keys := []string{t.Index.Name}
	for _, sf := range t.SuffixList {
		if sf.Iter || sf.Optional || !plainKey(sf.Index) {
			return nil
		}
		keys = append(keys, sf.Index.Name)
	}
	return keys
}

func plainKey(x *gojq.Index) bool {
	return x != nil && x.Name != "" && x.Str == nil && x.Start == nil && x.End == nil && !x.IsSlice
}

// joinSegments is the query of a run of segments, each run of keys one
// path again (`.spec.components.proxy`), so that a plain path compiles
// as one.
func joinSegments(segs []segment) *gojq.Query {
	var parts []*gojq.Query
	for i := 0; i < len(segs); {
		if segs[i].key == "" {
			parts = append(parts, segs[i].q)
			i++
			continue
		}
		t := &gojq.Term{Type: gojq.TermTypeIndex, Index: &gojq.Index{Name: segs[i].key}}
		for i++; i < len(segs) && segs[i].key != ""; i++ {
			t.SuffixList = append(t.SuffixList, &gojq.Suffix{Index: &gojq.Index{Name: segs[i].key}})
		}
		parts = append(parts, &gojq.Query{Term: t})
	}
	q := parts[len(parts)-1]
	for i := len(parts) - 2; i >= 0; i-- {
		q = &gojq.Query{Left: parts[i], Op: gojq.OpPipe, Right: q}
	}
	return q
}

// chainLink reports that q is `l | r` with nothing bound or defined over
// it.
func chainLink(q *gojq.Query) bool {
	return q != nil && q.Op == gojq.OpPipe && len(q.Patterns) == 0 && len(q.FuncDefs) == 0 &&
		q.Meta == nil && len(q.Imports) == 0 && q.Left != nil && q.Right != nil
}

// prefixIDs interns prefixes: the variables and the segments' texts.
var prefixIDs sync.Map // string → int
var prefixCount struct {
	sync.Mutex
	n int
}

func prefixID(key string) int {
	if id, ok := prefixIDs.Load(key); ok {
		return id.(int)
	}
	prefixCount.Lock()
	defer prefixCount.Unlock()
	if id, ok := prefixIDs.Load(key); ok {
		return id.(int)
	}
	prefixCount.n++
	prefixIDs.Store(key, prefixCount.n)
	return prefixCount.n
}

// CompileShared is Compile, with the first k segments of q's chain (k ≥ 1
// and fewer than its segments) also compiled as a prefix the programs of
// one Scratch share. Any other k is Compile.
func CompileShared(q *gojq.Query, k int, vars ...string) *Program {
	return Compile(q, vars...).Share(q, k, vars...)
}

// Share is CompileShared for p, which Compile made of q with vars: p
// itself, split, without compiling q again (a Karta's compilation shares
// the prefixes of programs it has compiled already). Nil stays nil.
func (p *Program) Share(q *gojq.Query, k int, vars ...string) *Program {
	if p == nil || k < 1 {
		return p
	}
	chain := chainOf(q)
	if k >= len(chain) {
		return p
	}
	pre, rest := joinSegments(chain[:k]), joinSegments(chain[k:])
	cpPre, cpRest := compiler{vars: vars}, compiler{vars: vars}
	preNode, restNode := cpPre.query(pre), cpRest.query(rest)
	if preNode == nil || restNode == nil {
		return p
	}
	if pn, ok := preNode.(*pathNode); ok && pn.single && pn.base == nil {
		// A plain path is cheaper to read again than to look up.
		return p
	}
	p.pre, p.rest = preNode, restNode
	if pn, ok := restNode.(*pathNode); ok && pn.single && pn.base == nil {
		p.restPath = pn
	} else {
		p.restOne = isSingle(restNode)
	}
	texts := make([]string, k)
	for i, sg := range chain[:k] {
		texts[i] = sg.text()
	}
	p.preID = prefixID(strings.Join(vars, ",") + "\x00" + strings.Join(texts, "\x00") + recordPrefix(preNode, restNode))
	// The prefix and the rest never run at once: their bindings share
	// the slots after the caller's variables.
	p.locals = max(p.locals, cpPre.slots, cpRest.slots)
	return p
}

// SharesPrefix reports that p was split after a shared prefix.
func (p *Program) SharesPrefix() bool { return p.pre != nil }

// maxShared is the most prefix outputs a Scratch keeps; past it, it
// starts again (a cache: an entry is only ever evaluated again).
const maxShared = 64

// sharedOut is a prefix's outputs on one object in a Scratch.
type sharedOut struct {
	id   int
	in   unsafe.Pointer
	outs []any
	ok   bool
}

// runShared is Run through the shared prefix: its outputs from the
// Scratch, or evaluated and kept there, then the rest on each, as the
// pipe between them runs it (a step per prefix output).
func (p *Program) runShared(in map[string]any, s *Scratch) ([]any, bool) {
	c := p.enter(s)
	defer p.leave(c)
	key := reflect.ValueOf(in).UnsafePointer()
	var pre *sharedOut
	// The latest first: a gang's pods each add theirs.
	for i := len(s.shared) - 1; i >= 0; i-- {
		if e := &s.shared[i]; e.id == p.preID && e.in == key {
			pre = e
			break
		}
	}
	if pre == nil {
		if len(s.shared) >= maxShared {
			clear(s.shared)
			s.shared = s.shared[:0]
		}
		tmp := c.buf()
		tmp, ok := p.pre.eval(c, in, tmp)
		ok = ok && c.alloc(arrayBytes(len(tmp))) // the copy kept
		if s.shared == nil {
			// Room for a call's prefixes (a Milvus call keeps about a
			// dozen) at once, rather than grown one by one.
			s.shared = make([]sharedOut, 0, 16)
		}
		// The copy lives in the arena, with the call's outputs: one
		// allocation per call rather than one per prefix.
		s.arena = s.grow(len(tmp))
		start := len(s.arena)
		s.arena = append(s.arena, tmp...)
		outs := s.arena[start:len(s.arena):len(s.arena)]
		s.shared = append(s.shared, sharedOut{id: p.preID, in: key, outs: outs, ok: ok})
		c.free(tmp)
		pre = &s.shared[len(s.shared)-1]
	}
	if !pre.ok || !c.step(len(pre.outs)) {
		return nil, false
	}
	if p.restPath != nil {
		return p.restPath.onEach(pre.outs, s)
	}
	if p.restOne {
		return p.restOnEach(c, pre.outs, s)
	}
	tmp := c.buf()
	defer func() { c.free(tmp) }()
	for _, v := range pre.outs {
		var ok bool
		if tmp, ok = p.rest.eval(c, v, tmp); !ok {
			return nil, false
		}
	}
	if len(tmp) > jqlua.OutputLimit {
		return nil, false
	}
	return s.output(tmp)
}

// onEach is a plain path (no base, no iteration: at most one output per
// input) on each of ins, its outputs appended to the arena as runShared
// appends the rest's: the fragments of a Milvus component, read below
// their shared prefix, without a buffer, a deferred free and the general
// walk per fragment. The outputs and declines are walk's: a step that
// fails declines, a `?` step that fails on a JSON value gives no output.
func (n *pathNode) onEach(ins []any, s *Scratch) ([]any, bool) {
	return s.eachOne(ins, n.one)
}

// eachOne appends one's output on each of ins, if any, to the arena,
// converted as s.output converts a run's, and returns them as output
// returns a run's: a decline of one declines, more than the output limit
// declines, none is no output (nil).
func (s *Scratch) eachOne(ins []any, one func(any) (any, bool, bool)) ([]any, bool) {
	s.arena = s.grow(len(ins))
	start := len(s.arena)
	for _, in := range ins {
		v, has, ok := one(in)
		if ok && has {
			v, ok = outValue(v)
			s.arena = append(s.arena, v)
		}
		if !ok {
			s.arena = s.arena[:start]
			return nil, false
		}
	}
	switch n := len(s.arena) - start; {
	case n > jqlua.OutputLimit:
		s.arena = s.arena[:start]
		return nil, false
	case n == 0:
		return nil, true
	}
	return s.arena[start:len(s.arena):len(s.arena)], true
}
