package jqdirect

import "github.com/kartalua/karta/internal/jqlua"

// restOnEach is runShared's rest when it gives at most one output per
// input (isSingle: Milvus' scale paths `… | if .hpa != null or .replicas
// == -1 then null else (.replicas // 1) end` below their component's
// shared prefix, AppWrapper's `.p.replicas // 1` below its podSets): each
// prefix output through eval1, its output appended to the arena as
// s.output appends the general form's, without the general form's buffer
// per node and deferred frees. The outputs, steps and declines are the
// general form's (eval1 is eval's, TestOneAgreesWithEval; the output
// limit and the conversion are s.output's).
func (p *Program) restOnEach(c *dctx, ins []any, s *Scratch) ([]any, bool) {
	s.arena = s.grow(len(ins))
	start := len(s.arena)
	for _, in := range ins {
		v, has, ok := one(c, p.rest, in)
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
