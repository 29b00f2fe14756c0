package karta

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// exprLocation is one place in a fixture that holds a jq expression.
type exprLocation struct {
	base  string
	field string
	set   func(t *testing.T, k *Karta, expr string)
}

func exprLocations() map[string]exprLocation {
	locs := map[string]exprLocation{
		"podTemplateSpecPath": {fixturePyTorchJob, fWorker + ".specDefinition.podTemplateSpecPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "worker").SpecDefinition.PodTemplateSpecPath = e
		}},
		"podSpecPath": {fixturePyTorchJob, fWorker + ".specDefinition.podSpecPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "worker").SpecDefinition = &SpecDefinition{PodSpecPath: e}
		}},
		"metadataPath": {fixturePyTorchJob, fWorker + ".specDefinition.metadataPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "worker").SpecDefinition = &SpecDefinition{PodSpecPath: ".spec.w", MetadataPath: e}
		}},
		"replicasPath": {fixturePyTorchJob, fWorker + ".scaleDefinition.replicasPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "worker").ScaleDefinition.ReplicasPath = e
		}},
		"minReplicasPath": {fixturePyTorchJob, fWorker + ".scaleDefinition.minReplicasPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "worker").ScaleDefinition.MinReplicasPath = e
		}},
		"maxReplicasPath": {fixturePyTorchJob, fWorker + ".scaleDefinition.maxReplicasPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "worker").ScaleDefinition.MaxReplicasPath = e
		}},
		"instanceIdPath": {fixtureJobSet, fJSChild + ".instanceIdPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "replicatedjob").InstanceIDPath = e
		}},
		"phaseDefinition.path": {fixtureNIM, fStatus + ".phaseDefinition.path", func(t *testing.T, k *Karta, e string) {
			rootOf(k).StatusDefinition.PhaseDefinition.Path = e
		}},
		"conditionsDefinition.path": {fixturePyTorchJob, fStatus + ".conditionsDefinition.path", func(t *testing.T, k *Karta, e string) {
			rootOf(k).StatusDefinition.ConditionsDefinition.Path = e
		}},
		"byExpression.expression": {fixturePyTorchJob, fStatus + ".statusMappings.initializing[0].byExpression.expression", func(t *testing.T, k *Karta, e string) {
			rootOf(k).StatusDefinition.StatusMappings.Initializing[0].ByExpression.Expression = e
		}},
		"componentTypeSelector.keyPath": {fixturePyTorchJob, fWorker + ".podSelector.componentTypeSelector.keyPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "worker").PodSelector.ComponentTypeSelector.KeyPath = e
		}},
		"componentInstanceSelector.idPath": {fixtureJobSet, fJSChild + ".podSelector.componentInstanceSelector.idPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "replicatedjob").PodSelector.ComponentInstanceSelector.IDPath = e
			k.Spec.Instructions = nil // its key reads the old id path (gangTraps)
		}},
		"replicaSelector.keyPath": {fixtureLWS, "spec.structureDefinition.childComponents[0].podSelector.replicaSelector.keyPath", func(t *testing.T, k *Karta, e string) {
			childOf(t, k, "group").PodSelector.ReplicaSelector.KeyPath = e
			k.Spec.Instructions = nil // its key reads the old replica key (gangTraps)
		}},
		"groupByKeyPaths": {fixturePyTorchJob, fGroup0 + ".members[1].groupByKeyPaths[0]", func(t *testing.T, k *Karta, e string) {
			gangOf(k).PodGroups[0].Members[1].GroupByKeyPaths[0] = e
		}},
		"filters": {fixturePyTorchJob, fGroup0 + ".members[1].filters[1]", func(t *testing.T, k *Karta, e string) {
			gangOf(k).PodGroups[0].Members[1].Filters = []string{".status.phase == \"Running\"", e}
		}},
		"suspendActions.path": {fixturePyTorchJob, fRoot + ".suspendDefinition.suspendActions[0].path", func(t *testing.T, k *Karta, e string) {
			rootOf(k).SuspendDefinition.SuspendActions[0].Path = e
		}},
		"resumeActions.path": {fixturePyTorchJob, fRoot + ".suspendDefinition.resumeActions[0].path", func(t *testing.T, k *Karta, e string) {
			rootOf(k).SuspendDefinition.ResumeActions[0].Path = e
		}},
	}
	fragments := map[string]func(f *FragmentedPodSpecDefinition) *string{
		"schedulerNamePath":     func(f *FragmentedPodSpecDefinition) *string { return &f.SchedulerNamePath },
		"labelsPath":            func(f *FragmentedPodSpecDefinition) *string { return &f.LabelsPath },
		"annotationsPath":       func(f *FragmentedPodSpecDefinition) *string { return &f.AnnotationsPath },
		"resourcesPath":         func(f *FragmentedPodSpecDefinition) *string { return &f.ResourcesPath },
		"resourceClaimsPath":    func(f *FragmentedPodSpecDefinition) *string { return &f.ResourceClaimsPath },
		"podAffinityPath":       func(f *FragmentedPodSpecDefinition) *string { return &f.PodAffinityPath },
		"nodeAffinityPath":      func(f *FragmentedPodSpecDefinition) *string { return &f.NodeAffinityPath },
		"containersPath":        func(f *FragmentedPodSpecDefinition) *string { return &f.ContainersPath },
		"containerPath":         func(f *FragmentedPodSpecDefinition) *string { return &f.ContainerPath },
		"priorityClassNamePath": func(f *FragmentedPodSpecDefinition) *string { return &f.PriorityClassNamePath },
		"imagePath":             func(f *FragmentedPodSpecDefinition) *string { return &f.ImagePath },
	}
	for name, at := range fragments {
		locs[name] = exprLocation{fixtureNIM, fRoot + ".specDefinition.fragmentedPodSpecDefinition." + name, func(t *testing.T, k *Karta, e string) {
			*at(rootOf(k).SpecDefinition.FragmentedPodSpecDefinition) = e
		}}
	}
	return locs
}

// TestValidateExpressionsEverywhere puts bad expressions into every field
// that holds one.
func TestValidateExpressionsEverywhere(t *testing.T) {
	locs := exprLocations()
	if len(locs) != 28 {
		t.Fatalf("%d expression locations; update the test when fields are added", len(locs))
	}
	for name, loc := range locs {
		t.Run(name, func(t *testing.T) {
			with := func(expr string) func(*testing.T, *Karta) {
				return func(t *testing.T, k *Karta) { loc.set(t, k, expr) }
			}
			runValidateCases(t, []validateCase{
				{name: "banned function", base: loc.base, mutate: with(".a | env"),
					want: []wantProblem{errAt(loc.field, `"env" is not allowed`)}},
				{name: "all findings", base: loc.base, mutate: with("del(.a) | $ENV | (.b |= 1)"),
					want: []wantProblem{
						errAt(loc.field, `"del" is not allowed`),
						errAt(loc.field, `"$ENV" is not allowed`),
						errAt(loc.field, `assignment "|=" is not allowed`),
					}},
				{name: "undefined function", base: loc.base, mutate: with("gpu"),
					want: []wantProblem{errAt(loc.field, "invalid jq: function not defined: gpu/0")}},
				{name: "undefined variable", base: loc.base, mutate: with(".a == $value"),
					want: []wantProblem{errAt(loc.field, "invalid jq: variable not defined: $value")}},
				{name: "syntax error", base: loc.base, mutate: with(".a["),
					want: []wantProblem{errAt(loc.field, "invalid jq: syntax error: unexpected EOF")}},
				{name: "recursion", base: loc.base, mutate: with("def f: f; .a"),
					want: []wantProblem{errAt(loc.field, `recursive function "f/0" is not allowed`)}},
				{name: "a good path", base: loc.base, mutate: with(".spec.a")},
			})
		})
	}
}

func TestValidateAssignability(t *testing.T) {
	runValidateCases(t, []validateCase{
		{
			name: "spec path not assignable",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").SpecDefinition.PodTemplateSpecPath = ".spec.pytorchReplicaSpecs.Worker.template // {}"
			},
			want: []wantProblem{warnAt(fWorker+".specDefinition.podTemplateSpecPath",
				"not assignable (object construction is not a path); ReviseSpec through this path fails at run time")},
		},
		{
			name: "podSpecPath and metadataPath not assignable",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").SpecDefinition = &SpecDefinition{PodSpecPath: "[.spec.w][0]", MetadataPath: ".spec.meta + {}"}
			},
			want: []wantProblem{
				warnAt(fWorker+".specDefinition.podSpecPath", "not assignable (array construction is not a path)"),
				warnAt(fWorker+".specDefinition.metadataPath", `not assignable (operator "+" is not a path)`),
			},
		},
		{
			name: "read-only fragment",
			base: fixtureNIM,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SpecDefinition.FragmentedPodSpecDefinition.ImagePath = `.spec.image.repository + ":" + .spec.image.tag`
			},
			want: []wantProblem{warnAt(fRoot+".specDefinition.fragmentedPodSpecDefinition.imagePath",
				`not assignable (operator "+" is not a path); ReviseSpec through this path fails at run time`)},
		},
		{
			name: "guarded fragment stays assignable",
			base: fixtureNIM,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SpecDefinition.FragmentedPodSpecDefinition.ContainerPath =
					`.spec.predictor | first((.model | select(. != null)), (.[]? | select(type == "object" and has("storageUri"))), .model)`
			},
		},
		{
			name: "root replicasPath is the ReviseReplica target",
			base: fixtureNIM,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).ScaleDefinition.ReplicasPath = "(.spec.replicas // 1) * (.spec.multiNode.size // 1)"
			},
			want: []wantProblem{warnAt(fRoot+".scaleDefinition.replicasPath",
				`not assignable (operator "*" is not a path); ReviseReplica writes replicas through this path, so it is not generated`)},
		},
		{
			name: "the only single-instance pod-bearing component is the target",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				c := childOf(t, k, "replicatedjob")
				c.InstanceIDPath, c.PodSelector.ComponentInstanceSelector = "", nil
				c.ScaleDefinition.ReplicasPath = `.spec.replicatedJobs[0].replicas // "1"`
			},
			want: []wantProblem{warnAt(fJSChild+".scaleDefinition.replicasPath", `not assignable (literal "1" is not a path); ReviseReplica`)},
		},
		{
			name: "a number default is written through its field",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				c := childOf(t, k, "replicatedjob")
				c.InstanceIDPath, c.PodSelector.ComponentInstanceSelector = "", nil
				c.ScaleDefinition.ReplicasPath = ".spec.replicatedJobs[0].replicas // 1"
			},
		},
		{
			name: "the root's replicasPath wins over the only component's",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				c := childOf(t, k, "replicatedjob")
				c.InstanceIDPath, c.PodSelector.ComponentInstanceSelector = "", nil
				rootOf(k).ScaleDefinition = &ScaleDefinition{ReplicasPath: ".spec.replicas"}
			},
		},
		{
			name: "no target for a component with instances",
			base: fixtureJobSet, // its replicasPath multiplies
		},
		{
			name: "no target among several pod-bearing components",
			base: fixturePyTorchJob, // its replicasPaths have // 1
		},
		{
			name: "no assignability report for an invalid expression",
			base: fixtureNIM,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).ScaleDefinition.ReplicasPath = "gpu + 1"
			},
			want: []wantProblem{errAt(fRoot+".scaleDefinition.replicasPath", "invalid jq: function not defined: gpu/0")},
		},
	})
}

func TestValidateSuspendDefinition(t *testing.T) {
	const sp = fRoot + ".suspendDefinition"
	raw := func(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }
	runValidateCases(t, []validateCase{
		{
			name: "path not assignable",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SuspendDefinition.SuspendActions[0].Path = ".spec.runPolicy.suspend + false"
			},
			want: []wantProblem{errAt(sp+".suspendActions[0].path",
				`not assignable (operator "+" is not a path); Suspend and Resume write the value through this path`)},
		},
		{
			name: "a default is assignable",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SuspendDefinition.SuspendActions[0].Path = ".spec.runPolicy.suspend // false"
			},
		},
		{
			name: "assignable guarded path",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SuspendDefinition.ResumeActions[0].Path = `.spec.runPolicy | select(. != null) | .suspend`
			},
		},
		{
			name: "missing path",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SuspendDefinition.ResumeActions[0].Path = ""
			},
			want: []wantProblem{errAt(sp+".resumeActions[0].path", "required: the path to write the value to")},
		},
		{
			name: "missing value",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SuspendDefinition.SuspendActions[0].Value = apiextensionsv1.JSON{}
			},
			want: []wantProblem{errAt(sp+".suspendActions[0].value", `required: the JSON value to write (e.g. "true")`)},
		},
		{
			name: "string value that is not JSON text",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SuspendDefinition.ResumeActions[0].Value = raw(`"yes"`)
			},
			want: []wantProblem{errAt(sp+".resumeActions[0].value", `the string "yes" is not JSON text`)},
		},
		{
			name: "JSON string and object values",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SuspendDefinition.SuspendActions[0].Value = raw(`"\"stop\""`)
				rootOf(k).SuspendDefinition.ResumeActions[0].Value = raw(`{"a": [1, null]}`)
			},
		},
		{
			name: "a value that is an expression is data, not checked as jq",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SuspendDefinition.SuspendActions[0].Value = raw(`"\"del(.a) | env\""`)
			},
		},
		{
			name: "no actions",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).SuspendDefinition.SuspendActions = nil
				rootOf(k).SuspendDefinition.ResumeActions = []SuspendAction{}
			},
			want: []wantProblem{
				errAt(sp+".suspendActions", "required: at least one action {path, value}"),
				errAt(sp+".resumeActions", "required: at least one action {path, value}"),
			},
		},
		{
			name: "suspend definition on a child",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").SuspendDefinition = rootOf(k).SuspendDefinition.DeepCopy()
				childOf(t, k, "worker").SuspendDefinition.SuspendActions[0].Path = "1"
			},
			want: []wantProblem{errAt(fWorker+".suspendDefinition.suspendActions[0].path", "not assignable (literal 1 is not a path)")},
		},
	})
}
