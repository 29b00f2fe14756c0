package jqexpr

import (
	"fmt"
	"strconv"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// walker visits every node of a query. Besides reporting banned constructs
// it resolves function calls against the expression's own defs, with jq's
// lexical scoping, to build the call graph that recursion.go inspects.
type walker struct {
	expr string
	errs []error
	seen map[string]bool // messages already reported

	scope *scope   // functions visible at the current node
	cur   *defNode // the def whose body is being walked, nil at top level
	defs  []*defNode
}

// scope is one binding of a function name/arity, chained to the enclosing
// bindings. def is nil for a def's parameter, which shadows but is not a
// function of the expression.
type scope struct {
	parent *scope
	key    string
	def    *defNode
}

func (s *scope) lookup(key string) (*scope, bool) {
	for ; s != nil; s = s.parent {
		if s.key == key {
			return s, true
		}
	}
	return nil, false
}

// defNode is one user def and the defs its body (and the closures it passes)
// calls.
type defNode struct {
	key   string
	calls []*defNode
}

func walk(expr string, q *gojq.Query) []error {
	w := &walker{expr: expr, seen: map[string]bool{}}
	w.query(q)
	w.recursion()
	return w.errs
}

func (w *walker) report(construct, msg string) {
	if w.seen[msg] {
		return
	}
	w.seen[msg] = true
	w.errs = append(w.errs, &Error{Expr: w.expr, Construct: construct, Msg: msg})
}

func (w *walker) notAllowed(construct string) {
	w.report(construct, strconv.Quote(construct)+" is not allowed")
}

func funcKey(name string, arity int) string { return fmt.Sprintf("%s/%d", name, arity) }

func (w *walker) query(q *gojq.Query) {
	if q == nil {
		return
	}
	if q.Meta != nil {
		w.notAllowed("module")
	}
	for _, im := range q.Imports {
		if im.ImportPath != "" {
			w.notAllowed("import")
		} else {
			w.notAllowed("include")
		}
	}
	// Defs are visible to the defs after them and to the query body, and
	// nowhere outside this query.
	outer := w.scope
	for _, fd := range q.FuncDefs {
		w.funcDef(fd)
	}
	w.term(q.Term)
	if q.Op >= gojq.OpAssign && q.Op <= gojq.OpUpdateAlt {
		w.report(q.Op.String(), fmt.Sprintf("assignment %q is not allowed", q.Op.String()))
	}
	w.query(q.Left)
	for _, p := range q.Patterns {
		w.pattern(p)
	}
	w.query(q.Right)
	w.scope = outer
}

func (w *walker) funcDef(fd *gojq.FuncDef) {
	if bannedFuncs[fd.Name] {
		w.notAllowed(fd.Name)
	}
	node := &defNode{key: funcKey(fd.Name, len(fd.Args))}
	w.defs = append(w.defs, node)
	// A def is in scope in its own body, which is what makes recursion
	// possible, and after it.
	w.scope = &scope{parent: w.scope, key: node.key, def: node}
	after := w.scope

	body := after
	for _, a := range fd.Args {
		name := a
		if name[0] == '$' {
			// def f($a) binds both $a and the function a/0.
			name = name[1:]
		}
		body = &scope{parent: body, key: funcKey(name, 0)}
	}
	caller := w.cur
	w.cur, w.scope = node, body
	w.query(fd.Body)
	w.cur, w.scope = caller, after
}

func (w *walker) term(t *gojq.Term) {
	if t == nil {
		return
	}
	switch t.Type {
	case gojq.TermTypeRecurse:
		w.notAllowed("..")
	case gojq.TermTypeIndex:
		w.index(t.Index)
	case gojq.TermTypeFunc:
		w.call(t.Func)
	case gojq.TermTypeObject:
		w.object(t.Object)
	case gojq.TermTypeArray:
		if t.Array != nil {
			w.query(t.Array.Query)
		}
	case gojq.TermTypeUnary:
		if t.Unary != nil {
			w.term(t.Unary.Term)
		}
	case gojq.TermTypeFormat, gojq.TermTypeString:
		w.str(t.Str)
	case gojq.TermTypeIf:
		w.ifTerm(t.If)
	case gojq.TermTypeTry:
		if t.Try != nil {
			w.query(t.Try.Body)
			w.query(t.Try.Catch)
		}
	case gojq.TermTypeReduce:
		if r := t.Reduce; r != nil {
			w.query(r.Query)
			for _, p := range r.Patterns {
				w.pattern(p)
			}
			w.query(r.Start)
			w.query(r.Update)
		}
	case gojq.TermTypeForeach:
		if f := t.Foreach; f != nil {
			w.query(f.Query)
			for _, p := range f.Patterns {
				w.pattern(p)
			}
			w.query(f.Start)
			w.query(f.Update)
			w.query(f.Extract)
		}
	case gojq.TermTypeLabel:
		if t.Label != nil {
			w.query(t.Label.Body)
		}
	case gojq.TermTypeQuery:
		w.query(t.Query)
	}
	for _, s := range t.SuffixList {
		w.index(s.Index)
	}
}

func (w *walker) ifTerm(i *gojq.If) {
	if i == nil {
		return
	}
	w.query(i.Cond)
	w.query(i.Then)
	for _, e := range i.Elif {
		w.query(e.Cond)
		w.query(e.Then)
	}
	w.query(i.Else)
}

func (w *walker) index(ix *gojq.Index) {
	if ix == nil {
		return
	}
	w.str(ix.Str)
	w.query(ix.Start)
	w.query(ix.End)
}

func (w *walker) str(s *gojq.String) {
	if s == nil {
		return
	}
	for _, q := range s.Queries {
		w.query(q)
	}
}

func (w *walker) object(o *gojq.Object) {
	if o == nil {
		return
	}
	for _, kv := range o.KeyVals {
		// {$name} is shorthand for {name: $name}, a read of the variable;
		// {name} is a field access and harmless whatever the name.
		if bannedVars[kv.Key] {
			w.notAllowed(kv.Key)
		}
		w.str(kv.KeyString)
		w.query(kv.KeyQuery)
		w.query(kv.Val)
	}
}

// pattern walks a destructuring pattern. Its variable names are bindings,
// not reads, so only the computed keys matter.
func (w *walker) pattern(p *gojq.Pattern) {
	if p == nil {
		return
	}
	for _, e := range p.Array {
		w.pattern(e)
	}
	for _, o := range p.Object {
		w.str(o.KeyString)
		w.query(o.KeyQuery)
		w.pattern(o.Val)
	}
}

func (w *walker) call(f *gojq.Func) {
	if f == nil {
		return
	}
	if f.Name != "" && f.Name[0] == '$' {
		// A variable; gojq parses it as an argument-less Func.
		if bannedVars[f.Name] {
			w.notAllowed(f.Name)
		}
		return
	}
	key := funcKey(f.Name, len(f.Args))
	b, local := w.scope.lookup(key)
	switch {
	case bannedFuncs[f.Name]:
		w.notAllowed(f.Name)
	case isInternal(f.Name) && !local:
		w.notAllowed(f.Name)
	}
	if local && b.def != nil && w.cur != nil {
		w.cur.calls = append(w.cur.calls, b.def)
	}
	for _, a := range f.Args {
		w.query(a)
	}
}
