package interpreter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/jqexpr"
	"github.com/kartalua/karta/internal/jqvalue"
)

// podExprOf compiles expr as the gang model does, its parent path cached
// in slot 0 when cached is set.
func podExprOf(t *testing.T, expr string, cached bool) *podExpr {
	t.Helper()
	a, errs := jqexpr.Check(expr)
	require.Empty(t, errs, expr)
	p, err := compileAnalysis(a)
	require.NoError(t, err, expr)
	pe := &podExpr{jqProgram: p, keys: plainKeys(a.Query), parent: -1}
	if cached && len(pe.keys) > 1 {
		pe.parent = 0
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
		assert.Equal(t, want, podExprOf(t, expr, false).keys, expr)
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
		for _, cached := range []bool{false, true} {
			pe := podExprOf(t, expr, cached)
			for name, pod := range pods {
				pi := newPodIn(pod)
				// Twice: the second read comes from the parent cache.
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
	sel := podExprOf(t, `.metadata.labels | select(.["app"] == "milvus") | .["component"]`, false)
	bad := podExprOf(t, `.metadata.labels | .["component"] + 1`, false)
	other := podExprOf(t, `[.metadata.labels[]] | length`, false)
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
