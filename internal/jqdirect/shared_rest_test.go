package jqdirect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// TestSharedPlainRest: a program split after its shared prefix whose rest
// is a plain path reads it on each prefix output without the general walk
// (pathNode.onEach), with Run's outputs: a value per output, none where a
// `?` step fails, a decline where a step fails.
func TestSharedPlainRest(t *testing.T) {
	in := map[string]any{"spec": map[string]any{"mode": "cluster",
		"components": map[string]any{"proxy": map[string]any{"image": "milvus:2.5", "replicas": int64(2)}},
		"list":       []any{map[string]any{"a": 1.0}, "s", map[string]any{}}}}
	for _, tc := range []struct {
		expr     string
		k        int
		plain    bool
		want     []any
		declines bool
	}{
		{`select(.spec.mode == "cluster") | .spec.components.proxy.image`, 1, true, []any{"milvus:2.5"}, false},
		{`select(.spec.mode == "cluster") | .spec.components.proxy.replicas`, 1, true, []any{int64(2)}, false},
		{`select(.spec.mode == "standalone") | .spec.components.proxy.image`, 1, true, nil, false},
		{`.spec.list[] | .a?`, 1, true, []any{int64(1), nil}, false},
		{`.spec.list[] | .a`, 1, true, nil, true},
		{`select(.spec.mode == "cluster") | .spec.components.proxy | .replicas // 1`, 4, false, []any{int64(2)}, false},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err, tc.expr)
		p := CompileShared(q, tc.k)
		require.NotNil(t, p, tc.expr)
		require.NotNil(t, p.pre, tc.expr)
		assert.Equal(t, tc.plain, p.restPath != nil, tc.expr)
		s := Scratch{Share: true}
		got, ok := p.Run(in, &s)
		s.Release()
		require.Equal(t, !tc.declines, ok, tc.expr)
		assert.Equal(t, tc.want, got, tc.expr)
	}
}

// TestSharedSingleRest: a rest that gives at most one output per prefix
// output runs through eval1 (restOnEach) with the general form's outputs,
// declines and steps; a rest that may give more keeps the general form.
func TestSharedSingleRest(t *testing.T) {
	in := map[string]any{"spec": map[string]any{"mode": "cluster",
		"components": map[string]any{
			"proxy":     map[string]any{"replicas": int64(2)},
			"querynode": map[string]any{"replicas": int64(-1), "hpa": map[string]any{"minReplicas": int64(3)}},
		},
		"list": []any{map[string]any{"a": 1.0}, map[string]any{"a": "x"}, map[string]any{}}}}
	for _, tc := range []struct {
		expr     string
		k        int
		single   bool
		want     []any
		declines bool
	}{
		{`select(.spec.mode == "cluster") | .spec.components.proxy | if .hpa != null or .replicas == -1 then null else (.replicas // 1) end`, 4, true, []any{int64(2)}, false},
		{`select(.spec.mode == "cluster") | .spec.components.querynode | if .hpa != null then (.hpa.minReplicas // 1) elif .replicas == -1 then 1 else null end`, 4, true, []any{int64(3)}, false},
		{`select(.spec.mode == "standalone") | .spec.components.proxy | .replicas // 1`, 4, true, nil, false},
		{`.spec.list[] | select(.a != null) | .a`, 1, true, []any{int64(1), "x"}, false},
		{`.spec.list[] | .a + 1`, 1, true, nil, true},
		{`.spec.list[] | {b: .a}`, 1, true, []any{map[string]any{"b": int64(1)}, map[string]any{"b": "x"}, map[string]any{"b": nil}}, false},
		{`.spec.list[] | (.a, .a)`, 1, false, []any{int64(1), int64(1), "x", "x", nil, nil}, false},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err, tc.expr)
		p := CompileShared(q, tc.k)
		require.NotNil(t, p, tc.expr)
		require.NotNil(t, p.pre, tc.expr)
		assert.Equal(t, tc.single, p.restOne, tc.expr)
		s := Scratch{Share: true}
		got, ok := p.Run(in, &s)
		steps, _ := s.Spent()
		s.Release()
		require.Equal(t, !tc.declines, ok, tc.expr)
		assert.Equal(t, tc.want, got, tc.expr)
		// The general form's steps: the same split, its rest evaluated
		// by eval.
		p.restOne = false
		s = Scratch{Share: true}
		want, wantOK := p.Run(in, &s)
		wantSteps, _ := s.Spent()
		s.Release()
		assert.Equal(t, wantOK, ok, tc.expr)
		assert.Equal(t, want, got, tc.expr)
		if ok {
			assert.Equal(t, wantSteps, steps, tc.expr)
		}
	}
}
