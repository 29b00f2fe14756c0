package luaexport

import (
	"fmt"

	"github.com/kartalua/karta/internal/jqlua"
	"github.com/kartalua/karta/internal/third_party/gojq"
	"github.com/kartalua/karta/interpreter"
)

// Component paths often share all of a pipeline but its last stage: the
// fragments of one component select the same part of the object and
// read different fields of it (.spec | select(.worker == null) |
// .template.containers, ... | .labels), a Karta that derives its
// instances computes them once per path (AppWrapper's instanceIdPath,
// podTemplateSpecPath and replicasPath), and the paths of one component
// read fields of the same object (.spec.components.proxy.image,
// .spec.components.proxy.resources). An export translates such a shared
// prefix P once: the path P | S is the accessor of P piped into the
// accessor of S (a field chain .a.b.c is .a.b | .c), so the chunk carries
// P's code once rather than once per path. A prefix with one output on
// every input (a field chain) is called for its value, with no table.

// split is one way to read a path as prefix | last; fields is the length
// of a field chain's prefix, 0 for a pipeline's.
type split struct {
	p, s   *gojq.Query
	fields int
}

// worth reports whether translating the prefix of sp once, for the paths
// that share it (n), makes a chunk smaller: a pipeline's prefix always is;
// a field chain's saves about a line (fieldRead bytes) per field of the
// prefix in every path but one, and costs the prefix's accessor and a
// piped accessor per path.
func (sp split) worth(n int) bool {
	const fieldRead, accessor, piped = 130, 100, 150
	return sp.fields == 0 || (n-1)*sp.fields*fieldRead > accessor+n*piped
}

// splits lists the ways to read q as P | S, the longest P first: a
// plain pipeline at its last pipe, a chain of constant fields (.a.b.c)
// after each of its fields but the last. A pipeline splits only when it
// binds and defines nothing (a pipe with patterns is `as`; function
// definitions and imports scope the whole query).
func splits(q *gojq.Query) []split {
	if plainPipe(q) {
		stages := []*gojq.Query{q.Left}
		for r := q.Right; ; r = r.Right {
			if !plainPipe(r) {
				stages = append(stages, r)
				break
			}
			stages = append(stages, r.Left)
		}
		last := len(stages) - 1
		p := stages[last-1]
		for i := last - 2; i >= 0; i-- {
			p = &gojq.Query{Left: stages[i], Op: gojq.OpPipe, Right: p}
		}
		return []split{{p: p, s: stages[last]}}
	}
	fields, ok := FieldChain(q)
	if !ok || len(fields) < 2 || len(q.Term.SuffixList) != len(fields)-1 {
		return nil
	}
	t := q.Term
	var out []split
	for k := len(t.SuffixList); k >= 1; k-- {
		p := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIndex, Index: t.Index, SuffixList: t.SuffixList[:k-1]}}
		s := &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIndex, Index: t.SuffixList[k-1].Index}}
		if k < len(t.SuffixList) {
			rest := t.SuffixList[k:]
			s = &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIndex, Index: t.SuffixList[k-1].Index, SuffixList: rest}}
		}
		out = append(out, split{p: p, s: s, fields: k})
	}
	return out
}

// plainPipe reports whether q is a pipe that binds and defines nothing.
func plainPipe(q *gojq.Query) bool {
	return q != nil && q.Op == gojq.OpPipe && len(q.Patterns) == 0 && len(q.FuncDefs) == 0 &&
		len(q.Imports) == 0 && q.Meta == nil && q.Left != nil && q.Right != nil
}

// sharedPrefixes counts, for each prefix a component path of shape splits
// into (splits' P, by its text), the distinct paths that have it: a prefix
// two paths or more share is translated once.
func (e *Exporter) sharedPrefixes(shape *interpreter.Shape) map[string]int {
	counts := map[string]int{}
	seen := map[string]bool{}
	add := func(expr string) {
		if expr == "" || seen[expr] {
			return
		}
		seen[expr] = true
		a, err := e.Analysis(expr)
		if err != nil || a.Query == nil || len(a.Vars) > 0 {
			return
		}
		count(counts, a.Query)
	}
	for _, c := range shape.Components {
		add(c.InstanceIDPath)
		add(c.ReplicasPath)
		for _, sp := range []*interpreter.ShapePath{c.Spec, c.Metadata} {
			if sp != nil {
				add(sp.Expr)
			}
		}
		for _, f := range c.Fragments {
			add(f.Expr)
		}
	}
	return counts
}

// count adds q's prefixes to counts, and those of the last stage of a
// pipeline, which reads each output of the prefix as a path reads the
// object.
func count(counts map[string]int, q *gojq.Query) {
	for _, sp := range splits(q) {
		counts[sp.p.String()]++
		if sp.fields == 0 {
			count(counts, sp.s)
		}
	}
}

// maxPipedComment bounds the jq a piped accessor carries as its comment.
// Its parts carry their jq above their own definitions; a longer path
// (AppWrapper's: the prefix alone is 2 KB) would repeat its prefix's jq
// once more per path that shares it, so its comment is left to the parts
// the definition names.
const maxPipedComment = 100

// pipedRef is a piped accessor: QP[n], and whether it has one output on
// every input (then, called without an output table, it returns it).
type pipedRef struct {
	ref string
	one bool
}

// pipedAccessor is the accessor of a component path whose prefix other
// paths share: QP[n], the shared prefix's accessor (itself piped when it
// has a shared prefix) piped into the rest's; false when the path has no
// shared prefix or a part does not translate on its own (then the whole
// path is translated).
func (e *Exporter) pipedAccessor(expr string) (string, bool) {
	a, err := e.Analysis(expr)
	if err != nil || a.Query == nil || len(a.Vars) > 0 {
		return "", false
	}
	r, ok := e.piped1(expr, a.Query)
	return r.ref, ok
}

// piped1 is pipedAccessor for q, whose text is text.
func (e *Exporter) piped1(text string, q *gojq.Query) (pipedRef, bool) {
	if r, ok := e.piped[text]; ok {
		return r, true
	}
	for _, sp := range splits(q) {
		if n := e.shared[sp.p.String()]; n < 2 || !sp.worth(n) {
			continue
		}
		pref, pone, err := e.partAccessor(sp.p)
		if err != nil {
			return pipedRef{}, false
		}
		sref, sone, err := e.partAccessor(sp.s)
		if err != nil {
			return pipedRef{}, false
		}
		r := pipedRef{ref: fmt.Sprintf("QP[%d]", len(e.piped)+1), one: pone && sone}
		e.piped[text] = r
		if len(text) <= maxPipedComment {
			e.pipes.WriteString(jqlua.LuaComment(text))
		}
		if pone {
			fmt.Fprintf(&e.pipes, "%s = function(v, out) return %s(%s(v), out) end\n\n", r.ref, sref, pref)
		} else {
			fmt.Fprintf(&e.pipes, "%s = function(v, out) pipe(%s, %s, v, out) end\n\n", r.ref, pref, sref)
		}
		return r, true
	}
	return pipedRef{}, false
}

// partAccessor is the accessor of a part p of a piped path, piped when p
// has a shared prefix itself, and whether it has one output on every
// input.
func (e *Exporter) partAccessor(p *gojq.Query) (string, bool, error) {
	text := p.String()
	if r, ok := e.piped1(text, p); ok {
		return r.ref, r.one, nil
	}
	ref, err := e.u.AddQuery(text, p)
	if err != nil {
		return "", false, err
	}
	return ref, e.u.One(ref), nil
}

// pipesLua is the piped accessors' definitions, after the helpers (pipe).
func (e *Exporter) pipesLua() string {
	if len(e.piped) == 0 {
		return ""
	}
	return "\nlocal QP = {}\n\n" + e.pipes.String()
}
