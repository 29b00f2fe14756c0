package interpreter

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/kartalua/karta/karta"
)

// statusPlan is the one definition of InterpretStatus in process
// (docs/karta.md, "Status"): the phase, the conditions, then each status's
// matchers in precedence order, run by Go on the call's evaluator, each
// expression on its chosen back end (eval_direct.go). The Go API runs it
// for a hook no script overrides, and a script's
// karta.generated.InterpretStatus runs it on the script's call
// (kstatus.go). The exports' statusOf (internal/luaexport) writes the same
// rules in Lua for the runtimes they ship to; test/paths holds them equal.
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

// matcherPlan is one matcher (all criteria hold), its criteria in the
// order they are tried: phase, then conditions, then the expression.
type matcherPlan struct {
	byPhase      string
	byConditions []karta.ConditionMatcher
	expr         *jqProgram // nil: no byExpression
	expected     string
}

// newStatusPlan is the plan of the Karta's InterpretStatus. Its error is
// an expression that does not compile (a karta bug: the check compiled it).
func newStatusPlan(x *exprTable) (*statusPlan, error) {
	k := x.checked.Karta
	root := k.Spec.StructureDefinition.RootComponent
	sp := &statusPlan{}
	if root == nil || root.StatusDefinition == nil {
		return sp, nil
	}
	sd := root.StatusDefinition
	var errs []error
	compile := func(expr string) *jqProgram {
		p, err := x.compile(expr)
		if err != nil {
			errs = append(errs, err)
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
	if len(errs) > 0 {
		return nil, fmt.Errorf("the status definition: %w", errors.Join(errs...))
	}
	return sp, nil
}

// run is InterpretStatus on ev, whose arena it sizes for the plan's
// evaluations.
func (sp *statusPlan) run(ctx context.Context, ev *directEvaluator, obj map[string]any) (*StatusResult, error) {
	ev.s.Size = sp.evals
	return sp.interpretStatus(ctx, ev, obj)
}

// interpretStatus is InterpretStatus on ev.
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
		// The first output, a string or null.
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

// statusEval is ev.all, its jq error unwrapped: a status expression's jq
// error is reported alone, without the expression, as the exports'
// statusOf reports it.
func statusEval(ctx context.Context, ev *directEvaluator, p *jqProgram, obj map[string]any) ([]any, error) {
	outs, err := ev.all(ctx, p, obj)
	if je, ok := err.(*JQError); ok {
		err = je.Err
	}
	return outs, err
}

// holds evaluates one matcher's criteria in order (phase, conditions,
// expression), stopping at the first that fails.
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
	// The first output through jq tostring equals the expected result;
	// no output never matches.
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

// lastConditionMatches is a byConditions criterion: the last condition of
// the type decides.
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
