package interpreter

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/object"
)

// Helpers shared by the gang, placement and minimum-member tests. The
// Kartas are decoded with sigs.k8s.io/yaml, strictly, rather than Load, so
// that these tests do not depend on the loader's defaults; objects and
// pods are decoded as the CLI decodes them, numbers as json.Number.

// gangKarta decodes testdata/gang/<name>.karta.yaml and checks that it is
// valid, so that no test leans on a Karta validation would reject.
func gangKarta(t testing.TB, name string) *karta.Karta {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gang", name+".karta.yaml"))
	require.NoError(t, err)
	var k karta.Karta
	require.NoError(t, yaml.UnmarshalStrict(data, &k))
	require.Empty(t, karta.Validate(&k).Errors(), "testdata/gang/%s.karta.yaml must be valid", name)
	return &k
}

// compileGang builds the gang model of k (which a test may have changed).
func compileGang(t testing.TB, k *karta.Karta) *gangModel {
	t.Helper()
	m, err := newModel(mustCheck(t, k))
	require.NoError(t, err)
	g, err := newGangModel(m)
	require.NoError(t, err)
	return g
}

// gangDocs decodes every object of testdata/gang/<name>.yaml.
func gangDocs(t testing.TB, name string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gang", name+".yaml"))
	require.NoError(t, err)
	docs, err := object.Decode(data, name+".yaml")
	require.NoError(t, err)
	return object.Items(docs)
}

// gangObj decodes the one workload object of testdata/gang/<name>.yaml.
func gangObj(t testing.TB, name string) map[string]any {
	t.Helper()
	objs := gangDocs(t, name)
	require.Len(t, objs, 1)
	return objs[0]
}

// gangPod decodes one pod written as YAML in a test.
func gangPod(t testing.TB, text string) map[string]any {
	t.Helper()
	docs, err := object.Decode([]byte(text), "pod.yaml")
	require.NoError(t, err)
	require.Len(t, docs, 1)
	return docs[0].Object
}

// runGang runs gangGroups with gojq and checks the invariants every
// result must hold.
func runGang(t testing.TB, g *gangModel, obj map[string]any, pods []map[string]any) *GangResult {
	t.Helper()
	res, err := g.gangGroups(context.Background(), gojqEvaluator{}, obj, pods)
	require.NoError(t, err)
	assertGangInvariants(t, pods, res)
	return res
}

// assertGangInvariants checks GetGangGroups' invariants: every pod exactly
// once, in Placements (in input order) and exactly one group, or in
// Unmatched (in input order) with a reason; groups sorted by name, their
// pods and subgroups' pods sorted; a subgroup's pods are its group's, each
// in at most one subgroup; lists are never nil.
func assertGangInvariants(t testing.TB, pods []map[string]any, res *GangResult) {
	t.Helper()
	require.NotNil(t, res.Groups)
	require.NotNil(t, res.Placements)
	require.NotNil(t, res.Unmatched)
	p, u := 0, 0
	for _, pod := range pods {
		name := PodKey(pod)
		switch {
		case p < len(res.Placements) && res.Placements[p].Pod == name:
			p++
		case u < len(res.Unmatched) && res.Unmatched[u].Pod == name:
			assert.NotEmpty(t, res.Unmatched[u].Reason, "pod %s", name)
			u++
		default:
			require.Failf(t, "pod out of order or missing", "pod %s is not next in placements or unmatched", name)
		}
	}
	require.Equal(t, len(res.Placements), p, "placements that are not input pods")
	require.Equal(t, len(res.Unmatched), u, "unmatched that are not input pods")

	inGroup := map[string]string{}
	for i, grp := range res.Groups {
		if i > 0 {
			assert.Less(t, res.Groups[i-1].Name, grp.Name, "groups sorted by name, names unique")
		}
		require.NotNil(t, grp.Pods)
		assert.True(t, slices.IsSorted(grp.Pods), "pods of %s sorted", grp.Name)
		for _, pod := range grp.Pods {
			_, dup := inGroup[pod]
			assert.False(t, dup, "pod %s in two groups", pod)
			inGroup[pod] = grp.Name
		}
		inSub := map[string]bool{}
		for _, sub := range grp.SubGroups {
			require.NotNil(t, sub.Pods)
			assert.True(t, slices.IsSorted(sub.Pods), "pods of %s/%s sorted", grp.Name, sub.Name)
			for _, pod := range sub.Pods {
				assert.Contains(t, grp.Pods, pod, "subgroup pod %s in its group", pod)
				assert.False(t, inSub[pod], "pod %s in two subgroups", pod)
				inSub[pod] = true
			}
		}
	}
	for _, pl := range res.Placements {
		assert.Equal(t, pl.Group, inGroup[pl.Pod], "placed pod %s is in its group", pl.Pod)
		delete(inGroup, pl.Pod)
	}
	assert.Empty(t, inGroup, "grouped pods without a placement")
}

// groupOf returns the group named name.
func groupOf(t testing.TB, res *GangResult, name string) Group {
	t.Helper()
	for _, g := range res.Groups {
		if g.Name == name {
			return g
		}
	}
	require.Failf(t, "no such group", "%s among %v", name, groupNames(res))
	return Group{}
}

func groupNames(res *GangResult) []string {
	var names []string
	for _, g := range res.Groups {
		names = append(names, g.Name)
	}
	return names
}

// unmatchedReasons maps unmatched pods to their reasons.
func unmatchedReasons(res *GangResult) map[string]string {
	out := map[string]string{}
	for _, u := range res.Unmatched {
		out[u.Pod] = u.Reason
	}
	return out
}

// setPodGroups replaces the alpha podGroups of k.
func setPodGroups(k *karta.Karta, groups ...karta.PodGroup) {
	k.Spec.Instructions = &karta.Instructions{GangScheduling: &karta.GangScheduling{PodGroups: groups}}
}

const jobNameKey = `.metadata.labels["training.kubeflow.org/job-name"]`

// TestGangFilters covers effective members and filters on a worker pod:
// group "all" names the root and comes first in YAML, group "pinned" names
// the worker with the filters of the row. The pod's own component is tried
// first, so "pinned" wins when its filters pass; when one does not pass the
// walk goes on to the root's member.
func TestGangFilters(t *testing.T) {
	const member = `group "pinned" member "worker": `
	cases := []struct {
		name    string
		filters []string
		group   string // "" when unmatched
		reason  string
	}{
		{"true passes", []string{"true"}, "pg-u-pinned-train", ""},
		{"a label test passes", []string{`.metadata.labels["training.kubeflow.org/replica-type"] == "worker"`}, "pg-u-pinned-train", ""},
		{"all filters must pass", []string{"true", "false"}, "pg-u-all-train", ""},
		{"false falls through to the ancestor", []string{"false"}, "pg-u-all-train", ""},
		{"null does not pass and is no error", []string{"null"}, "pg-u-all-train", ""},
		{"a missing label is null", []string{`.metadata.labels["example.com/pinned"]`}, "pg-u-all-train", ""},
		{"a string is not a boolean", []string{`"x"`}, "", member + `filter "\"x\"" yields string "x", want true, false or null`},
		{"a number is not a boolean", []string{`1`}, "", member + `filter "1" yields 1, want true, false or null`},
		{"two outputs", []string{"true, true"}, "", member + `filter "true, true" yields 2 values, want exactly one`},
		{"no output", []string{"empty"}, "", member + `filter "empty" yields 0 values, want exactly one`},
		{"a jq error unmatches the pod", []string{".metadata.name | tonumber"}, "", `jq .metadata.name | tonumber: tonumber cannot be applied to "train-worker-1": invalid number`},
	}
	obj := gangObj(t, "pytorchjob")
	pods := gangDocs(t, "pytorchjob.pods")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := gangKarta(t, "pytorchjob")
			setPodGroups(k,
				karta.PodGroup{Name: "all", Members: []karta.PodGroupMember{{ComponentName: "pytorchjob", GroupByKeyPaths: []string{jobNameKey}}}},
				karta.PodGroup{Name: "pinned", Members: []karta.PodGroupMember{{ComponentName: "worker", GroupByKeyPaths: []string{jobNameKey}, Filters: tc.filters}}})
			res := runGang(t, compileGang(t, k), obj, pods)
			const pod = "ml/train-worker-1"
			if tc.group == "" {
				assert.Equal(t, tc.reason, unmatchedReasons(res)[pod])
				return
			}
			assert.Contains(t, groupOf(t, res, tc.group).Pods, pod)
			// The master has no member of its own and always reaches the
			// root's.
			assert.Contains(t, groupOf(t, res, "pg-u-all-train").Pods, "ml/train-master-0")
		})
	}
}

// TestGangMemberOrder: members naming the same component across groups
// are tried in YAML order, and without an applicable member the pod is
// unmatched.
func TestGangMemberOrder(t *testing.T) {
	obj := gangObj(t, "pytorchjob")
	pods := gangDocs(t, "pytorchjob.pods")
	worker := func(group string, filter string) karta.PodGroup {
		return karta.PodGroup{Name: group, Members: []karta.PodGroupMember{{ComponentName: "worker", GroupByKeyPaths: []string{jobNameKey}, Filters: []string{filter}}}}
	}

	k := gangKarta(t, "pytorchjob")
	setPodGroups(k, worker("first", "true"), worker("second", "true"))
	res := runGang(t, compileGang(t, k), obj, pods)
	assert.Equal(t, []string{"pg-u-first-train"}, groupNames(res))
	assert.Equal(t, "no pod group member applies", unmatchedReasons(res)["ml/train-master-0"])

	k = gangKarta(t, "pytorchjob")
	setPodGroups(k, worker("first", "false"), worker("second", "true"))
	res = runGang(t, compileGang(t, k), obj, pods)
	assert.Equal(t, []string{"pg-u-second-train"}, groupNames(res))

	k = gangKarta(t, "pytorchjob")
	setPodGroups(k, worker("first", "false"), worker("second", "null"))
	res = runGang(t, compileGang(t, k), obj, pods)
	assert.Empty(t, res.Groups)
	for _, u := range res.Unmatched {
		assert.Equal(t, "no pod group member applies", u.Reason, u.Pod)
	}
}

// TestGangKeys covers keys and group names on the worker pod with replica
// index 1: the row's keys replace the job's.
func TestGangKeys(t *testing.T) {
	const member = `group "job" member "worker": `
	const index = `(.metadata.labels["training.kubeflow.org/replica-index"] | tonumber)`
	cases := []struct {
		name   string
		keys   []string
		group  string
		reason string
	}{
		{"a string as is", []string{jobNameKey}, "pg-u-job-train", ""},
		{"keys joined with -", []string{jobNameKey, `.metadata.labels["training.kubeflow.org/replica-type"]`}, "pg-u-job-train-worker", ""},
		{"no keys", nil, "pg-u-job", ""},
		{"a number through tostring", []string{index}, "pg-u-job-1", ""},
		{"a large number through tostring", []string{index + " * 1e21"}, "pg-u-job-1e+21", ""},
		{"a fraction through tostring", []string{index + " / 4"}, "pg-u-job-0.25", ""},
		{"a boolean through tostring", []string{`.metadata.labels["training.kubeflow.org/job-role"] == "master"`}, "pg-u-job-false", ""},
		{"null", []string{`.metadata.labels["example.com/queue"]`}, "", member + `groupByKeyPath ".metadata.labels[\"example.com/queue\"]" yields null, want a non-empty string, a number or a boolean`},
		{"empty string", []string{`""`}, "", member + `groupByKeyPath "\"\"" yields string "", want a non-empty string, a number or a boolean`},
		{"object", []string{`.metadata.labels`}, "", member + `groupByKeyPath ".metadata.labels" yields an object, want a non-empty string, a number or a boolean`},
		{"array", []string{`[.metadata.name]`}, "", member + `groupByKeyPath "[.metadata.name]" yields an array, want a non-empty string, a number or a boolean`},
		{"several outputs", []string{`.metadata.labels[]`}, "", member + `groupByKeyPath ".metadata.labels[]" yields 4 values, want exactly one`},
		{"no output", []string{`empty`}, "", member + `groupByKeyPath "empty" yields 0 values, want exactly one`},
		{"a jq error unmatches the pod", []string{`.metadata.name | tonumber`}, "", `jq .metadata.name | tonumber: tonumber cannot be applied to "train-worker-1": invalid number`},
	}
	obj := gangObj(t, "pytorchjob")
	pods := gangDocs(t, "pytorchjob.pods")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := gangKarta(t, "pytorchjob")
			for i := range k.Spec.Instructions.GangScheduling.PodGroups[0].Members {
				k.Spec.Instructions.GangScheduling.PodGroups[0].Members[i].GroupByKeyPaths = tc.keys
			}
			res := runGang(t, compileGang(t, k), obj, pods)
			const pod = "ml/train-worker-1"
			if tc.group == "" {
				assert.Equal(t, tc.reason, unmatchedReasons(res)[pod])
				return
			}
			assert.Contains(t, groupOf(t, res, tc.group).Pods, pod)
			pl := res.Placements[slices.IndexFunc(res.Placements, func(p Placement) bool { return p.Pod == pod })]
			assert.Equal(t, tc.group, pl.Group)
		})
	}
}

// TestGangNoInstructions: without gang instructions every pod is
// unmatched, even those that would place; the legacy block name works
// like the new one.
func TestGangNoInstructions(t *testing.T) {
	obj := gangObj(t, "pytorchjob")
	pods := gangDocs(t, "pytorchjob.pods")
	k := gangKarta(t, "pytorchjob")
	legacy := k.Spec.Instructions
	k.Spec.Instructions = nil
	g := compileGang(t, k)
	res := runGang(t, g, obj, pods)
	assert.Empty(t, res.Groups)
	assert.Empty(t, res.Placements)
	require.Len(t, res.Unmatched, 4)
	for _, u := range res.Unmatched {
		assert.Equal(t, "no gang scheduling instructions", u.Reason)
	}
	pp, reason, err := g.placeOne(context.Background(), gojqEvaluator{}, obj, pods[0])
	require.NoError(t, err)
	assert.Nil(t, pp)
	assert.Equal(t, "no gang scheduling instructions", reason)

	// An empty gangScheduling block gives no instructions either.
	k.Spec.Instructions = &karta.Instructions{GangScheduling: &karta.GangScheduling{}}
	res = runGang(t, compileGang(t, k), obj, pods)
	assert.Len(t, res.Unmatched, 4)

	k.Spec.OptimizationInstructions = legacy
	k.Spec.Instructions = nil
	res = runGang(t, compileGang(t, k), obj, pods)
	assert.Equal(t, []string{"pg-u-job-train"}, groupNames(res))
}

// TestGangOrderAndNames: placements and unmatched keep input order, group
// pods are sorted; a pod without a namespace is named by its name; the
// uid falls back to the object's name.
func TestGangOrderAndNames(t *testing.T) {
	obj := gangObj(t, "pytorchjob")
	delete(obj["metadata"].(map[string]any), "uid")
	pods := gangDocs(t, "pytorchjob.pods")
	delete(pods[2]["metadata"].(map[string]any), "namespace")
	stray := gangPod(t, `
apiVersion: v1
kind: Pod
metadata:
  name: train-tensorboard-7d9f
  namespace: ml
  labels: {app: tensorboard}
`)
	pods = slices.Insert(pods, 1, stray)
	res := runGang(t, compileGang(t, gangKarta(t, "pytorchjob")), obj, pods)

	var placed []string
	for _, p := range res.Placements {
		placed = append(placed, p.Pod)
	}
	assert.Equal(t, []string{"ml/train-worker-2", "ml/train-master-0", "train-worker-0", "ml/train-worker-1"}, placed)
	assert.Equal(t, []Unmatched{{Pod: "ml/train-tensorboard-7d9f", Reason: "no component selector matches"}}, res.Unmatched)
	assert.Equal(t, []Group{{Name: "pg-train-job-train", Definition: "job", MinMember: 4,
		Pods: []string{"ml/train-master-0", "ml/train-worker-1", "ml/train-worker-2", "train-worker-0"}}}, res.Groups)
}

// TestGangNameCollision: group names are not sanitised, so two
// definitions can produce one name; its pods are all unmatched, whatever
// their order, rather than merged into a group with two definitions.
func TestGangNameCollision(t *testing.T) {
	k := gangKarta(t, "pytorchjob")
	setPodGroups(k,
		karta.PodGroup{Name: "job", Members: []karta.PodGroupMember{{ComponentName: "master", GroupByKeyPaths: []string{`"x-" + ` + jobNameKey}}}},
		karta.PodGroup{Name: "job-x", Members: []karta.PodGroupMember{{ComponentName: "worker", GroupByKeyPaths: []string{jobNameKey}}}})
	g := compileGang(t, k)
	pods := gangDocs(t, "pytorchjob.pods")
	for _, order := range [][]map[string]any{pods, reversedPods(pods)} {
		res := runGang(t, g, gangObj(t, "pytorchjob"), order)
		assert.Empty(t, res.Groups)
		require.Len(t, res.Unmatched, 4)
		for _, u := range res.Unmatched {
			assert.Equal(t, `group name pg-u-job-x-train is produced by definitions "job", "job-x"`, u.Reason)
		}
	}
}

// TestGangCancelled: a cancelled context fails the call instead of
// unmatching every pod with the context's error.
func TestGangCancelled(t *testing.T) {
	g := compileGang(t, gangKarta(t, "pytorchjob"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := g.gangGroups(ctx, gojqEvaluator{}, gangObj(t, "pytorchjob"), gangDocs(t, "pytorchjob.pods"))
	assert.Nil(t, res)
	assert.Equal(t, context.Canceled, err)
	pp, _, err := g.placeOne(ctx, gojqEvaluator{}, gangObj(t, "pytorchjob"), gangDocs(t, "pytorchjob.pods")[0])
	assert.Nil(t, pp)
	assert.Equal(t, context.Canceled, err)
}

func reversedPods[T any](s []T) []T {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}
