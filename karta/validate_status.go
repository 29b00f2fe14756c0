package karta

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// statusDefinition checks a status definition. Children's are checked like
// the root's even though only the root's is used: an expression in a Karta
// must be safe wherever it sits.
//
// An unknown statusMappings key cannot reach this point: StatusMappings is
// a struct, so the strict loader rejects unknown keys while decoding.
func (v *validator) statusDefinition(p *field.Path, sd *StatusDefinition) {
	if pd := sd.PhaseDefinition; pd != nil {
		v.requiredExpr(p.Child("phaseDefinition", "path"), pd.Path, "the path that yields the workload's phase")
	}
	if cd := sd.ConditionsDefinition; cd != nil {
		cp := p.Child("conditionsDefinition")
		v.requiredExpr(cp.Child("path"), cd.Path, "the path that yields the workload's conditions")
		if cd.TypeFieldName == "" {
			v.errorf(cp.Child("typeFieldName"), `must not be empty: the key of a condition's type (omit it for the default %q)`, DefaultTypeFieldName)
		}
		if cd.StatusFieldName == "" {
			v.errorf(cp.Child("statusFieldName"), `must not be empty: the key of a condition's status (omit it for the default %q)`, DefaultStatusFieldName)
		}
	}
	mp := p.Child("statusMappings")
	for _, m := range sd.StatusMappings.InPrecedence() {
		for i := range m.Matchers {
			v.matcher(mp.Child(m.Key).Index(i), &m.Matchers[i], sd)
		}
	}
}

func (v *validator) matcher(p *field.Path, m *StatusMatcher, sd *StatusDefinition) {
	if m.ByPhase == "" && len(m.ByConditions) == 0 && m.ByExpression == nil {
		v.errorf(p, "a matcher needs at least one of byPhase, byConditions and byExpression; an empty one would match every object")
		return
	}
	if m.ByPhase != "" && sd.PhaseDefinition == nil {
		v.errorf(p.Child("byPhase"), "byPhase needs statusDefinition.phaseDefinition, which says where the phase is")
	}
	if len(m.ByConditions) > 0 && sd.ConditionsDefinition == nil {
		v.errorf(p.Child("byConditions"), "byConditions needs statusDefinition.conditionsDefinition, which says where the conditions are")
	}
	for i, c := range m.ByConditions {
		if c.Type == "" {
			v.errorf(p.Child("byConditions").Index(i).Child("type"), "required: the condition type to match")
		}
	}
	if e := m.ByExpression; e != nil {
		v.requiredExpr(p.Child("byExpression", "expression"), e.Expression, "the jq expression whose first output is compared with expectedResult")
	}
}
