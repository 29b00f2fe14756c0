package karta

import (
	"testing"
)

func TestValidateStructure(t *testing.T) {
	runValidateCases(t, []validateCase{
		{
			name:   "no metadata.name",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { k.Name = "" },
			want: []wantProblem{
				errAt("metadata.name", "required: the Karta's name, used in its hooks' errors and in the registry"),
			},
		},
		{
			name: "missing root",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.StructureDefinition.RootComponent = nil
			},
			want: []wantProblem{
				errAt(fRoot, "required: the root component describes the workload object itself"),
				errAt(fMaster+".ownerRef", `ownerRef "pytorchjob" does not name a component (have: master, worker)`),
				errAt(fWorker+".ownerRef", `ownerRef "pytorchjob" does not name a component (have: master, worker)`),
			},
		},
		{
			name:   "empty name",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "worker").Name = "" },
			want: []wantProblem{
				errAt(fWorker+".name", "required: every component needs a unique name"),
				errAt(fGroup0+".members[1].componentName", `"worker" does not name a component (have: pytorchjob, master)`),
			},
		},
		{
			name: "empty root name",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).Name = ""
				for _, n := range []string{"master", "worker"} {
					childOf(t, k, n).OwnerRef = ptrTo("master")
				}
				childOf(t, k, "master").OwnerRef = nil
				k.Spec.StructureDefinition.ChildComponents = k.Spec.StructureDefinition.ChildComponents[1:]
				gangOf(k).PodGroups[0].Members = gangOf(k).PodGroups[0].Members[1:]
			},
			want: []wantProblem{
				errAt(fRoot+".name", "required"),
				errAt(fMaster+".ownerRef", `ownerRef "master" does not name a component (have: worker)`),
				// The worker is now the only pod-bearing component, and its
				// replicasPath (a `// 1` default) is the ReviseReplica target.
			},
		},
		{
			name: "each duplicate name once, at the duplicate",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				sd := &k.Spec.StructureDefinition
				w := *childOf(t, k, "worker")
				sd.ChildComponents = append(sd.ChildComponents, w, w)
			},
			want: []wantProblem{
				errAt("spec.structureDefinition.childComponents[2].name",
					`duplicate component name "worker" (also used by spec.structureDefinition.childComponents[1]); names must be unique`),
				errAt("spec.structureDefinition.childComponents[3].name", `duplicate component name "worker"`),
			},
		},
		{
			name:   "child named like the root",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "master").Name = "pytorchjob" },
			want: []wantProblem{
				errAt(fMaster+".name", `duplicate component name "pytorchjob" (also used by spec.structureDefinition.rootComponent)`),
				errAt(fMaster+".ownerRef", `ownerRef "pytorchjob" names the component itself`),
				errAt(fGroup0+".members[0].componentName", `"master" does not name a component`),
			},
		},
		{
			name:   "root kind missing",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { rootOf(k).Kind = nil },
			want:   []wantProblem{errAt(fRoot+".kind", "required on the root component")},
		},
		{
			name:   "root kind without version",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { rootOf(k).Kind.Version = "" },
			want:   []wantProblem{errAt(fRoot+".kind.version", "required: the API version")},
		},
		{
			name:   "root kind without kind",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { rootOf(k).Kind.Kind = "" },
			want:   []wantProblem{errAt(fRoot+".kind.kind", "required: the name of the kind")},
		},
		{
			name:   "root kind with empty group",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { rootOf(k).Kind.Group = "" },
			want: []wantProblem{errAt(fRoot+".kind.group",
				`required for "PyTorchJob": only the core kinds Pod and ReplicationController have an empty group`)},
		},
		{
			name: "root Pod in the core group",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).Kind = &GroupVersionKind{Version: "v1", Kind: "Pod"}
			},
		},
		{
			name: "root ReplicationController in the core group",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				rootOf(k).Kind = &GroupVersionKind{Version: "v1", Kind: "ReplicationController"}
			},
		},
		{
			name:   "root with ownerRef",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { rootOf(k).OwnerRef = ptrTo("master") },
			want:   []wantProblem{errAt(fRoot+".ownerRef", "the root component has no owner; remove ownerRef")},
		},
		{
			name:   "root with empty ownerRef",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { rootOf(k).OwnerRef = ptrTo("") },
			want:   []wantProblem{errAt(fRoot+".ownerRef", "the root component has no owner")},
		},
		{
			name:   "root without statusDefinition",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { rootOf(k).StatusDefinition = nil },
			want:   []wantProblem{errAt(fStatus, "required on the root component")},
		},
		{
			name:   "child without ownerRef",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "worker").OwnerRef = nil },
			want:   []wantProblem{errAt(fWorker+".ownerRef", "required: name the parent component "+haveAll)},
		},
		{
			name:   "child with empty ownerRef",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "worker").OwnerRef = ptrTo("") },
			want:   []wantProblem{errAt(fWorker+".ownerRef", "must not be empty: name the parent component "+haveAll)},
		},
		{
			name:   "child with unknown ownerRef",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "worker").OwnerRef = ptrTo("workr") },
			want:   []wantProblem{errAt(fWorker+".ownerRef", `ownerRef "workr" does not name a component `+haveAll)},
		},
		{
			name:   "child owning itself",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "worker").OwnerRef = ptrTo("worker") },
			want:   []wantProblem{errAt(fWorker+".ownerRef", `ownerRef "worker" names the component itself; name its parent`)},
		},
		{
			name:   "child owned by a sibling",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "worker").OwnerRef = ptrTo("master") },
			// Valid; only the gang now counts the workers twice.
			want: []wantProblem{warnAt(fGroup0+".members[0].componentName", `member "master" counts the pods of its descendant "worker"`)},
		},
		{
			name:   "child kind is optional",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "worker").Kind = nil },
		},
		{
			name: "child kind may have an empty group",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").Kind = &GroupVersionKind{Version: "v1", Kind: "Service"}
			},
		},
		{
			name: "child kind without version and kind",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").Kind = &GroupVersionKind{Group: "batch"}
			},
			want: []wantProblem{
				errAt(fWorker+".kind.version", "required"),
				errAt(fWorker+".kind.kind", "required"),
			},
		},
		{
			name: "ownership cycle reported once",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "master").OwnerRef = ptrTo("worker")
				childOf(t, k, "worker").OwnerRef = ptrTo("master")
			},
			want: []wantProblem{errAt(fMaster+".ownerRef",
				`ownership cycle master → worker → master; every chain of ownerRefs must end at the root component "pytorchjob"`)},
		},
		{
			name: "cycle with a tail, told from the first component",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				sd := &k.Spec.StructureDefinition
				sd.ChildComponents = append(sd.ChildComponents,
					Component{Name: "a", OwnerRef: ptrTo("b")},
					Component{Name: "b", OwnerRef: ptrTo("c")},
					Component{Name: "c", OwnerRef: ptrTo("b")},
				)
				childOf(t, k, "master").OwnerRef = ptrTo("a")
			},
			want: []wantProblem{errAt("spec.structureDefinition.childComponents[3].ownerRef", "ownership cycle b → c → b;")},
		},
		{
			name: "two cycles",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				sd := &k.Spec.StructureDefinition
				sd.ChildComponents = append(sd.ChildComponents,
					Component{Name: "a", OwnerRef: ptrTo("a2")},
					Component{Name: "a2", OwnerRef: ptrTo("a")},
					Component{Name: "b", OwnerRef: ptrTo("b2")},
					Component{Name: "b2", OwnerRef: ptrTo("b")},
				)
			},
			want: []wantProblem{
				errAt("spec.structureDefinition.childComponents[2].ownerRef", "ownership cycle a → a2 → a;"),
				errAt("spec.structureDefinition.childComponents[4].ownerRef", "ownership cycle b → b2 → b;"),
			},
		},
		{
			name: "no cycle check while names are duplicated",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "master").OwnerRef = ptrTo("worker")
				childOf(t, k, "worker").OwnerRef = ptrTo("master")
				sd := &k.Spec.StructureDefinition
				sd.ChildComponents = append(sd.ChildComponents, Component{Name: "worker", OwnerRef: ptrTo("pytorchjob")})
			},
			want: []wantProblem{errAt("spec.structureDefinition.childComponents[2].name", `duplicate component name "worker"`)},
		},
		{
			name: "cycle without a root",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.StructureDefinition.RootComponent = nil
				childOf(t, k, "master").OwnerRef = ptrTo("worker")
				childOf(t, k, "worker").OwnerRef = ptrTo("master")
			},
			want: []wantProblem{
				errAt(fRoot, "required"),
				errAt(fMaster+".ownerRef", "ownership cycle master → worker → master; every chain of ownerRefs must end at the root component"),
			},
		},
	})
}

func TestValidateSpecDefinitions(t *testing.T) {
	runValidateCases(t, []validateCase{
		{
			name:   "two spec styles",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "worker").SpecDefinition.PodSpecPath = ".spec.x" },
			want: []wantProblem{errAt(fWorker+".specDefinition",
				"more than one spec style is set (podTemplateSpecPath, podSpecPath); keep exactly one")},
		},
		{
			name: "three spec styles",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				sd := childOf(t, k, "worker").SpecDefinition
				sd.PodSpecPath = ".spec.x"
				sd.FragmentedPodSpecDefinition = &FragmentedPodSpecDefinition{LabelsPath: ".spec.labels"}
			},
			want: []wantProblem{errAt(fWorker+".specDefinition",
				"(podTemplateSpecPath, podSpecPath, fragmentedPodSpecDefinition)")},
		},
		{
			name: "podSpecPath with metadataPath",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").SpecDefinition = &SpecDefinition{PodSpecPath: ".spec.w.spec", MetadataPath: ".spec.w.metadata"}
			},
		},
		{
			name: "a view of the component's style",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").SpecDefinition.View = &SpecView{
					PodTemplateSpec: `.spec.pytorchReplicaSpecs.Worker.template + {metadata: {labels: {a: "b"}}}`}
			},
		},
		{
			name: "a view of another style",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").SpecDefinition.View = &SpecView{Image: `.spec.image`, PodSpec: `.spec.x`}
			},
			want: []wantProblem{
				errAt(fWorker+".specDefinition.view.podSpec",
					"a view of podSpec is only valid with podSpecPath; this component's spec style is podTemplateSpecPath"),
				errAt(fWorker+".specDefinition.view.image",
					"a view of image is only valid with fragmentedPodSpecDefinition; this component's spec style is podTemplateSpecPath"),
			},
		},
		{
			name: "a view that is not jq",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").SpecDefinition.View = &SpecView{PodTemplateSpec: `.spec | now`}
			},
			want: []wantProblem{errAt(fWorker+".specDefinition.view.podTemplateSpec", "now")},
		},
		{
			name: "metadataPath without podSpecPath",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").SpecDefinition.MetadataPath = ".spec.w.metadata"
			},
			want: []wantProblem{errAt(fWorker+".specDefinition.metadataPath",
				"metadataPath is only valid with podSpecPath; set podSpecPath or remove metadataPath")},
		},
		{
			name: "instanceIdPath without componentInstanceSelector",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "replicatedjob").PodSelector.ComponentInstanceSelector = nil
			},
			want: []wantProblem{errAt(fJSChild+".podSelector.componentInstanceSelector",
				"required because instanceIdPath is set")},
		},
		{
			name: "instanceIdPath without any podSelector",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "replicatedjob").PodSelector = nil
			},
			want: []wantProblem{errAt(fJSChild+".podSelector.componentInstanceSelector", "required because instanceIdPath is set")},
		},
		{
			name:   "componentInstanceSelector without instanceIdPath",
			base:   fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "replicatedjob").InstanceIDPath = "" },
			want: []wantProblem{
				// Without instances the component is ReviseReplica's target.
				warnAt(fJSChild+".scaleDefinition.replicasPath", `not assignable (operator "*" is not a path)`),
				errAt(fJSChild+".podSelector.componentInstanceSelector",
					`componentInstanceSelector needs instanceIdPath on component "replicatedjob"`),
			},
		},
		{
			name:   "pod-bearing component without type selector among several",
			base:   fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "worker").PodSelector = nil },
			want: []wantProblem{errAt(fWorker+".podSelector",
				"componentTypeSelector is required: 2 components are pod-bearing (master, worker)")},
		},
		{
			name: "several pod-bearing components without type selectors",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "master").PodSelector.ComponentTypeSelector = nil
				childOf(t, k, "worker").PodSelector.ComponentTypeSelector = nil
				rootOf(k).SpecDefinition = &SpecDefinition{PodSpecPath: ".spec.launcher"}
			},
			want: []wantProblem{
				errAt(fRoot+".podSelector", "3 components are pod-bearing (pytorchjob, master, worker)"),
				errAt(fMaster+".podSelector", "componentTypeSelector is required"),
				errAt(fWorker+".podSelector", "componentTypeSelector is required"),
			},
		},
		{
			name: "matchLabels alone selects",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").PodSelector.ComponentTypeSelector = &ComponentTypeSelector{
					MatchLabels: map[string]string{"training.kubeflow.org/replica-type": "worker"}}
			},
		},
		{
			name: "a type selector needs keyPath or matchLabels",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").PodSelector.ComponentTypeSelector = &ComponentTypeSelector{}
			},
			want: []wantProblem{errAt(fWorker+".podSelector.componentTypeSelector", "required: keyPath (a path, evaluated on a pod, "+
				"that tells whether it belongs to the component) or matchLabels (labels every pod of the component carries)")},
		},
		{
			name: "value without keyPath, labels a pod cannot carry",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").PodSelector.ComponentTypeSelector = &ComponentTypeSelector{Value: ptrTo("worker"),
					MatchLabels: map[string]string{"bad key!": "worker", "ok": "not a value"}}
			},
			want: []wantProblem{
				errAt(fWorker+".podSelector.componentTypeSelector.value", "value needs keyPath"),
				errAt(fWorker+".podSelector.componentTypeSelector.matchLabels[bad key!]", `invalid label key "bad key!"`),
				errAt(fWorker+".podSelector.componentTypeSelector.matchLabels[ok]", `invalid label value "not a value"`),
			},
		},
		{
			name:   "a single pod-bearing component needs no type selector",
			base:   fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) { childOf(t, k, "replicatedjob").PodSelector.ComponentTypeSelector = nil },
		},
		{
			name: "components without a spec need no type selector",
			base: fixtureLWS, // group has none
		},
		{
			name: "empty selector paths",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "group").PodSelector.ReplicaSelector.KeyPath = ""
				childOf(t, k, "leader").PodSelector.ComponentTypeSelector.KeyPath = ""
			},
			want: []wantProblem{
				errAt("spec.structureDefinition.childComponents[0].podSelector.replicaSelector.keyPath", "required"),
				errAt("spec.structureDefinition.childComponents[1].podSelector.componentTypeSelector", "required: keyPath"),
			},
		},
		{
			name: "empty idPath",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "replicatedjob").PodSelector.ComponentInstanceSelector.IDPath = ""
			},
			want: []wantProblem{errAt(fJSChild+".podSelector.componentInstanceSelector.idPath", "required")},
		},
	})
}

func TestValidateAdditionalChildKinds(t *testing.T) {
	set := func(kinds ...GroupVersionKind) func(*testing.T, *Karta) {
		return func(t *testing.T, k *Karta) { k.Spec.StructureDefinition.AdditionalChildKinds = kinds }
	}
	runValidateCases(t, []validateCase{
		{
			name:   "distinct kinds",
			base:   fixturePyTorchJob,
			mutate: set(GroupVersionKind{Version: "v1", Kind: "Service"}, GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}),
		},
		{
			name:   "same kind in different groups",
			base:   fixturePyTorchJob,
			mutate: set(GroupVersionKind{Group: "a.io", Version: "v1", Kind: "Job"}, GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}),
		},
		{
			name: "duplicate by full GVK",
			base: fixturePyTorchJob,
			mutate: set(
				GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
				GroupVersionKind{Version: "v1", Kind: "Service"},
				GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
			),
			want: []wantProblem{errAt(fExtra+"[2]", "duplicate of "+fExtra+"[0] (batch/v1, Kind=Job); list each kind once")},
		},
		{
			name:   "missing version and kind",
			base:   fixturePyTorchJob,
			mutate: set(GroupVersionKind{Group: "batch"}),
			want: []wantProblem{
				errAt(fExtra+"[0].version", "required"),
				errAt(fExtra+"[0].kind", "required"),
			},
		},
		{
			name:   "equal to a component's kind",
			base:   fixturePyTorchJob,
			mutate: set(GroupVersionKind{Version: "v1", Kind: "Pod"}),
			want:   []wantProblem{warnAt(fExtra+"[0]", `/v1, Kind=Pod is already the kind of component "master"; remove it`)},
		},
		{
			name:   "equal to the root's kind",
			base:   fixturePyTorchJob,
			mutate: set(GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}),
			want:   []wantProblem{warnAt(fExtra+"[0]", `already the kind of component "pytorchjob"`)},
		},
	})
}

func TestValidateEmptyDefinitions(t *testing.T) {
	runValidateCases(t, []validateCase{
		{
			name: "empty spec definition",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "group").SpecDefinition = &SpecDefinition{}
			},
			want: []wantProblem{warnAt("spec.structureDefinition.childComponents[0].specDefinition",
				`the spec definition is empty, so component "group" is not pod-bearing`)},
		},
		{
			name: "empty fragmented definition",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "group").SpecDefinition = &SpecDefinition{FragmentedPodSpecDefinition: &FragmentedPodSpecDefinition{}}
			},
			want: []wantProblem{warnAt("spec.structureDefinition.childComponents[0].specDefinition.fragmentedPodSpecDefinition",
				"the fragmented definition has no path")},
		},
		{
			name: "empty scale definition",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").ScaleDefinition = &ScaleDefinition{}
			},
			want: []wantProblem{warnAt(fWorker+".scaleDefinition", `the scale definition is empty, so component "worker" has no scale`)},
		},
		{
			name: "scale definition with only a minimum",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").ScaleDefinition = &ScaleDefinition{MinReplicasPath: ".spec.min"}
			},
		},
		{
			name: "statusDefinition on a child",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").StatusDefinition = &StatusDefinition{
					PhaseDefinition: &PhaseDefinition{Path: ".status.phase"},
					StatusMappings:  StatusMappings{Running: []StatusMatcher{{ByPhase: "Running"}}},
				}
			},
			want: []wantProblem{warnAt(fWorker+".statusDefinition",
				`only the root component's statusDefinition is used; remove it from component "worker"`)},
		},
		{
			name: "a child's statusDefinition is still checked",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				childOf(t, k, "worker").StatusDefinition = &StatusDefinition{
					PhaseDefinition: &PhaseDefinition{Path: "env.PHASE"},
					StatusMappings:  StatusMappings{Running: []StatusMatcher{{}}},
				}
			},
			want: []wantProblem{
				warnAt(fWorker+".statusDefinition", "only the root component's statusDefinition is used"),
				errAt(fWorker+".statusDefinition.phaseDefinition.path", `"env" is not allowed`),
				errAt(fWorker+".statusDefinition.statusMappings.running[0]", "needs at least one"),
			},
		},
	})
}
