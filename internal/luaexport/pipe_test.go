package luaexport

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/internal/third_party/gojq"
)

// TestSplits: a path reads as prefix | last where jq means the same: a
// plain pipeline at its last pipe, a field chain after each field, longest
// prefix first; a pipeline that binds or defines is not split.
func TestSplits(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want [][2]string
	}{
		{`.spec | select(.worker == null) | .template.containers`, [][2]string{{`.spec | select(.worker == null)`, `.template.containers`}}},
		{`.a, .b | .c`, [][2]string{{`.a, .b`, `.c`}}},
		{`.spec.components.proxy.image`, [][2]string{
			{`.spec.components.proxy`, `.image`},
			{`.spec.components`, `.proxy.image`},
			{`.spec`, `.components.proxy.image`},
		}},
		{`.a["b"]`, [][2]string{{`.a`, `.["b"]`}}},
		{`.a`, nil},
		{`.a[]`, nil},
		{`.a.b?`, nil},
		{`.a as $x | $x.b`, nil},
		{`def f: .a; f | .b`, nil},
	} {
		q, err := gojq.Parse(tc.expr)
		require.NoError(t, err, tc.expr)
		var got [][2]string
		for _, sp := range splits(q) {
			got = append(got, [2]string{sp.p.String(), sp.s.String()})
		}
		assert.Equal(t, tc.want, got, tc.expr)
	}
}

// TestSplitWorth: a pipeline's shared prefix is always translated once; a
// field chain's only when the paths that share it save more than the
// piping costs.
func TestSplitWorth(t *testing.T) {
	assert.True(t, split{}.worth(2), "a pipeline's prefix")
	assert.False(t, split{fields: 2}.worth(2), ".spec.pytorchReplicaSpecs for Master and Worker")
	assert.True(t, split{fields: 3}.worth(9), ".spec.components.proxy for nine fragments")
}
