package jqdirect

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
	return s.eachOne(ins, func(in any) (any, bool, bool) { return one(c, p.rest, in) })
}
