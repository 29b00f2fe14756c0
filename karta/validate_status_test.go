package karta

import "testing"

func TestValidateStatus(t *testing.T) {
	const mappings = fStatus + ".statusMappings"
	runValidateCases(t, []validateCase{
		{
			name: "matcher without criteria",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).StatusDefinition.StatusMappings.Running[0] = StatusMatcher{}
			},
			want: []wantProblem{errAt(mappings+".running[0]",
				"a matcher needs at least one of byPhase, byConditions and byExpression; an empty one would match every object")},
		},
		{
			name: "matcher with an empty byConditions list",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				m := &rootOf(k).StatusDefinition.StatusMappings
				m.Degraded = []StatusMatcher{{ByConditions: []ConditionMatcher{}}}
			},
			want: []wantProblem{errAt(mappings+".degraded[0]", "needs at least one")},
		},
		{
			name: "matchers in every mapping are checked",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				m := &rootOf(k).StatusDefinition.StatusMappings
				for _, l := range []*[]StatusMatcher{&m.Initializing, &m.Running, &m.Completed, &m.Failed, &m.Degraded, &m.Suspended, &m.Suspending, &m.Resuming} {
					*l = append(*l, StatusMatcher{})
				}
			},
			want: []wantProblem{
				errAt(mappings+".initializing[1]", "needs at least one"),
				errAt(mappings+".running[1]", "needs at least one"),
				errAt(mappings+".completed[0]", "needs at least one"),
				errAt(mappings+".failed[1]", "needs at least one"),
				errAt(mappings+".degraded[0]", "needs at least one"),
				errAt(mappings+".suspended[0]", "needs at least one"),
				errAt(mappings+".suspending[0]", "needs at least one"),
				errAt(mappings+".resuming[0]", "needs at least one"),
			},
		},
		{
			name: "byPhase with phaseDefinition",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				sd := rootOf(k).StatusDefinition
				sd.PhaseDefinition = &PhaseDefinition{Path: ".status.phase"}
				sd.StatusMappings.Running[0].ByPhase = "Running"
			},
		},
		{
			name: "byPhase without phaseDefinition",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).StatusDefinition.StatusMappings.Running[0].ByPhase = "Running"
			},
			want: []wantProblem{errAt(mappings+".running[0].byPhase", "byPhase needs statusDefinition.phaseDefinition")},
		},
		{
			name: "byConditions without conditionsDefinition",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).StatusDefinition.ConditionsDefinition = nil
			},
			want: []wantProblem{
				errAt(mappings+".initializing[0].byConditions", "byConditions needs statusDefinition.conditionsDefinition"),
				errAt(mappings+".running[0].byConditions", "byConditions needs statusDefinition.conditionsDefinition"),
				errAt(mappings+".failed[0].byConditions", "byConditions needs statusDefinition.conditionsDefinition"),
			},
		},
		{
			name: "empty typeFieldName and statusFieldName",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				cd := rootOf(k).StatusDefinition.ConditionsDefinition
				cd.TypeFieldName, cd.StatusFieldName = "", ""
			},
			want: []wantProblem{
				errAt(fStatus+".conditionsDefinition.typeFieldName", `must not be empty: the key of a condition's type (omit it for the default "type")`),
				errAt(fStatus+".conditionsDefinition.statusFieldName", `must not be empty: the key of a condition's status (omit it for the default "status")`),
			},
		},
		{
			name: "empty messageFieldName and reasonFieldName disable them",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				cd := rootOf(k).StatusDefinition.ConditionsDefinition
				cd.MessageFieldName, cd.ReasonFieldName = "", ""
			},
		},
		{
			name: "custom field names",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				cd := rootOf(k).StatusDefinition.ConditionsDefinition
				cd.TypeFieldName, cd.StatusFieldName = "kind", "state"
			},
		},
		{
			name: "byConditions entry without type",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).StatusDefinition.StatusMappings.Running[0].ByConditions = []ConditionMatcher{
					{Type: "Running"}, {Status: "True"},
				}
			},
			want: []wantProblem{errAt(mappings+".running[0].byConditions[1].type", "required: the condition type to match")},
		},
		{
			name: "conditionsDefinition without path",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).StatusDefinition.ConditionsDefinition.Path = ""
			},
			want: []wantProblem{errAt(fStatus+".conditionsDefinition.path", "required: the path that yields the workload's conditions")},
		},
		{
			name: "phaseDefinition without path",
			base: fixtureNIM,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).StatusDefinition.PhaseDefinition.Path = ""
			},
			want: []wantProblem{errAt(fStatus+".phaseDefinition.path", "required: the path that yields the workload's phase")},
		},
		{
			name: "byExpression without expression",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).StatusDefinition.StatusMappings.Initializing[0].ByExpression.Expression = ""
			},
			want: []wantProblem{errAt(mappings+".initializing[0].byExpression.expression", "required: the jq expression")},
		},
		{
			name: "byExpression with an empty expected result",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).StatusDefinition.StatusMappings.Initializing[0].ByExpression.ExpectedResult = ""
			},
		},
	})
}
