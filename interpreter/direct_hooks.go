package interpreter

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/kartalua/karta/internal/jqdirect"
	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/karta"
)

// The direct fast path of the generated hooks (see direct.go): a hook that
// no script overrides first runs its Go algorithm on directEvaluator,
// without taking a Lua state. If any evaluation declines, or the call fails
// in any way, the result is dropped and the call runs again on a pooled
// state, as it always did; so the caller sees the Lua path's result, errors
// included, only sooner.

// errDeclined is what a declined evaluation returns to the algorithm. The
// algorithms turn some errors into values (a pod's jq error only unmatches
// the pod), so the decision to drop a direct result is made on
// directEvaluator.declined, never on this error reaching the top.
var errDeclined = errors.New("direct evaluation declined")

// directEvaluator evaluates with each program's direct form.
type directEvaluator struct {
	declined bool
	s        jqdirect.Scratch
	// The call's deadline, the Program's timeout: a call that runs past
	// it declines, and the Lua path ends it with its deadline limit. The
	// clock is read every clockEvery evaluations, from the first such
	// reading, so that a short call never reads it.
	timeout time.Duration
	evals   int
	start   time.Time
}

const clockEvery = 32

func (e *directEvaluator) all(ctx context.Context, p *jqProgram, input any) ([]any, error) {
	if p.direct == nil || !e.live(ctx) {
		e.declined = true
		return nil, errDeclined
	}
	outs, ok := p.direct.Run(input, &e.s)
	if !ok {
		e.declined = true
		return nil, errDeclined
	}
	return outs, nil
}

// live counts one unit of the call's work (an evaluation, or a pod that
// GetGangGroups places without one) and reports whether the call may go
// on: ctx is live and, on every clockEvery-th unit, the call is within the
// Program's timeout. false declines the call.
func (e *directEvaluator) live(ctx context.Context) bool {
	if ctx.Err() != nil {
		e.declined = true
		return false
	}
	if e.evals++; e.evals%clockEvery == 0 {
		now := time.Now()
		if e.start.IsZero() {
			e.start = now
		} else if now.Sub(e.start) > e.timeout {
			e.declined = true
			return false
		}
	}
	return true
}

// directEvaluators recycles evaluators (the arena is dropped first: results
// alias it).
var directEvaluators = sync.Pool{New: func() any { return &directEvaluator{} }}

// startDirect returns an evaluator for a direct call, or false when the
// call must take the Lua path: direct evaluation is off or ctx is done.
// Its evaluations read the references' values the call bound.
func (p *Program) startDirect(ctx context.Context) (*directEvaluator, bool) {
	if p.noDirect || ctx.Err() != nil {
		return nil, false
	}
	e := directEvaluators.Get().(*directEvaluator)
	// A hook's evaluations give a few outputs each: 8 slots to begin.
	*e = directEvaluator{timeout: p.limits.Timeout, s: jqdirect.Scratch{Size: 8, Vars: p.callVars(ctx), Share: true}}
	return e, true
}

// finish ends a direct call and reports whether its result stands: the
// algorithm succeeded (err), nothing declined and ctx is still live.
func (e *directEvaluator) finish(ctx context.Context, err error) bool {
	ok := err == nil && !e.declined && ctx.Err() == nil
	e.s.Release()
	*e = directEvaluator{}
	directEvaluators.Put(e)
	return ok
}

// direct runs f on a direct evaluator; see startDirect and finish.
func direct[T any](ctx context.Context, p *Program, f func(ev evaluator) (T, error)) (T, bool) {
	var zero T
	ev, ok := p.startDirect(ctx)
	if !ok {
		return zero, false
	}
	res, err := f(ev)
	if !ev.finish(ctx, err) {
		return zero, false
	}
	return res, true
}

// statusPlan is the generated InterpretStatus (codegen.go,
// writeInterpretStatus) for direct evaluation: the same phase, conditions
// and matchers, evaluated in the same order with the same short cuts. It
// is nil when some status expression is outside the direct subset.
type statusPlan struct {
	phase    *jqdirect.Program // nil: no phaseDefinition
	condDef  *karta.ConditionsDefinition
	conds    *jqdirect.Program // nil: no conditionsDefinition
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
	expr         *jqdirect.Program // nil: no byExpression
	expected     string
}

func newStatusPlan(x *exprTable) *statusPlan {
	k := x.checked.Karta
	root := k.Spec.StructureDefinition.RootComponent
	sp := &statusPlan{}
	if root == nil || root.StatusDefinition == nil {
		return sp
	}
	sd := root.StatusDefinition
	ok := true
	compile := func(expr string) *jqdirect.Program {
		a, err := x.analysis(expr)
		if err != nil {
			ok = false
			return nil
		}
		d := jqdirect.Compile(a.Query, a.Vars...)
		if d == nil {
			ok = false
		}
		return d
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

// interpretStatus is the generated InterpretStatus, directly; ok false
// declines the call to the Lua path.
func (sp *statusPlan) interpretStatus(ctx context.Context, p *Program, obj map[string]any) (*StatusResult, bool) {
	if p.noDirect || ctx.Err() != nil {
		return nil, false
	}
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
	s := jqdirect.Scratch{Size: sp.evals, Vars: p.callVars(ctx)}
	defer s.Release()
	if sp.phase != nil {
		outs, ok := sp.phase.Run(obj, &s)
		if !ok {
			return nil, false
		}
		// K.phase: the first output, a string or null.
		if len(outs) > 0 {
			switch v := outs[0].(type) {
			case string:
				res.Phase = &v
			case nil:
			default:
				return nil, false
			}
		}
	}
	if sp.conds != nil {
		outs, ok := sp.conds.Run(obj, &s)
		if !ok {
			return nil, false
		}
		conds, err := conditions(sp.condDef, outs)
		if err != nil {
			return nil, false
		}
		res.Conditions = conds
	}
	for _, rule := range sp.mappings {
		for i := range rule.matchers {
			hold, ok := rule.matchers[i].holds(res, obj, &s)
			if !ok {
				return nil, false
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
	return res, ctx.Err() == nil
}

// holds evaluates one matcher's criteria in the generated order, stopping
// at the first that fails, as Lua's `and` does.
func (m *matcherPlan) holds(res *StatusResult, obj map[string]any, s *jqdirect.Scratch) (bool, bool) {
	if m.byPhase != "" && (res.Phase == nil || *res.Phase != m.byPhase) {
		return false, true
	}
	for _, c := range m.byConditions {
		if !lastConditionMatches(res.Conditions, c) {
			return false, true
		}
	}
	if m.expr == nil {
		return true, true
	}
	// K.expression: the first output through jq tostring equals the
	// expected result; no output never matches.
	outs, ok := m.expr.Run(obj, s)
	if !ok {
		return false, false
	}
	if len(outs) == 0 {
		return false, true
	}
	return tostringEquals(outs[0], m.expected)
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
// the string for the common kinds of value.
func tostringEquals(v any, s string) (bool, bool) {
	switch x := v.(type) {
	case string:
		return x == s, true
	case bool:
		return strconv.FormatBool(x) == s, true
	case int64:
		var buf [24]byte
		return string(strconv.AppendInt(buf[:0], x, 10)) == s, true
	case []any, map[string]any:
		return false, false // see fnToString
	}
	t, err := jqvalue.ToString(v)
	if err != nil {
		return false, false
	}
	return t == s, true
}
