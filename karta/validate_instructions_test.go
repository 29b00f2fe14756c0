package karta

import "testing"

func TestValidateInstructions(t *testing.T) {
	runValidateCases(t, []validateCase{
		{
			name: "both block names",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.OptimizationInstructions = k.Spec.Instructions.DeepCopy()
			},
			want: []wantProblem{errAt("spec.optimizationInstructions",
				"instructions is also set; optimizationInstructions is the legacy name of the same block, keep only instructions")},
		},
		{
			name: "legacy block name alone",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.OptimizationInstructions, k.Spec.Instructions = k.Spec.Instructions, nil
			},
		},
		{
			name: "legacy block is checked too",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.OptimizationInstructions, k.Spec.Instructions = k.Spec.Instructions, nil
				k.Spec.OptimizationInstructions.GangScheduling.PodGroups[0].Members[1].ComponentName = "workr"
			},
			want: []wantProblem{errAt("spec.optimizationInstructions.gangScheduling.podGroups[0].members[1].componentName",
				`"workr" does not name a component `+haveAll)},
		},
		{
			name: "no gang scheduling",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.Instructions = &Instructions{}
			},
		},
		{
			name: "both gang forms",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroup = mustUnmarshalKarta(t, fixturePyTorchJobV2).Spec.Instructions.GangScheduling.PodGroup
			},
			want: []wantProblem{errAt(fGang, "podGroups and podGroup are both set; use either the alpha form podGroups or the v2 form podGroup")},
		},
		{
			name: "neither gang form",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
			},
			want: []wantProblem{errAt(fGang, "empty: set podGroups (alpha) or podGroup (v2)")},
		},
		{
			name: "duplicate group name",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				g := gangOf(k)
				g.PodGroups = append(g.PodGroups, PodGroup{Name: "other", Members: []PodGroupMember{{ComponentName: "master"}}},
					PodGroup{Name: "job", Members: []PodGroupMember{{ComponentName: "master"}}})
			},
			want: []wantProblem{errAt(fGang+".podGroups[2].name", `duplicate group name "job" (also used by `+fGroup0+")")},
		},
		{
			name: "group without name",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups[0].Name = ""
			},
			want: []wantProblem{errAt(fGroup0+".name", "required")},
		},
		{
			name: "group without members",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups[0].Members = nil
			},
			want: []wantProblem{errAt(fGroup0+".members", "must not be empty: list the components whose pods form the group")},
		},
		{
			name: "unknown member component",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups[0].Members[1].ComponentName = "workr"
			},
			want: []wantProblem{errAt(fGroup0+".members[1].componentName", `"workr" does not name a component `+haveAll)},
		},
		{
			name: "member without componentName",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups[0].Members[1].ComponentName = ""
			},
			want: []wantProblem{errAt(fGroup0+".members[1].componentName", "required: the component whose pods the member places "+haveAll)},
		},
		{
			name: "repeated member component",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups[0].Members[1].ComponentName = "master"
			},
			want: []wantProblem{errAt(fGroup0+".members[1].componentName",
				`component "master" is already in this group (`+fGroup0+".members[0]); list each component once")},
		},
		{
			name: "a component in two groups",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				g := gangOf(k)
				g.PodGroups = append(g.PodGroups, PodGroup{Name: "masters", Members: []PodGroupMember{{ComponentName: "master"}}})
			},
		},
		{
			name: "group mixing a member with instances",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				g := gangOf(k)
				g.PodGroups[0].Members = append(g.PodGroups[0].Members, PodGroupMember{ComponentName: "jobset"})
			},
			want: []wantProblem{
				warnAt(fGroup0+".members", `group "replicatedjob" mixes narrowing member "replicatedjob" (instances) with other members`),
				warnAt(fGroup0+".members[1].componentName", `the minimum of group "replicatedjob" can never be reached: member "jobset" `+
					`counts the pods of its descendant "replicatedjob", which `+fGroup0+`.members[0] counts again`),
			},
		},
		{
			name: "group mixing a member with a replicaSelector",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				g := gangOf(k)
				g.PodGroups[0].Members = append(g.PodGroups[0].Members, PodGroupMember{ComponentName: "leader"})
			},
			want: []wantProblem{
				warnAt(fGroup0+".members", `group "group" mixes narrowing member "group" (replicaSelector)`),
				warnAt(fGroup0+".members[0].componentName", `the minimum of group "group" can never be reached: member "group" `+
					`counts the pods of its descendant "leader", which `+fGroup0+`.members[1] counts again`),
			},
		},
		{
			name: "narrowing member alone",
			base: fixtureJobSet,
		},
		{
			name: "v2 group without name",
			base: fixturePyTorchJobV2,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroup.Name = ""
			},
			want: []wantProblem{errAt(fV2+".name", "required")},
		},
		{
			name: "v2 group without subGroups",
			base: fixturePyTorchJobV2,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroup.SubGroups = nil
			},
			want: []wantProblem{errAt(fV2+".subGroups", "must not be empty")},
		},
		{
			name: "v2 subgroup problems",
			base: fixturePyTorchJobV2,
			mutate: func(t *testing.T, k *Karta) {
				g := gangOf(k).PodGroup
				g.SubGroups = append(g.SubGroups, SubGroup{ComponentName: "master"}, SubGroup{ComponentName: "chief"}, SubGroup{})
			},
			want: []wantProblem{
				errAt(fV2+".subGroups[2].componentName", `component "master" is already in this group (`+fV2+".subGroups[0])"),
				errAt(fV2+".subGroups[3].componentName", `"chief" does not name a component (have: pytorchjob, master, worker)`),
				errAt(fV2+".subGroups[4].componentName", "required: the component whose pods the subgroup places"),
			},
		},
		{
			name: "topologies without names",
			base: fixturePyTorchJobV2,
			mutate: func(t *testing.T, k *Karta) {
				g := gangOf(k).PodGroup
				g.Topology.TopologyName = ""
				g.SubGroups[1].Topology.TopologyName = ""
			},
			want: []wantProblem{
				// Document order is the order of the fields in the types.
				errAt(fV2+".subGroups[1].topology.topologyName", "required: the name of the topology"),
				errAt(fV2+".topology.topologyName", "required: the name of the topology"),
			},
		},
		{
			name: "sibling subgroups",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "lws", SubGroups: []SubGroup{{ComponentName: "leader"}, {ComponentName: "worker"}}}
			},
		},
		{
			name: "subgroup under another nests",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "lws", SubGroups: []SubGroup{{ComponentName: "group"}, {ComponentName: "worker"}}}
			},
		},
		{
			name: "group per replica with leader and worker subgroups",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "lws", ComponentName: "group",
					SubGroups: []SubGroup{{ComponentName: "leader"}, {ComponentName: "worker"}}}
			},
		},
		{
			name: "subgroup above another is listed after it",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "lws", SubGroups: []SubGroup{{ComponentName: "leader"}, {ComponentName: "lws"}}}
			},
			want: []wantProblem{errAt(fV2+".subGroups[0].componentName",
				`"leader" nests under "lws" (`+fV2+".subGroups[1]), which must be listed before it")},
		},
		{
			name: "group component problems",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "lws", ComponentName: "group",
					SubGroups: []SubGroup{{ComponentName: "lws"}, {ComponentName: "group", PerInstance: true}}}
			},
			want: []wantProblem{
				errAt(fV2+".subGroups[0].componentName", `"lws" is not "group" or one of its descendants (`+fV2+
					".componentName); a subgroup lies in its group's component"),
				errAt(fV2+".subGroups[1].perInstance", `component "group" has no instanceIdPath, so it has no instances to split by`),
			},
		},
		{
			name: "per-instance subgroup of the group's own component",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", ComponentName: "replicatedjob",
					SubGroups: []SubGroup{{ComponentName: "replicatedjob", PerInstance: true}}}
			},
			want: []wantProblem{errAt(fV2+".subGroups[0].perInstance", `"replicatedjob" is the group's component: its groups are per instance already`)},
		},
		{
			name: "unknown group component",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "lws", ComponentName: "gruop", SubGroups: []SubGroup{{ComponentName: "leader"}}}
			},
			want: []wantProblem{errAt(fV2+".componentName", `"gruop" does not name a component`)},
		},
		{
			name: "per-instance subgroups",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{{ComponentName: "replicatedjob", PerInstance: true}}}
			},
		},
		{
			name: "nesting under a per-instance subgroup",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.StructureDefinition.ChildComponents = append(k.Spec.StructureDefinition.ChildComponents,
					Component{Name: "pod", OwnerRef: ptrTo("replicatedjob")})
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{
					{ComponentName: "replicatedjob", PerInstance: true}, {ComponentName: "pod"}}}
			},
			want: []wantProblem{errAt(fV2+".subGroups[1].componentName", `"pod" is under "replicatedjob" (`+fV2+
				".subGroups[0]), whose subgroups are per instance; a subgroup cannot nest under a per-instance subgroup")},
		},
		{
			name: "per-replica leaves of per-instance subgroups",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{{ComponentName: "replicatedjob", PerInstance: true,
					PerReplica: &SubGroupReplicas{CountPath: ".spec.replicatedJobs[]?.replicas // 1", KeyPath: `.metadata.labels["jobset.sigs.k8s.io/job-index"]`}}}}
			},
		},
		{
			name: "per-replica paths missing or broken",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{{ComponentName: "replicatedjob", PerInstance: true,
					PerReplica: &SubGroupReplicas{KeyPath: ".metadata.labels[\""}}}}
			},
			want: []wantProblem{
				errAt(fV2+".subGroups[0].perReplica.countPath", "required: a path on the object that yields the number of replicas of each subgroup"),
				errAt(fV2+".subGroups[0].perReplica.keyPath", "invalid jq: "),
			},
		},
		{
			name: "nesting under a per-replica subgroup",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.StructureDefinition.ChildComponents = append(k.Spec.StructureDefinition.ChildComponents,
					Component{Name: "pod", OwnerRef: ptrTo("replicatedjob")})
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{
					{ComponentName: "replicatedjob", PerReplica: &SubGroupReplicas{CountPath: "1", KeyPath: ".metadata.name"}}, {ComponentName: "pod"}}}
			},
			want: []wantProblem{errAt(fV2+".subGroups[1].componentName", `"pod" is under "replicatedjob" (`+fV2+
				".subGroups[0]), whose subgroups split per replica; a subgroup cannot nest under a per-replica subgroup")},
		},
		{
			name: "a stated subgroup minimum",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{{ComponentName: "replicatedjob", PerInstance: true,
					MinMemberPath: ".spec.replicatedJobs[]? | .minAvailable"}}}
			},
		},
		{
			name: "a stated subgroup minimum with leaves, broken, and nested under",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.StructureDefinition.ChildComponents = append(k.Spec.StructureDefinition.ChildComponents,
					Component{Name: "pod", OwnerRef: ptrTo("replicatedjob")})
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{
					{ComponentName: "replicatedjob", MinMemberPath: "1", PerReplica: &SubGroupReplicas{CountPath: "1", KeyPath: ".metadata.name"}},
					{ComponentName: "pod", MinMemberPath: ".spec | ("}}}
			},
			want: []wantProblem{
				errAt(fV2+".subGroups[1].componentName", `"pod" is under "replicatedjob" (`+fV2+
					".subGroups[0]), whose subgroups split per replica; a subgroup cannot nest under a per-replica subgroup"),
				errAt(fV2+".subGroups[1].minMemberPath", "invalid jq: "),
			},
		},
		{
			name: "leaves needed, beside a stated subgroup minimum",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{{ComponentName: "replicatedjob", PerInstance: true,
					MinMemberPath: ".spec.replicatedJobs[]? | .minAvailable",
					PerReplica: &SubGroupReplicas{CountPath: ".spec.replicatedJobs[]?.replicas // 1", KeyPath: `.metadata.labels["jobset.sigs.k8s.io/job-index"]`,
						MinCountPath: ".spec.replicatedJobs[]? | .minReplicas"}}}}
			},
		},
		{
			name: "leaves needed, broken",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{{ComponentName: "replicatedjob", PerInstance: true,
					PerReplica: &SubGroupReplicas{CountPath: "2", KeyPath: ".metadata.name", MinCountPath: ".spec | ("}}}}
			},
			want: []wantProblem{errAt(fV2+".subGroups[0].perReplica.minCountPath", "invalid jq: ")},
		},
		{
			name: "nesting under a stated subgroup minimum",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				k.Spec.StructureDefinition.ChildComponents = append(k.Spec.StructureDefinition.ChildComponents,
					Component{Name: "pod", OwnerRef: ptrTo("replicatedjob")})
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "jobset", SubGroups: []SubGroup{
					{ComponentName: "replicatedjob", MinMemberPath: "2"}, {ComponentName: "pod"}}}
			},
			want: []wantProblem{errAt(fV2+".subGroups[1].componentName", `"pod" is under "replicatedjob" (`+fV2+
				".subGroups[0]), whose minimum is stated (minMemberPath); a subgroup cannot nest under one")},
		},
		{
			name: "no nesting check on a broken tree",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups = nil
				gangOf(k).PodGroup = &PodGroupV2{Name: "lws", SubGroups: []SubGroup{{ComponentName: "group"}, {ComponentName: "worker"}}}
				childOf(t, k, "leader").OwnerRef = ptrTo("nobody")
			},
			want: []wantProblem{errAt("spec.structureDefinition.childComponents[1].ownerRef", `ownerRef "nobody" does not name a component`)},
		},
	})
}

// Gang traps: groups that validate but cannot work at run time.
func TestValidateGangTraps(t *testing.T) {
	runValidateCases(t, []validateCase{
		{
			name: "replicaSelector on the only member without the replica key",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				m := &gangOf(k).PodGroups[0].Members[0]
				m.GroupByKeyPaths = m.GroupByKeyPaths[:1]
			},
			want: []wantProblem{warnAt(fGroup0+".members[0]", `group "group" has one member, "group", whose replicaSelector counts one `+
				`replica in minMember, but no groupByKeyPaths entry reads the replica key: unless another key tells the replicas `+
				`apart, the pods of several replicas fall into one group that spans them and are unmatched at run time (one `+
				`replica alone is matched); add the replica key `+
				`.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"] to groupByKeyPaths`)},
		},
		{
			name: "replicaSelector on the only member without any key",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups[0].Members[0].GroupByKeyPaths = nil
			},
			want: []wantProblem{warnAt(fGroup0+".members[0]", `no groupByKeyPaths entry reads the replica key`)},
		},
		{
			name: "the replica key spaced another way",
			base: fixtureLWS,
			mutate: func(t *testing.T, k *Karta) {
				gangOf(k).PodGroups[0].Members[0].GroupByKeyPaths[1] = `.metadata .labels[ "leaderworkerset.sigs.k8s.io/group-index" ]`
			},
		},
		{
			name: "instances on the only member without the id key",
			base: fixtureJobSet,
			mutate: func(t *testing.T, k *Karta) {
				m := &gangOf(k).PodGroups[0].Members[0]
				m.GroupByKeyPaths = m.GroupByKeyPaths[:1]
			},
			want: []wantProblem{warnAt(fGroup0+".members[0]", `group "replicatedjob" has one member, "replicatedjob", whose instances `+
				`each count alone in minMember, but no groupByKeyPaths entry reads the instance id`)},
		},
		{
			name: "a descendant claimed by another group",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				g := gangOf(k)
				g.PodGroups = append(g.PodGroups, PodGroup{Name: "whole", Members: []PodGroupMember{{ComponentName: "pytorchjob"}}})
			},
			want: []wantProblem{
				warnAt(fGang+".podGroups[1].members[0].componentName", `the minimum of group "whole" can never be reached: member "pytorchjob" `+
					`counts the pods of its descendant "master", but `+fGroup0+`.members[0] (group "job") claims them first; `+
					`name only one of the two, or give that member filters`),
				warnAt(fGang+".podGroups[1].members[0].componentName", `counts the pods of its descendant "worker", but `+fGroup0+`.members[1] (group "job")`),
			},
		},
		{
			name: "a descendant whose member filters may pass its pods on",
			base: fixturePyTorchJob,
			mutate: func(t *testing.T, k *Karta) {
				g := gangOf(k)
				for i := range g.PodGroups[0].Members {
					g.PodGroups[0].Members[i].Filters = []string{`.metadata.labels["gang"] == "split"`}
				}
				g.PodGroups = append(g.PodGroups, PodGroup{Name: "whole", Members: []PodGroupMember{{ComponentName: "pytorchjob"}}})
			},
		},
	})
}
