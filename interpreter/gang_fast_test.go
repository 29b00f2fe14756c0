package interpreter

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/jqvalue"
)

// podExprOf compiles expr as the gang model does: with cached set, its
// parent path is cached in podIn's parent slot 0, and with kept set its
// value in podIn's value slot 0.
func podExprOf(t *testing.T, expr string, cached, kept bool) *podExpr {
	t.Helper()
	a, errs := jqexpr.Check(expr)
	require.Empty(t, errs, expr)
	p, err := compileAnalysis(a)
	require.NoError(t, err, expr)
	pe := &podExpr{jqProgram: p, keys: plainKeys(a.Query), parent: -1, slot: -1}
	if cached && len(pe.keys) > 1 {
		pe.parent = 0
	}
	if kept && len(pe.keys) > 0 {
		pe.slot = 0
	}
	return pe
}

func TestPlainKeys(t *testing.T) {
	for expr, want := range map[string][]string{
		`.metadata.labels["training.kubeflow.org/replica-type"]`: {"metadata", "labels", "training.kubeflow.org/replica-type"},
		`.metadata.name`:      {"metadata", "name"},
		`."metadata"."x y"`:   {"metadata", "x y"},
		`.["a"].b`:            {"a", "b"},
		`.a`:                  {"a"},
		`.`:                   nil,
		`.a?`:                 nil,
		`.a.b?`:               nil,
		`.a[0]`:               nil,
		`.[0]`:                nil,
		`.a[]`:                nil,
		`.a[1:2]`:             nil,
		`.a | .b`:             nil,
		`.a.b // "x"`:         nil,
		`.["a" + "b"]`:        nil,
		`."\(.x)"`:            nil,
		`.a["\(.x)"]`:         nil,
		`.a == "b"`:           nil,
		`(.a)`:                nil,
		`.a.b | tostring`:     nil,
		`.metadata.labels.a?`: nil,
	} {
		assert.Equal(t, want, podExprOf(t, expr, false, false).keys, expr)
	}
}

// TestPodExprAgreesWithEvaluators: where a pod path is read in place, its
// one output is exactly what gojq (the semantics) gives; everything else
// is left to the evaluator. The pods are hostile: metadata, labels and
// values of every JSON type where objects and strings are expected.
func TestPodExprAgreesWithEvaluators(t *testing.T) {
	ctx := context.Background()
	exprs := []string{
		`.metadata.labels["k"]`,
		`.metadata.annotations["k"]`,
		`.metadata.name`,
		`.metadata`,
		`.spec.a.b.c`,
		`.metadata.labels["k"] == "v"`, // not plain: the evaluator's
	}
	pods := map[string]map[string]any{
		"string value":     {"metadata": map[string]any{"labels": map[string]any{"k": "v"}, "annotations": map[string]any{"k": "a"}, "name": "p"}},
		"empty string":     {"metadata": map[string]any{"labels": map[string]any{"k": ""}}},
		"missing key":      {"metadata": map[string]any{"labels": map[string]any{"x": "v"}}},
		"no labels":        {"metadata": map[string]any{"name": "p"}},
		"null labels":      {"metadata": map[string]any{"labels": nil}},
		"null metadata":    {"metadata": nil},
		"no metadata":      {},
		"number value":     {"metadata": map[string]any{"labels": map[string]any{"k": int64(3)}, "name": 1.5}},
		"boolean value":    {"metadata": map[string]any{"labels": map[string]any{"k": true}}},
		"object value":     {"metadata": map[string]any{"labels": map[string]any{"k": map[string]any{"a": "b"}}}},
		"array value":      {"metadata": map[string]any{"labels": map[string]any{"k": []any{"v"}}}},
		"string labels":    {"metadata": map[string]any{"labels": "k=v"}},
		"array labels":     {"metadata": map[string]any{"labels": []any{"k"}}},
		"number metadata":  {"metadata": int64(7)},
		"string metadata":  {"metadata": "m"},
		"array metadata":   {"metadata": []any{map[string]any{"labels": map[string]any{"k": "v"}}}},
		"deep null":        {"spec": map[string]any{"a": nil}},
		"deep string":      {"spec": map[string]any{"a": map[string]any{"b": map[string]any{"c": "x"}}}},
		"deep wrong":       {"spec": map[string]any{"a": map[string]any{"b": "s"}}},
		"float key values": {"metadata": map[string]any{"labels": map[string]any{"k": 1e300}}},
	}
	read, left := 0, 0
	for _, expr := range exprs {
		for _, c := range []struct{ cached, kept bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			pe := podExprOf(t, expr, c.cached, c.kept)
			for name, pod := range pods {
				pi := newPodIn(pod)
				// Twice: the second read comes from the caches.
				for range 2 {
					want, wantErr := gojqEvaluator{}.all(ctx, pe.jqProgram, pod)
					v, ok := pe.read(&pi)
					var one [1]any
					got, gotErr := pe.all(ctx, gojqEvaluator{}, &pi, &one)
					if !ok {
						left++
						// The evaluator's own outcome, error included.
						assert.Equal(t, wantErr != nil, gotErr != nil, "%s on %s", expr, name)
						assert.Equal(t, want, got, "%s on %s", expr, name)
						continue
					}
					read++
					require.NoError(t, wantErr, "%s on %s: read in place, but gojq fails", expr, name)
					assert.Equal(t, []any{v}, want, "%s on %s", expr, name)
					require.NoError(t, gotErr)
					assert.Equal(t, want, got, "%s on %s", expr, name)
					// The direct evaluator agrees where it does not decline.
					d := (&Program{limits: Limits{}.WithDefaults()}).newEvaluator(ctx, nil)
					outs, err := d.all(ctx, pe.jqProgram, pod)
					require.NoError(t, err, "%s on %s: direct", expr, name)
					assert.Equal(t, jqvalue.Output(want), jqvalue.Output(outs), "%s on %s: direct", expr, name)
					require.NoError(t, d.finish(nil))
				}
			}
		}
	}
	assert.Greater(t, read, 50, "paths read in place")
	assert.Greater(t, left, 50, "paths left to the evaluator")
}

// countingEvaluator counts the runs it passes on to gojq.
type countingEvaluator struct{ runs map[*jqProgram]int }

func (e *countingEvaluator) all(ctx context.Context, p *jqProgram, input any) ([]any, error) {
	e.runs[p]++
	return gojqEvaluator{}.all(ctx, p, input)
}

// TestPodExprEvaluatesOncePerPod: a pod path the evaluator answers is run
// once per pod and program however many readers ask (Milvus' seven
// components share their selector), with its outputs and its error each
// time; another program or another pod runs again.
func TestPodExprEvaluatesOncePerPod(t *testing.T) {
	ctx := context.Background()
	sel := podExprOf(t, `.metadata.labels | select(.["app"] == "milvus") | .["component"]`, false, false)
	bad := podExprOf(t, `.metadata.labels | .["component"] + 1`, false, false)
	other := podExprOf(t, `[.metadata.labels[]] | length`, false, false)
	pod := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "milvus", "component": "proxy"}}}
	ev := &countingEvaluator{runs: map[*jqProgram]int{}}
	in := newPodIn(pod)
	for range 7 {
		var one [1]any
		outs, err := sel.all(ctx, ev, &in, &one)
		require.NoError(t, err)
		assert.Equal(t, []any{"proxy"}, outs)
		_, err = bad.all(ctx, ev, &in, &one)
		assert.ErrorContains(t, err, "cannot add")
	}
	for _, tc := range []struct {
		name string
		pe   *podExpr
		runs int
	}{{"selector", sel, 1}, {"failing", bad, 1}, {"unread", other, 0}} {
		assert.Equal(t, tc.runs, ev.runs[tc.pe.jqProgram], tc.name)
	}
	// A third program pushes out the oldest; a new pod starts afresh.
	var one [1]any
	outs, err := other.all(ctx, ev, &in, &one)
	require.NoError(t, err)
	assert.Equal(t, []any{2}, outs)
	_, _ = sel.all(ctx, ev, &in, &one)
	assert.Equal(t, 2, ev.runs[sel.jqProgram], "evicted by the third program")
	next := newPodIn(pod)
	_, _ = bad.all(ctx, ev, &next, &one)
	assert.Equal(t, 2, ev.runs[bad.jqProgram], "a new pod")
}

// TestPodExprSlots: the gang model numbers its plain paths by their keys,
// so that two spellings of one path share a pod's kept value and other
// paths never read it; past maxSlots paths are read each time.
func TestPodExprSlots(t *testing.T) {
	ctx := context.Background()
	var pes []*podExpr
	for _, expr := range []string{`.metadata.labels["a"]`, `.metadata.labels.a`, `.metadata.labels["b"]`, `.metadata.annotations["a"]`, `.metadata.name`} {
		pes = append(pes, podExprOf(t, expr, false, false))
	}
	var more []*podExpr
	for i := range maxSlots {
		more = append(more, podExprOf(t, fmt.Sprintf(`.spec.x%d`, i), false, false))
	}
	g := &gangModel{comps: []*gangComp{
		{typeKey: pes[0], instanceID: pes[2], replicaKey: pes[3]},
		{typeKey: pes[1], instanceID: pes[4]},
	}}
	for _, pe := range more {
		g.comps = append(g.comps, &gangComp{typeKey: pe})
	}
	g.indexParents()
	assert.Equal(t, pes[0].slot, pes[1].slot, "two spellings of one path")
	slots := map[int]bool{}
	for _, pe := range append([]*podExpr{pes[0], pes[2], pes[3], pes[4]}, more...) {
		if pe.slot >= 0 {
			assert.False(t, slots[pe.slot], "slot %d given twice", pe.slot)
			slots[pe.slot] = true
		}
	}
	assert.Len(t, slots, maxSlots)
	assert.Equal(t, -1, more[len(more)-1].slot, "past maxSlots")
	assert.Equal(t, pes[0].parent, pes[2].parent, ".metadata.labels")
	assert.NotEqual(t, pes[0].parent, pes[3].parent, ".metadata.annotations")

	labels := map[string]any{"a": "1", "b": "2"}
	spec := map[string]any{}
	for i := range maxSlots {
		spec[fmt.Sprintf("x%d", i)] = fmt.Sprint(i)
	}
	pod := map[string]any{"metadata": map[string]any{"name": "p", "labels": labels, "annotations": map[string]any{"a": "3"}}, "spec": spec}
	in := newPodIn(pod)
	read := func(pe *podExpr) any {
		var one [1]any
		outs, err := pe.all(ctx, gojqEvaluator{}, &in, &one)
		require.NoError(t, err)
		require.Len(t, outs, 1)
		return outs[0]
	}
	for i, want := range []any{"1", "1", "2", "3", "p"} {
		assert.Equal(t, want, read(pes[i]), "path %d", i)
	}
	for i, pe := range more {
		assert.Equal(t, fmt.Sprint(i), read(pe), "path .spec.x%d", i)
	}
	// Kept values are the pod's as first read: a changed label is not
	// seen again through either spelling, and an unkept path reads anew.
	labels["a"], spec[fmt.Sprintf("x%d", maxSlots-1)] = "changed", "changed"
	assert.Equal(t, "1", read(pes[1]))
	assert.Equal(t, "changed", read(more[maxSlots-1]))
}
