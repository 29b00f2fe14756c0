package interpreter

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/karta"
)

// assertPlaceOneAgrees checks that PlacePod gives every grouped pod the
// group's name and minMember: minMember is a property of the group.
func assertPlaceOneAgrees(t *testing.T, g *gangModel, obj map[string]any, pods []map[string]any, res *GangResult) {
	t.Helper()
	minOf := map[string]int64{}
	subOf := map[string]string{}
	for _, grp := range res.Groups {
		minOf[grp.Name] = grp.MinMember
		for _, sg := range grp.SubGroups {
			for _, pod := range sg.Pods {
				subOf[pod] = sg.Name
			}
		}
	}
	for i, pl := range res.Placements {
		var pod map[string]any
		for _, p := range pods {
			if PodKey(p) == pl.Pod {
				pod = p
			}
		}
		require.NotNil(t, pod, "placement %d", i)
		pp, reason, err := g.placeOne(context.Background(), gojqEvaluator{}, obj, pod)
		require.NoError(t, err)
		require.Empty(t, reason, pl.Pod)
		assert.Equal(t, PodPlacement{Component: pl.Component, Instance: pl.Instance, Replica: pl.Replica,
			Group: pl.Group, MinMember: minOf[pl.Group], SubGroup: subOf[pl.Pod]}, *pp, pl.Pod)
	}
}

// TestMinMemberWorkedExamples is the worked examples of minMember
// (docs/karta.md, "Minimum members"), one by one, on the operators' real
// objects and pods.
func TestMinMemberWorkedExamples(t *testing.T) {
	cases := []struct {
		name          string
		karta, object string
		groups        []Group
	}{
		{"PyTorchJob master 1 worker 3", "pytorchjob", "pytorchjob", []Group{
			{Name: "pg-u-job-train", Definition: "job", MinMember: 4,
				Pods: []string{"ml/train-master-0", "ml/train-worker-0", "ml/train-worker-1", "ml/train-worker-2"}},
		}},
		{"elastic PyTorchJob worker 4 minReplicas 2", "pytorchjob", "pytorchjob-elastic", []Group{
			{Name: "pg-u-job-train", Definition: "job", MinMember: 3,
				Pods: []string{"ml/train-master-0", "ml/train-worker-0", "ml/train-worker-1", "ml/train-worker-2", "ml/train-worker-3"}},
		}},
		{"JobSet driver 1x1 workers 2x4", "jobset", "jobset", []Group{
			{Name: "pg-u-replicatedjob-js-driver", Definition: "replicatedjob", MinMember: 1,
				Pods: []string{"research/js-driver-0-0-abcde"}},
			{Name: "pg-u-replicatedjob-js-workers", Definition: "replicatedjob", MinMember: 8,
				Pods: []string{"research/js-workers-0-0-q00", "research/js-workers-0-1-q01", "research/js-workers-0-2-q02",
					"research/js-workers-0-3-q03", "research/js-workers-1-0-k2x9p", "research/js-workers-1-1-q11",
					"research/js-workers-1-2-q12", "research/js-workers-1-3-q13"}},
		}},
		{"LeaderWorkerSet replicas 2 size 4", "leaderworkerset", "leaderworkerset", []Group{
			{Name: "pg-u-group-lws-0", Definition: "group", MinMember: 4,
				Pods: []string{"serving/lws-0", "serving/lws-0-1", "serving/lws-0-2", "serving/lws-0-3"}},
			{Name: "pg-u-group-lws-1", Definition: "group", MinMember: 4,
				Pods: []string{"serving/lws-1", "serving/lws-1-1", "serving/lws-1-2", "serving/lws-1-3"}},
		}},
		{"RayCluster head 1 workers 3 min 1", "raycluster", "raycluster", []Group{
			{Name: "pg-u-cluster-rc", Definition: "cluster", MinMember: 2,
				Pods: []string{"ray/rc-head-8kq4w", "ray/rc-small-group-worker-2fj6d", "ray/rc-small-group-worker-b5m9t", "ray/rc-small-group-worker-x7k2q"}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := compileGang(t, gangKarta(t, tc.karta))
			obj := gangObj(t, tc.object)
			pods := gangDocs(t, tc.object+".pods")
			res := runGang(t, g, obj, pods)
			assert.Equal(t, tc.groups, res.Groups)
			assert.Empty(t, res.Unmatched)
			assertPlaceOneAgrees(t, g, obj, pods, res)
		})
	}
}

// TestMinMemberV2Examples is the v2 podGroup's examples: subgroups count
// workload-wide, the group is their sum, topologies pass through.
func TestMinMemberV2Examples(t *testing.T) {
	two := int64(2)
	t.Run("PyTorchJob", func(t *testing.T) {
		g := compileGang(t, gangKarta(t, "pytorchjob-v2"))
		obj := gangObj(t, "pytorchjob")
		pods := gangDocs(t, "pytorchjob.pods")
		res := runGang(t, g, obj, pods)
		assert.Equal(t, []Group{{Name: "pg-u-job", Definition: "job", MinMember: 4,
			Pods:         []string{"ml/train-master-0", "ml/train-worker-0", "ml/train-worker-1", "ml/train-worker-2"},
			MinSubGroups: &two,
			Topology:     &karta.Topology{TopologyName: "cluster-topology", PreferredTopologyLevel: "rack"},
			SubGroups: []SubGroup{
				{Name: "master", MinMember: 1, Pods: []string{"ml/train-master-0"}},
				{Name: "worker", MinMember: 3, Pods: []string{"ml/train-worker-0", "ml/train-worker-1", "ml/train-worker-2"},
					Topology: &karta.Topology{TopologyName: "cluster-topology", RequiredTopologyLevel: "zone"}},
			}}}, res.Groups)
		assert.Equal(t, "pg-u-job", res.Placements[0].Group)
		assertPlaceOneAgrees(t, g, obj, pods, res)
	})
	t.Run("LeaderWorkerSet", func(t *testing.T) {
		g := compileGang(t, gangKarta(t, "leaderworkerset-v2"))
		obj := gangObj(t, "leaderworkerset")
		pods := gangDocs(t, "leaderworkerset.pods")
		res := runGang(t, g, obj, pods)
		require.Len(t, res.Groups, 1)
		grp := res.Groups[0]
		assert.Equal(t, "pg-u-lws", grp.Name)
		assert.Equal(t, int64(8), grp.MinMember)
		assert.Equal(t, &two, grp.MinSubGroups)
		assert.Nil(t, grp.Topology)
		assert.Equal(t, []SubGroup{
			{Name: "leader", MinMember: 2, Pods: []string{"serving/lws-0", "serving/lws-1"}},
			{Name: "worker", MinMember: 6, Pods: []string{"serving/lws-0-1", "serving/lws-0-2", "serving/lws-0-3",
				"serving/lws-1-1", "serving/lws-1-2", "serving/lws-1-3"}},
		}, grp.SubGroups)
		assertPlaceOneAgrees(t, g, obj, pods, res)
	})
	t.Run("a subgroup on an ancestor covers its descendants", func(t *testing.T) {
		k := gangKarta(t, "leaderworkerset-v2")
		k.Spec.Instructions.GangScheduling.PodGroup.SubGroups = []karta.SubGroup{{ComponentName: "group"}}
		res := runGang(t, compileGang(t, k), gangObj(t, "leaderworkerset"), gangDocs(t, "leaderworkerset.pods"))
		require.Len(t, res.Groups, 1)
		// group: own 2 × S (1 + 3), no scaled ancestor.
		assert.Equal(t, int64(8), res.Groups[0].MinMember)
		require.Len(t, res.Groups[0].SubGroups, 1)
		assert.Len(t, res.Groups[0].SubGroups[0].Pods, 8)
	})
	t.Run("a pod no subgroup covers stays in the group", func(t *testing.T) {
		k := gangKarta(t, "pytorchjob-v2")
		k.Spec.Instructions.GangScheduling.PodGroup.SubGroups = []karta.SubGroup{{ComponentName: "worker"}}
		one := int64(1)
		res := runGang(t, compileGang(t, k), gangObj(t, "pytorchjob"), gangDocs(t, "pytorchjob.pods"))
		require.Len(t, res.Groups, 1)
		grp := res.Groups[0]
		assert.Equal(t, int64(3), grp.MinMember)
		assert.Equal(t, &one, grp.MinSubGroups)
		assert.Contains(t, grp.Pods, "ml/train-master-0")
		assert.NotContains(t, grp.SubGroups[0].Pods, "ml/train-master-0")
	})
	t.Run("filters and keys do not apply; the group exists without pods", func(t *testing.T) {
		g := compileGang(t, gangKarta(t, "pytorchjob-v2"))
		res := runGang(t, g, gangObj(t, "pytorchjob"), nil)
		require.Len(t, res.Groups, 1)
		assert.Equal(t, int64(4), res.Groups[0].MinMember)
		assert.Empty(t, res.Groups[0].Pods)
	})
}

// TestMinMemberSpans: a member whose component has instances or replicas
// scopes the gang to one of them; a group whose pods span several is
// invalid, and naming the common ancestor is the way to gang them.
func TestMinMemberSpans(t *testing.T) {
	t.Run("instances", func(t *testing.T) {
		k := gangKarta(t, "jobset")
		members := k.Spec.Instructions.GangScheduling.PodGroups[0].Members
		members[0].GroupByKeyPaths = members[0].GroupByKeyPaths[:1] // jobset-name only
		g := compileGang(t, k)
		obj := gangObj(t, "jobset")
		pods := gangDocs(t, "jobset.pods")
		res := runGang(t, g, obj, pods)
		assert.Empty(t, res.Groups)
		require.Len(t, res.Unmatched, 9)
		for _, u := range res.Unmatched {
			assert.Equal(t, "group pg-u-replicatedjob-js spans instances [driver workers] of component replicatedjob; separate them with a key or name an ancestor", u.Reason)
		}
		// One pod alone cannot span: PlacePod narrows to its instance.
		for pod, want := range map[int]int64{0: 8, 1: 1} {
			pp, reason, err := g.placeOne(context.Background(), gojqEvaluator{}, obj, pods[pod])
			require.NoError(t, err)
			require.Empty(t, reason)
			assert.Equal(t, "pg-u-replicatedjob-js", pp.Group)
			assert.Equal(t, want, pp.MinMember, PodKey(pods[pod]))
		}
	})
	t.Run("instances: name the ancestor", func(t *testing.T) {
		k := gangKarta(t, "jobset")
		members := k.Spec.Instructions.GangScheduling.PodGroups[0].Members
		members[0].ComponentName = "jobset"
		members[0].GroupByKeyPaths = members[0].GroupByKeyPaths[:1]
		res := runGang(t, compileGang(t, k), gangObj(t, "jobset"), gangDocs(t, "jobset.pods"))
		require.Len(t, res.Groups, 1)
		assert.Equal(t, "pg-u-replicatedjob-js", res.Groups[0].Name)
		assert.Equal(t, int64(9), res.Groups[0].MinMember)
	})
	t.Run("replicas", func(t *testing.T) {
		k := gangKarta(t, "leaderworkerset")
		members := k.Spec.Instructions.GangScheduling.PodGroups[0].Members
		members[0].GroupByKeyPaths = members[0].GroupByKeyPaths[:1] // name only
		pods := gangDocs(t, "leaderworkerset.pods")
		res := runGang(t, compileGang(t, k), gangObj(t, "leaderworkerset"), pods)
		assert.Empty(t, res.Groups)
		require.Len(t, res.Unmatched, 8)
		for _, u := range res.Unmatched {
			assert.Equal(t, "group pg-u-group-lws spans replicas [0 1] of component group; separate them with a key or name an ancestor", u.Reason)
		}
		// One replica's pods alone form a valid group.
		res = runGang(t, compileGang(t, k), gangObj(t, "leaderworkerset"), pods[:4])
		require.Len(t, res.Groups, 1)
		assert.Equal(t, int64(4), res.Groups[0].MinMember)
	})
	t.Run("replicas: name the ancestor", func(t *testing.T) {
		k := gangKarta(t, "leaderworkerset")
		members := k.Spec.Instructions.GangScheduling.PodGroups[0].Members
		members[0].ComponentName = "leaderworkerset"
		members[0].GroupByKeyPaths = members[0].GroupByKeyPaths[:1]
		res := runGang(t, compileGang(t, k), gangObj(t, "leaderworkerset"), gangDocs(t, "leaderworkerset.pods"))
		require.Len(t, res.Groups, 1)
		assert.Equal(t, int64(8), res.Groups[0].MinMember)
	})
	t.Run("only the member's own pods narrow", func(t *testing.T) {
		// Workers are ganged per replicated job; the driver, in the same
		// group by its keys, has its own member and does not make the
		// group span instances.
		k := gangKarta(t, "jobset")
		setPodGroups(k, karta.PodGroup{Name: "all", Members: []karta.PodGroupMember{
			{ComponentName: "replicatedjob", GroupByKeyPaths: []string{`.metadata.labels["jobset.sigs.k8s.io/jobset-name"]`},
				Filters: []string{`.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == "workers"`}},
			{ComponentName: "jobset", GroupByKeyPaths: []string{`.metadata.labels["jobset.sigs.k8s.io/jobset-name"]`}},
		}})
		res := runGang(t, compileGang(t, k), gangObj(t, "jobset"), gangDocs(t, "jobset.pods"))
		require.Len(t, res.Groups, 1)
		// workers narrowed to "workers": 8; the root: 1 + 8.
		assert.Equal(t, int64(17), res.Groups[0].MinMember)
		assert.Len(t, res.Groups[0].Pods, 9)
	})
}

// TestMinMemberNarrowingReadsTheMembersSelector: the instance a group
// narrows to is read with the member component's instance selector, also
// from a descendant's pod; a pod whose read fails is unmatched alone.
func TestMinMemberNarrowingReadsTheMembersSelector(t *testing.T) {
	k := gangKarta(t, "raycluster")
	// A worker group's pods under a per-group "host" child, as multi-host
	// workers are: the member names the worker group.
	k.Spec.StructureDefinition.ChildComponents = append(k.Spec.StructureDefinition.ChildComponents, karta.Component{
		Name: "host", Kind: &karta.GroupVersionKind{Version: "v1", Kind: "Pod"}, OwnerRef: ptr("worker"),
		InstanceIDPath: `.spec.workerGroupSpecs[]?.groupName`,
		SpecDefinition: &karta.SpecDefinition{PodTemplateSpecPath: `.spec.workerGroupSpecs[]?.template`},
		PodSelector: &karta.PodSelector{
			ComponentTypeSelector:     &karta.ComponentTypeSelector{KeyPath: `.metadata.labels["ray.io/node-type"]`, Value: ptr("host")},
			ComponentInstanceSelector: &karta.ComponentInstanceSelector{IDPath: `.metadata.labels["example.com/host-group"]`},
		},
	})
	setPodGroups(k, karta.PodGroup{Name: "workers", Members: []karta.PodGroupMember{
		{ComponentName: "worker", GroupByKeyPaths: []string{`.metadata.labels["ray.io/cluster"]`}},
	}})
	obj := gangObj(t, "raycluster")
	host := func(name, group string, hostGroup any) map[string]any {
		labels := map[string]any{"ray.io/cluster": "rc", "ray.io/node-type": "host", "example.com/host-group": hostGroup}
		if group != "" {
			labels["ray.io/group"] = group
		}
		return k8sPod("ray", name, labels, nil)
	}
	pods := []map[string]any{
		host("rc-h-0", "small-group", "small-group"),
		host("rc-h-1", "", "small-group"), // no ray.io/group: the member's selector cannot read it
	}
	res := runGang(t, compileGang(t, k), obj, pods)
	require.Len(t, res.Groups, 1)
	assert.Equal(t, []string{"ray/rc-h-0"}, res.Groups[0].Pods)
	// host has no scale: narrowed to small-group, worker's own min 1.
	assert.Equal(t, int64(1), res.Groups[0].MinMember)
	assert.Equal(t, `component "worker": componentInstanceSelector yields null, want a non-empty string or a number`, unmatchedReasons(res)["ray/rc-h-1"])
}

// TestMinMemberLeafCount: without any scale definition, pods are counted
// one per present instance of each pod-bearing component.
func TestMinMemberLeafCount(t *testing.T) {
	pod := func(name, index string) map[string]any {
		return k8sPod("research", name, withLabel(jsLabels("x"), "example.com/replicatedjob-index", index), nil)
	}
	pods := []map[string]any{pod("js-driver-0-0", "0"), pod("js-workers-0-0", "1"), pod("js-workers-1-0", "1")}

	res := runGang(t, compileGang(t, gangKarta(t, "indexed-jobset")), gangObj(t, "jobset"), pods)
	assert.Equal(t, []Group{
		{Name: "pg-u-rj-js-0", Definition: "rj", MinMember: 1, Pods: []string{"research/js-driver-0-0"}},
		{Name: "pg-u-rj-js-1", Definition: "rj", MinMember: 1, Pods: []string{"research/js-workers-0-0", "research/js-workers-1-0"}},
	}, res.Groups)

	k := gangKarta(t, "indexed-jobset")
	members := k.Spec.Instructions.GangScheduling.PodGroups[0].Members
	members[0].ComponentName = "jobset"
	members[0].GroupByKeyPaths = members[0].GroupByKeyPaths[:1]
	g := compileGang(t, k)
	res = runGang(t, g, gangObj(t, "jobset"), pods)
	require.Len(t, res.Groups, 1)
	assert.Equal(t, int64(2), res.Groups[0].MinMember)

	// An absent instance counts 0.
	obj := gangObj(t, "jobset")
	rj := obj["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)
	delete(rj["template"].(map[string]any)["spec"].(map[string]any), "template")
	res = runGang(t, g, obj, pods)
	require.Len(t, res.Groups, 1)
	assert.Equal(t, int64(1), res.Groups[0].MinMember)
	assert.Equal(t, `instance "0" not found among [1]`, unmatchedReasons(res)["research/js-driver-0-0"])
}

// TestMinMemberDefinitionMode covers the arithmetic of minMember beyond
// the worked examples: eff's fallbacks, unscaled components, an empty
// scale definition, absent instances, and the floor of 1.
func TestMinMemberDefinitionMode(t *testing.T) {
	cases := []struct {
		name      string
		editKarta func(*karta.Karta)
		editObj   func(map[string]any)
		want      int64
	}{
		{"as is", nil, nil, 4},
		{"minReplicas 0 falls back to replicas", nil, func(o map[string]any) {
			o["spec"].(map[string]any)["elasticPolicy"] = map[string]any{"minReplicas": 0}
		}, 4},
		{"minReplicas counts when > 0", nil, func(o map[string]any) {
			o["spec"].(map[string]any)["elasticPolicy"] = map[string]any{"minReplicas": "1"}
		}, 2},
		{"replicas 0 and no min count 0", nil, func(o map[string]any) {
			ptSpec(o, "Worker")["replicas"] = 0
		}, 1},
		{"an absent master counts 0", nil, noMaster, 3},
		{"a component without scale counts 0", func(k *karta.Karta) { kartaComponent(k, "master").ScaleDefinition = nil }, nil, 3},
		{"an empty scale definition is none", func(k *karta.Karta) { kartaComponent(k, "master").ScaleDefinition = &karta.ScaleDefinition{} }, nil, 3},
		{"floor of 1", func(k *karta.Karta) {
			kartaComponent(k, "master").ScaleDefinition = nil
		}, func(o map[string]any) { ptSpec(o, "Worker")["replicas"] = 0 }, 1},
		{"a scaled root multiplies its children", func(k *karta.Karta) {
			setPodGroups(k, karta.PodGroup{Name: "job", Members: []karta.PodGroupMember{{ComponentName: "pytorchjob", GroupByKeyPaths: []string{jobNameKey}}}})
			kartaComponent(k, "pytorchjob").ScaleDefinition = &karta.ScaleDefinition{ReplicasPath: "2"}
		}, nil, 8},
		{"ancestors' scales are never multiplied in", func(k *karta.Karta) {
			kartaComponent(k, "pytorchjob").ScaleDefinition = &karta.ScaleDefinition{ReplicasPath: "2"}
		}, nil, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := gangKarta(t, "pytorchjob")
			if tc.editKarta != nil {
				tc.editKarta(k)
			}
			obj := gangObj(t, "pytorchjob")
			if tc.editObj != nil {
				tc.editObj(obj)
			}
			res := runGang(t, compileGang(t, k), obj, gangDocs(t, "pytorchjob.pods")[:1])
			require.Len(t, res.Groups, 1)
			assert.Equal(t, tc.want, res.Groups[0].MinMember)
		})
	}
}

func ptSpec(obj map[string]any, role string) map[string]any {
	return obj["spec"].(map[string]any)["pytorchReplicaSpecs"].(map[string]any)[role].(map[string]any)
}

// TestMinMemberObjectErrors: what the object yields for instances and
// scales fails the whole call with an error naming the component, the
// instance and the path; PlacePod fails the same way.
func TestMinMemberObjectErrors(t *testing.T) {
	cases := []struct {
		name      string
		karta     string
		editKarta func(*karta.Karta)
		editObj   func(map[string]any)
		want      string
	}{
		{"a scale value that is no integer", "pytorchjob", nil,
			func(o map[string]any) { ptSpec(o, "Worker")["replicas"] = "3x" },
			`component "worker": replicasPath: string "3x" is not a decimal integer`},
		{"a scale value of one instance", "raycluster", nil,
			func(o map[string]any) {
				o["spec"].(map[string]any)["workerGroupSpecs"].([]any)[0].(map[string]any)["minReplicas"] = 1.5
			},
			`component "worker" instance "small-group": minReplicasPath: 1.5 is not an integer`},
		{"a jq error in a scale path", "jobset", nil,
			func(o map[string]any) {
				o["spec"].(map[string]any)["replicatedJobs"].([]any)[1].(map[string]any)["replicas"] = map[string]any{"value": 2}
			},
			`component "replicatedjob": replicasPath: jq .spec.replicatedJobs[]? | (.replicas // 1) * (.template.spec.parallelism // 1): cannot multiply: object ({"value":2}) and number (4)`},
		{"a scale path that does not zip", "raycluster",
			func(k *karta.Karta) {
				kartaComponent(k, "worker").ScaleDefinition.ReplicasPath = `.spec.workerGroupSpecs[0].replicas`
			},
			func(o map[string]any) {
				specs := o["spec"].(map[string]any)["workerGroupSpecs"].([]any)
				large := map[string]any{"groupName": "large-group", "replicas": 2, "template": specs[0].(map[string]any)["template"]}
				o["spec"].(map[string]any)["workerGroupSpecs"] = append(specs, large)
			},
			`component "worker": replicasPath yields 1 value(s) for 2 id(s) [small-group large-group]`},
		{"duplicate instance ids", "jobset", nil,
			func(o map[string]any) {
				o["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)["name"] = "workers"
			},
			`component "replicatedjob": instanceIdPath yields duplicate id(s) [workers]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := gangKarta(t, tc.karta)
			if tc.editKarta != nil {
				tc.editKarta(k)
			}
			g := compileGang(t, k)
			obj := gangObj(t, tc.karta)
			tc.editObj(obj)
			pods := gangDocs(t, tc.karta+".pods")
			res, err := g.gangGroups(context.Background(), gojqEvaluator{}, obj, pods)
			assert.Nil(t, res)
			var oe *GangObjectError
			require.True(t, errors.As(err, &oe), "%T %v", err, err)
			assert.EqualError(t, err, tc.want)
			_, _, err = g.placeOne(context.Background(), gojqEvaluator{}, obj, pods[0])
			assert.EqualError(t, err, tc.want)
		})
	}
}
