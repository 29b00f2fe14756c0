package jqexpr

import "github.com/kartalua/karta/internal/third_party/gojq"

// WritePath is the expression writes go through for an assignable q: q
// with every default `P // D` (D a number, boolean or null literal, see
// isDefault) replaced
// by P, through `|`, `,`, `//` and parentheses. A default is a reading
// aid (a StatefulSet stored without replicas has the API default 1), and
// the field the user owns is P: jq's own path(P // 1) fails when P is
// null, and a write must create P rather than fail. q itself is never
// changed; the parts WritePath does not rewrite are shared.
func WritePath(q *gojq.Query) *gojq.Query {
	if q == nil {
		return nil
	}
	if isDefault(q) {
		return WritePath(q.Left)
	}
	switch {
	case q.Term != nil && q.Term.Type == gojq.TermTypeQuery && len(q.Term.SuffixList) == 0:
		inner := WritePath(q.Term.Query)
		if inner == q.Term.Query {
			return q
		}
		t := *q.Term
		t.Query = inner
		c := *q
		c.Term = &t
		return &c
	case q.Left != nil && q.Right != nil && (q.Op == gojq.OpPipe || q.Op == gojq.OpComma || q.Op == gojq.OpAlt):
		l, r := WritePath(q.Left), WritePath(q.Right)
		if l == q.Left && r == q.Right {
			return q
		}
		c := *q
		c.Left, c.Right = l, r
		return &c
	}
	return q
}

// isDefault reports whether q is `P // D` with D a bare number, boolean or
// null literal.
func isDefault(q *gojq.Query) bool {
	if q.Op != gojq.OpAlt || q.Left == nil || q.Right == nil {
		return false
	}
	r := q.Right
	if r.Term == nil || r.Left != nil || len(r.FuncDefs) > 0 || len(r.Patterns) > 0 || len(r.Term.SuffixList) > 0 {
		return false
	}
	switch r.Term.Type {
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
		return true
	}
	// Not a string: a string default would let a number be written where
	// a string is read (Knative's "1" scale annotations).
	return false
}
