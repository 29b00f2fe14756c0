package interpreter

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kartalua/karta/karta"
)

// statusPlan is InterpretStatus as the generated Lua defines it (codegen.go,
// writeInterpretStatus), run by Go on the call's evaluator: the same
// phase, conditions and matchers, evaluated in the same order with the
// same short cuts, each expression on its chosen back end
// (eval_direct.go), with the generated Lua's K helpers' rules and errors.
type statusPlan struct {
	phase    *jqProgram // nil: no phaseDefinition
	condDef  *karta.ConditionsDefinition
	conds    *jqProgram // nil: no conditionsDefinition
	mappings []statusRule
	// maxMatched is the most statuses a call can match; evals the most
	// evaluations a call makes (the arena's size).
	maxMatched, evals int
}

// statusRule is one status and its matchers (any holds).
type statusRule struct {
	status   karta.Status
	matchers []matcherPlan
}

// matcherPlan is one matcher (all criteria hold), in the generated
// order: phase, then conditions, then the expression.
type matcherPlan struct {
	byPhase      string
	byConditions []karta.ConditionMatcher
	expr         *jqProgram // nil: no byExpression
	expected     string
}

// newStatusPlan is the plan of the Karta's InterpretStatus; nil when an
// expression does not compile (a karta bug: the check compiled it), which
// leaves the call to the generated Lua.
func newStatusPlan(x *exprTable) *statusPlan {
	k := x.checked.Karta
	root := k.Spec.StructureDefinition.RootComponent
	sp := &statusPlan{}
	if root == nil || root.StatusDefinition == nil {
		return sp
	}
	sd := root.StatusDefinition
	ok := true
	compile := func(expr string) *jqProgram {
		p, err := x.compile(expr)
		if err != nil {
			ok = false
		}
		return p
	}
	if sd.PhaseDefinition != nil {
		sp.phase = compile(sd.PhaseDefinition.Path)
	}
	if cd := sd.ConditionsDefinition; cd != nil {
		sp.condDef, sp.conds = cd, compile(cd.Path)
	}
	for _, sm := range sd.StatusMappings.InPrecedence() {
		if len(sm.Matchers) == 0 {
			continue
		}
		rule := statusRule{status: sm.Status}
		for _, mt := range sm.Matchers {
			m := matcherPlan{byPhase: mt.ByPhase, byConditions: mt.ByConditions}
			if e := mt.ByExpression; e != nil {
				m.expr, m.expected = compile(e.Expression), e.ExpectedResult
			}
			rule.matchers = append(rule.matchers, m)
		}
		sp.mappings = append(sp.mappings, rule)
	}
	sp.maxMatched = len(sp.mappings)
	sp.evals = 2
	for _, r := range sp.mappings {
		for _, m := range r.matchers {
			if m.expr != nil {
				sp.evals++
			}
		}
	}
	if !ok {
		return nil
	}
	return sp
}

// interpretStatus is the generated InterpretStatus on ev.
func (sp *statusPlan) interpretStatus(ctx context.Context, ev *directEvaluator, obj map[string]any) (*StatusResult, error) {
	// The result and its matched statuses in one allocation.
	a := &struct {
		res     StatusResult
		matched [8]karta.Status
	}{}
	res := &a.res
	res.Matched, res.Conditions = a.matched[:0], []Condition{}
	if sp.maxMatched > len(a.matched) {
		res.Matched = make([]karta.Status, 0, sp.maxMatched)
	}
	if sp.phase != nil {
		outs, err := statusEval(ctx, ev, sp.phase, obj)
		if err != nil {
			return nil, err
		}
		// K.phase: the first output, a string or null.
		if len(outs) > 0 {
			switch v := outs[0].(type) {
			case string:
				res.Phase = &v
			case nil:
			default:
				return nil, fmt.Errorf("phaseDefinition.path must yield a string or null, got %s", describe(v))
			}
		}
	}
	if sp.conds != nil {
		outs, err := statusEval(ctx, ev, sp.conds, obj)
		if err != nil {
			return nil, err
		}
		conds, err := conditions(sp.condDef, outs)
		if err != nil {
			return nil, err
		}
		res.Conditions = conds
	}
	for _, rule := range sp.mappings {
		for i := range rule.matchers {
			hold, err := rule.matchers[i].holds(ctx, ev, res, obj)
			if err != nil {
				return nil, err
			}
			if hold {
				res.Matched = append(res.Matched, rule.status)
				break
			}
		}
	}
	res.Status = karta.StatusUndefined
	if len(res.Matched) > 0 {
		res.Status = res.Matched[0]
	}
	return res, nil
}

// statusEval is ev.all, its jq error unwrapped: the generated Lua raises
// a status expression's jq error alone, without the expression.
func statusEval(ctx context.Context, ev *directEvaluator, p *jqProgram, obj map[string]any) ([]any, error) {
	outs, err := ev.all(ctx, p, obj)
	if je, ok := err.(*JQError); ok {
		err = je.Err
	}
	return outs, err
}

// holds evaluates one matcher's criteria in the generated order, stopping
// at the first that fails, as Lua's `and` does.
func (m *matcherPlan) holds(ctx context.Context, ev *directEvaluator, res *StatusResult, obj map[string]any) (bool, error) {
	if m.byPhase != "" && (res.Phase == nil || *res.Phase != m.byPhase) {
		return false, nil
	}
	for _, c := range m.byConditions {
		if !lastConditionMatches(res.Conditions, c) {
			return false, nil
		}
	}
	if m.expr == nil {
		return true, nil
	}
	// K.expression: the first output through jq tostring equals the
	// expected result; no output never matches.
	outs, err := statusEval(ctx, ev, m.expr, obj)
	if err != nil || len(outs) == 0 {
		return false, err
	}
	if eq, ok := tostringEquals(outs[0], m.expected); ok {
		return eq, nil
	}
	s, err := ev.tostring(outs[0])
	return s == m.expected, err
}

// lastConditionMatches is K.condition: the last condition of the type
// decides.
func lastConditionMatches(conds []Condition, m karta.ConditionMatcher) bool {
	for i := len(conds) - 1; i >= 0; i-- {
		c := &conds[i]
		if c.Type != m.Type {
			continue
		}
		return (m.Status == "" || (c.Status != nil && *c.Status == m.Status)) &&
			(m.Reason == "" || (c.Reason != nil && *c.Reason == m.Reason))
	}
	return false
}

// tostringEquals is jq tostring of v compared with s, without building
// the string, for the kinds of value whose text is plain; ok is false for
// the others.
func tostringEquals(v any, s string) (bool, bool) {
	switch x := v.(type) {
	case string:
		return x == s, true
	case bool:
		return strconv.FormatBool(x) == s, true
	case int64:
		var buf [24]byte
		return string(strconv.AppendInt(buf[:0], x, 10)) == s, true
	case nil:
		return s == "null", true
	}
	// A composite may share subtrees and print as many copies: it is
	// printed under the call's limits (directEvaluator.tostring), and so
	// is a float.
	return false, false
}
