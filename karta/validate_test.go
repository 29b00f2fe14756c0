package karta

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/jqexpr"
)

// wantProblem is an expected problem: its severity, exact field and a
// fragment of its message.
type wantProblem struct {
	severity Severity
	field    string
	fragment string
}

func errAt(field, fragment string) wantProblem {
	return wantProblem{SeverityError, field, fragment}
}

func warnAt(field, fragment string) wantProblem {
	return wantProblem{SeverityWarning, field, fragment}
}

// validateCase mutates a fixture and expects exactly the listed problems,
// in order. A case without wants is a passing example.
type validateCase struct {
	name   string
	base   string
	mutate func(t *testing.T, k *Karta)
	opts   ValidateOptions
	want   []wantProblem
}

func runValidateCases(t *testing.T, cases []validateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := mustUnmarshalKarta(t, tc.base)
			if tc.mutate != nil {
				tc.mutate(t, k)
			}
			assertProblems(t, ValidateWithOptions(k, tc.opts), tc.want...)
		})
	}
}

func assertProblems(t *testing.T, got Problems, want ...wantProblem) {
	t.Helper()
	var lines []string
	for _, p := range got {
		lines = append(lines, p.String())
	}
	report := "got:\n  " + strings.Join(lines, "\n  ")
	require.Len(t, got, len(want), report)
	for i, w := range want {
		assert.Equal(t, w.severity, got[i].Severity, "problem %d; %s", i, report)
		assert.Equal(t, w.field, got[i].Field, "problem %d; %s", i, report)
		assert.Contains(t, got[i].Message, w.fragment, "problem %d; %s", i, report)
	}
}

func TestValidateFixtures(t *testing.T) {
	for name, doc := range map[string]string{
		"the specification's PyTorchJob": fixturePyTorchJob,
		"v2 podGroup":                    fixturePyTorchJobV2,
		"JobSet":                         fixtureJobSet,
		"LeaderWorkerSet":                fixtureLWS,
		"NIMService":                     fixtureNIM,
	} {
		t.Run(name, func(t *testing.T) {
			ps := Validate(mustUnmarshalKarta(t, doc))
			assert.Empty(t, ps)
			assert.NoError(t, ps.Err())
		})
	}
}

// TestValidateReportsEverything breaks one Karta in many places and
// expects every problem from one call, in document order.
func TestValidateReportsEverything(t *testing.T) {
	k := mustUnmarshalKarta(t, fixturePyTorchJob)
	root := rootOf(k)
	root.Kind.Version = ""
	root.OwnerRef = ptrTo("nobody")
	root.StatusDefinition.StatusMappings.Running[0] = StatusMatcher{}
	root.SuspendDefinition.SuspendActions[0].Path = "del(.spec)"
	master := childOf(t, k, "master")
	master.OwnerRef = ptrTo("workr")
	master.SpecDefinition.PodSpecPath = ".spec.x"
	worker := childOf(t, k, "worker")
	worker.Name = "master"
	worker.InstanceIDPath = "now"
	k.Spec.StructureDefinition.AdditionalChildKinds = []GroupVersionKind{{Kind: "Service"}}
	gangOf(k).PodGroups[0].Members[1].Filters = []string{"$ENV.X == \"1\""}
	k.Spec.OptimizationInstructions = &Instructions{GangScheduling: &GangScheduling{}}
	k.Spec.LuaScript = "function GetPodSpecs() end"
	opts := ValidateOptions{CheckScript: func(string) Problems {
		return Problems{{Message: "syntax error near 'end'"}}
	}}

	got := ValidateWithOptions(k, opts)
	assertProblems(t, got,
		errAt(fRoot+".kind.version", "required"),
		errAt(fRoot+".ownerRef", "the root component has no owner"),
		errAt(fStatus+".statusMappings.running[0]", "at least one of byPhase, byConditions and byExpression"),
		errAt(fRoot+".suspendDefinition.suspendActions[0].path", `"del" is not allowed`),
		errAt(fMaster+".ownerRef", `ownerRef "workr" does not name a component (have: pytorchjob, master)`),
		errAt(fMaster+".specDefinition", "more than one spec style is set (podTemplateSpecPath, podSpecPath)"),
		errAt(fWorker+".name", `duplicate component name "master"`),
		errAt(fWorker+".instanceIdPath", `"now" is not allowed`),
		errAt(fWorker+".podSelector.componentInstanceSelector", "required because instanceIdPath is set"),
		errAt(fExtra+"[0].version", "required"),
		errAt(fGroup0+".members[1].componentName", `"worker" does not name a component`),
		errAt(fGroup0+".members[1].filters[0]", `"$ENV" is not allowed`),
		errAt("spec.optimizationInstructions", "keep only instructions"),
		errAt("spec.optimizationInstructions.gangScheduling", "empty: set podGroups (alpha) or podGroup (v2)"),
		errAt("spec.luaScript", "syntax error near 'end'"),
	)
	require.True(t, got.HasErrors())
	var ve *ValidationError
	require.True(t, errors.As(got.ErrFor("pytorchjob"), &ve))
	assert.Len(t, ve.Problems, 15)
	assert.True(t, strings.HasPrefix(ve.Error(),
		`karta "pytorchjob" is invalid: spec.structureDefinition.rootComponent.kind.version: required`), ve.Error())
}

func TestValidateNil(t *testing.T) {
	assertProblems(t, Validate(nil), errAt("", "no Karta to validate"))
}

func TestValidateLuaScript(t *testing.T) {
	var calls []string
	check := func(script string) Problems {
		calls = append(calls, script)
		return Problems{
			{Message: "it does not compile"},
			{Severity: SeverityWarning, Field: "globals.helper", Message: "helper is not a hook name"},
			{Severity: SeverityError, Field: "[2]", Message: "third chunk"},
		}
	}
	k := mustUnmarshalKarta(t, fixturePyTorchJob)
	assertProblems(t, ValidateWithOptions(k, ValidateOptions{CheckScript: check}))
	assert.Empty(t, calls, "no script, no call")

	k.Spec.LuaScript = "x = 1"
	assertProblems(t, Validate(k)) // no checker, nothing to say
	assertProblems(t, ValidateWithOptions(k, ValidateOptions{CheckScript: check}),
		errAt("spec.luaScript", "it does not compile"),
		warnAt("spec.luaScript.globals.helper", "helper is not a hook name"),
		errAt("spec.luaScript[2]", "third chunk"),
	)
	assert.Equal(t, []string{"x = 1"}, calls)
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{SeverityError, "spec.luaScript", "bad"}, "spec.luaScript: bad"},
		{Problem{SeverityWarning, "spec.luaScript", "odd"}, "spec.luaScript: warning: odd"},
		{Problem{SeverityError, "", "bad"}, "bad"},
		{Problem{SeverityWarning, "", "odd"}, "warning: odd"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.p.String())
	}
}

func TestProblemsHelpers(t *testing.T) {
	e1 := Problem{SeverityError, "a", "one"}
	w1 := Problem{SeverityWarning, "b", "two"}
	e2 := Problem{SeverityError, "", "three"}
	ps := Problems{e1, w1, e2}
	assert.Equal(t, Problems{e1, e2}, ps.Errors())
	assert.Equal(t, Problems{w1}, ps.Warnings())
	assert.True(t, ps.HasErrors())

	err := ps.Err()
	var ve *ValidationError
	require.True(t, errors.As(err, &ve))
	assert.Equal(t, &ValidationError{Problems: Problems{e1, e2}}, ve)
	assert.Equal(t, "karta is invalid: a: one; three", err.Error())
	assert.Equal(t, `karta "x" is invalid: a: one; three`, ps.ErrFor("x").Error())

	warnings := Problems{w1}
	assert.False(t, warnings.HasErrors())
	assert.NoError(t, warnings.Err())
	assert.NoError(t, warnings.ErrFor("x"))
	assert.NoError(t, Problems(nil).Err())
}

func TestDocumentOrder(t *testing.T) {
	ps := Problems{
		{Field: "spec.luaScript", Message: "1"},
		{Field: "spec.instructions.gangScheduling.podGroups[10].name", Message: "2"},
		{Field: "spec.instructions.gangScheduling.podGroups[2].name", Message: "3"},
		{Field: "spec.structureDefinition.additionalChildKinds[0]", Message: "4"},
		{Field: "spec.structureDefinition.childComponents[1].ownerRef", Message: "5"},
		{Field: "spec.structureDefinition.childComponents[1].name", Message: "6"},
		{Field: "spec.structureDefinition.childComponents[1]", Message: "7"},
		{Field: "spec.structureDefinition.childComponents[0].suspendDefinition", Message: "8"},
		{Field: "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.failed[0]", Message: "9"},
		{Field: "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.running[0]", Message: "10"},
		{Field: "spec.structureDefinition.rootComponent.kind", Message: "11"},
		{Field: "spec.luaScript.globals.x", Message: "12"},
		{Field: "spec.luaScript[0]", Message: "12b"},
		{Field: "spec.bogus", Message: "12c"},
		{Field: "spec.structureDefinition.rootComponent.kind", Message: "13"},
		{Field: "", Message: "14"},
		{Field: "metadata.name", Message: "15"},
	}
	sortByDocumentOrder(ps)
	var got []string
	for _, p := range ps {
		got = append(got, p.Message)
	}
	assert.Equal(t, []string{"14", "15", "11", "13", "10", "9", "8", "7", "6", "5", "4", "3", "2", "1", "12", "12b", "12c"}, got)
}

// TestValidateCheckExpr: CheckExpr's verdict is a warning at every field
// holding the expression, and it is asked once per distinct text.
func TestValidateCheckExpr(t *testing.T) {
	k := mustUnmarshalKarta(t, fixturePyTorchJob)
	asked := map[string]int{}
	opts := ValidateOptions{CheckExpr: func(e Expr) string {
		a := jqexpr.Of(e)
		require.NotNil(t, a.Query, a.Text)
		asked[a.Text]++
		if a.Text == ".spec.runPolicy.suspend" {
			return "cannot run there"
		}
		return ""
	}}
	got := ValidateWithOptions(k, opts)
	require.NotEmpty(t, asked)
	for expr, n := range asked {
		assert.Equal(t, 1, n, expr)
	}
	var warned []string
	for _, p := range got {
		require.Equal(t, SeverityWarning, p.Severity, p.String())
		if p.Message == "cannot run there" {
			warned = append(warned, p.Field)
		}
	}
	assert.Equal(t, []string{fRoot + ".suspendDefinition.suspendActions[0].path", fRoot + ".suspendDefinition.resumeActions[0].path"}, warned)
	assert.False(t, got.HasErrors())
}
