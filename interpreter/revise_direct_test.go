package interpreter

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kartalua/karta/internal/jqvalue"
	"github.com/kartalua/karta/object"
)

// ReviseSpec on the call's evaluator (each path on its direct form, or
// alone on its gojq program where that declines) must not be observable:
// it gives the gojq path's result, or its error.

// directRevise runs revise on a call's evaluator; declined is whether
// some evaluation left the direct back end.
func directRevise(m *model, obj map[string]any, revs []Revision) (out map[string]any, ops []PatchOp, ws []ReviseWarning, err error, declined bool) {
	ctx := context.Background()
	p := &Program{model: m, limits: Limits{}.WithDefaults()}
	ev := p.newEvaluator(ctx, nil)
	out, ops, ws, err = m.revise(ctx, ev, obj, revs)
	declined = ev.declined
	return out, ops, ws, ev.finish(err), declined
}

// assertDirectRevise checks revise on the call's evaluator against the
// gojq path's result (want…, wantErr) on the same input, and reports
// whether it ran wholly on the direct back end. Values the direct path
// writes from the object are the object's own int64 where the gojq path
// wrote its normalised copies (int), so the two are compared in that one
// normal form; everything else exactly, errors by their text.
func assertDirectRevise(t testing.TB, m *model, obj map[string]any, revs []Revision,
	want map[string]any, wantOps []PatchOp, wantWarnings []ReviseWarning, wantErr error, msgAndArgs ...any) bool {
	t.Helper()
	before := deepCopyJSON(obj)
	got, gotOps, gotWarnings, gotErr, declined := directRevise(m, obj, revs)
	require.Equal(t, before, any(obj), "the direct path modified its input")
	if wantErr != nil {
		if assert.Error(t, gotErr, msgAndArgs...) {
			assert.Equal(t, wantErr.Error(), gotErr.Error(), msgAndArgs...)
		}
		return !declined
	}
	if !assert.NoError(t, gotErr, msgAndArgs...) {
		return false
	}
	assert.Equal(t, jqvalue.Input(want), jqvalue.Input(got), msgAndArgs...)
	require.Len(t, gotOps, len(wantOps), msgAndArgs...)
	for i := range wantOps {
		w, g := wantOps[i], gotOps[i]
		w.Value, g.Value = jqvalue.Input(w.Value), jqvalue.Input(g.Value)
		assert.Equal(t, w, g, msgAndArgs...)
	}
	assert.Equal(t, wantWarnings, gotWarnings, msgAndArgs...)
	return !declined
}

// exampleRevisions reads examples/NAME/revisions.yaml.
func exampleRevisions(t testing.TB, name string) []Revision {
	t.Helper()
	file := filepath.Join("..", "examples", name, "revisions.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	v, err := object.DecodeValue(data, file)
	require.NoError(t, err)
	revs, err := DecodeRevisions(v)
	require.NoError(t, err)
	return revs
}

// reviseVariants are the revision lists run on every example state: the
// example's own, each revision alone, each as a strategic patch and over
// every instance.
func reviseVariants(revs []Revision) [][]Revision {
	out := [][]Revision{revs}
	for _, r := range revs {
		out = append(out, []Revision{r})
		s := r
		s.Type = PatchStrategic
		all := r
		all.Instance = allInstances
		out = append(out, []Revision{s}, []Revision{all})
	}
	return out
}

// TestReviseDirectAgreesWithGojq runs every built-in's revisions.yaml
// (and variants of it) on every example state, its client-go form and
// broken variants, on both paths; and Program.ReviseSpec (direct with its
// fallback) against a Program without direct evaluation.
func TestReviseDirectAgreesWithGojq(t *testing.T) {
	ctx := context.Background()
	direct := map[string]int{}
	for _, dk := range directKinds(t) {
		t.Run(dk.name, func(t *testing.T) {
			k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", dk.name+".yaml"))
			fast := progCompile(t, k, Options{})
			slow := progCompile(t, k, Options{})
			slow.noDirect = true
			revs := exampleRevisions(t, dk.name)
			var objs []*unstructured.Unstructured
			for _, s := range dk.states {
				objs = append(objs, s, k8sForm(t, s))
				objs = append(objs, brokenVariants(t, s)...)
			}
			for i, obj := range objs {
				for j, rv := range reviseVariants(revs) {
					want, wantOps, wantWarnings, wantErr := fast.model.reviseSpec(ctx, obj.Object, rv)
					if assertDirectRevise(t, fast.model, obj.Object, rv, want, wantOps, wantWarnings, wantErr,
						"%s object %d revisions %d", dk.name, i, j) {
						direct[dk.name]++
					}
					got, gotErr := fast.ReviseSpec(ctx, obj, rv)
					wantRes, wantErr := slow.ReviseSpec(ctx, obj, rv)
					if wantErr != nil {
						if assert.Error(t, gotErr) {
							assert.Equal(t, wantErr.Error(), gotErr.Error(), "%s object %d revisions %d", dk.name, i, j)
						}
						continue
					}
					require.NoError(t, gotErr)
					// Both results are objects client-go can copy: no value
					// of a Go type outside JSON's (gojq's int) on either path.
					assert.NotPanics(t, func() { wantRes.Object.DeepCopy() }, "%s object %d revisions %d without direct evaluation", dk.name, i, j)
					assert.NotPanics(t, func() { got.Object.DeepCopy() }, "%s object %d revisions %d", dk.name, i, j)
					assert.Equal(t, jqvalue.Input(wantRes.Object.Object), jqvalue.Input(got.Object.Object))
					assert.Equal(t, wantRes.Warnings, got.Warnings)
					assert.Equal(t, len(wantRes.Patch), len(got.Patch))
				}
			}
			// Every built-in's own revisions run directly on its running
			// example, in both forms, unless the Karta refuses them
			// (AppWrapper's computed template paths cannot be written).
			if dk.running != nil {
				for _, obj := range []*unstructured.Unstructured{dk.running, k8sForm(t, dk.running)} {
					_, _, _, derr, declined := directRevise(fast.model, obj.Object, revs)
					ok := derr == nil && !declined
					if _, _, _, err := fast.model.reviseSpec(ctx, obj.Object, revs); err != nil {
						var pe *PathError
						require.ErrorAs(t, err, &pe, dk.name)
						assert.NotEmpty(t, pe.Reason, "%s: only a path that cannot be written refuses the example", dk.name)
						assert.False(t, ok)
						continue
					}
					assert.True(t, ok, "%s: revisions.yaml on running.yaml runs directly", dk.name)
				}
			}
		})
	}
	t.Logf("direct revisions by kind: %v", direct)
}

// FuzzMergeDiff: mergeDiff gives exactly the changes diff finds between a
// view and its merge patch, for any view (values that are not JSON, such
// as NaN or a []string, included: diff reports them, so must mergeDiff)
// and any patch.
func FuzzMergeDiff(f *testing.F) {
	for _, seed := range [][]byte{
		{}, {3, 1, 2, 5, 0, 1, 3, 3, 7, 2, 1, 0, 2, 6, 5, 4},
		{2, 0, 5, 3, 1, 6, 2, 2, 1, 0, 3, 4, 0, 1, 1, 9, 9},
		{1, 1, 5, 1, 5, 1, 5, 1, 0, 0, 7, 2, 3, 2, 0},
		[]byte("metadata labels spec containers image resources affinity null"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &patchGen{data: data}
		view := g.object(0)
		patch := g.object(0)
		// Odd values in the view, where the bytes say.
		odd := []any{math.NaN(), []string{"a"}, map[string]any(nil), []any{}, int8(1)}
		if n := g.next(); n%3 == 0 && len(fuzzKeys) > 0 {
			view[fuzzKeys[g.next()%len(fuzzKeys)]] = odd[g.next()%len(odd)]
		}
		want := diff(view, mergePatch(view, patch), nil, jsonEqual, nil)
		got := mergeDiff(view, patch)
		require.Equal(t, fmt.Sprintf("%#v", want), fmt.Sprintf("%#v", got))
	})
}

// TestWrittenOpsAreDiffOps: the operations ReviseSpec finds by walking
// what it wrote are diffOps' on the whole objects, also when an untouched
// sibling is not equal to itself (diffOps reports it, so must they).
func TestWrittenOpsAreDiffOps(t *testing.T) {
	m := fixtureModel(t, "pytorchjob")
	revs := []Revision{
		{Component: "worker", Patch: map[string]any{"metadata": map[string]any{"labels": map[string]any{"q": "a"}},
			"spec": map[string]any{"schedulerName": "s", "affinity": map[string]any{"nodeAffinity": map[string]any{"x": int64(1)}}}}},
		{Component: "master", Patch: map[string]any{"metadata": map[string]any{"annotations": nil}}},
	}
	for name, odd := range map[string]any{"plain": nil, "NaN": math.NaN(), "[]string": []string{"x"}, "int8": int8(3)} {
		t.Run(name, func(t *testing.T) {
			obj := deepCopyJSON(fixtureObject(t, "pytorchjob")).(map[string]any)
			if odd != nil {
				tmpl := obj["spec"].(map[string]any)["pytorchReplicaSpecs"].(map[string]any)["Worker"].(map[string]any)["template"].(map[string]any)
				tmpl["spec"].(map[string]any)["odd"] = odd
				obj["spec"].(map[string]any)["odd"] = odd
			}
			out, ops, _, err := m.reviseSpec(context.Background(), obj, revs)
			require.NoError(t, err)
			require.NotEmpty(t, ops)
			assert.Equal(t, fmt.Sprintf("%#v", diffOps(obj, out)), fmt.Sprintf("%#v", ops))
			var paths []string
			for _, op := range ops {
				paths = append(paths, op.Path)
			}
			if odd != nil {
				// diffOps' own quirk, kept: a value not equal to itself
				// reads as replaced.
				assert.Contains(t, paths, "/spec/odd")
			} else {
				assert.NotContains(t, paths, "/spec/odd")
			}
		})
	}
}

// A strategic patch that adds a container rewrites the whole containers
// list, the existing containers included, which come from the instance's
// view. On the gojq path the view is gojq's copy of the object (int, not
// client-go's int64): the written values must still be client-go's, or
// DeepCopy of the result panics.
func TestReviseWritesClientGoValuesOnEveryPath(t *testing.T) {
	ctx := context.Background()
	k := progKartaFile(t, filepath.Join("..", "builtin", "kartas", "pytorchjob.yaml"))
	fast := progCompile(t, k, Options{})
	slow := progCompile(t, k, Options{})
	slow.noDirect = true
	obj := k8sForm(t, progObjFile(t, filepath.Join("..", "examples", "pytorchjob", "running.yaml"))[0])
	revs := []Revision{{Component: "worker", Type: PatchStrategic, Patch: map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "log-shipper", "image": "fluent/fluent-bit:3.1",
			"ports": []any{map[string]any{"containerPort": int64(2020)}},
		}}},
	}}}
	var results []*unstructured.Unstructured
	for _, p := range []*Program{fast, slow} {
		res, err := p.ReviseSpec(ctx, obj, revs)
		require.NoError(t, err)
		assert.NotPanics(t, func() { res.Object.DeepCopy() })
		results = append(results, res.Object)
	}
	assert.Equal(t, results[0].Object, results[1].Object, "the same values, of the same types")
	containers, _, err := unstructured.NestedSlice(results[1].Object, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers")
	require.NoError(t, err)
	require.Len(t, containers, 2, "the example's container and the sidecar")
}
