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
// .template.containers, ... | .labels), and a Karta that derives its
// instances computes them once per path (AppWrapper's instanceIdPath,
// podTemplateSpecPath and replicasPath). An export translates such a
// shared prefix P once: the path P | S is the accessor of P piped into the
// accessor of S (pipe, in the helpers), so the chunk carries P's code
// once rather than once per path.

// pipeStages splits q = P | S at its last pipe: P the stages before the
// last, S the last. Only a plain pipeline splits: no variable binding (a
// pipe with patterns is `as`), no function definitions or imports, whose
// scope is the whole query.
func pipeStages(q *gojq.Query) (p, s *gojq.Query, ok bool) {
	if !plainPipe(q) {
		return nil, nil, false
	}
	stages := []*gojq.Query{q.Left}
	for r := q.Right; ; r = r.Right {
		if !plainPipe(r) {
			stages = append(stages, r)
			break
		}
		stages = append(stages, r.Left)
	}
	last := len(stages) - 1
	p = stages[last-1]
	for i := last - 2; i >= 0; i-- {
		p = &gojq.Query{Left: stages[i], Op: gojq.OpPipe, Right: p}
	}
	return p, stages[last], true
}

// plainPipe reports whether q is a pipe that binds and defines nothing.
func plainPipe(q *gojq.Query) bool {
	return q != nil && q.Op == gojq.OpPipe && len(q.Patterns) == 0 && len(q.FuncDefs) == 0 &&
		len(q.Imports) == 0 && q.Meta == nil && q.Left != nil && q.Right != nil
}

// sharedPrefixes counts, for each pipeline prefix (pipeStages' P, by its
// text), the distinct component paths of shape that have it: a prefix two
// paths or more share is translated once.
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
		if p, _, ok := pipeStages(a.Query); ok {
			counts[p.String()]++
		}
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

// pipedAccessor is the accessor of a component path whose pipeline prefix
// other paths share: QP[n], the prefix's accessor piped into the last
// stage's; false when the path has no shared prefix or a part does not
// translate on its own (then the whole path is translated).
func (e *Exporter) pipedAccessor(expr string) (string, bool) {
	if ref, ok := e.piped[expr]; ok {
		return ref, true
	}
	a, err := e.Analysis(expr)
	if err != nil || a.Query == nil || len(a.Vars) > 0 {
		return "", false
	}
	p, s, ok := pipeStages(a.Query)
	if !ok || e.shared[p.String()] < 2 {
		return "", false
	}
	pref, err := e.u.AddQuery(p.String(), p)
	if err != nil {
		return "", false
	}
	sref, err := e.u.AddQuery(s.String(), s)
	if err != nil {
		return "", false
	}
	ref := fmt.Sprintf("QP[%d]", len(e.piped)+1)
	e.piped[expr] = ref
	e.pipes.WriteString(jqlua.LuaComment(expr))
	fmt.Fprintf(&e.pipes, "%s = function(v, out) pipe(%s, %s, v, out) end\n\n", ref, pref, sref)
	return ref, true
}

// pipesLua is the piped accessors' definitions, after the helpers (pipe).
func (e *Exporter) pipesLua() string {
	if len(e.piped) == 0 {
		return ""
	}
	return "\nlocal QP = {}\n\n" + e.pipes.String()
}
