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
