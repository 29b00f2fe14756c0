package interpreter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExactRunsWithTheCallsVariables: an exact evaluation of a program
// compiled with fewer variables than the call binds (jq's tostring of a
// matcher's composite or float output, in a Karta with references) runs
// with the call's values fitted to the program's, and gives gojq's text.
func TestExactRunsWithTheCallsVariables(t *testing.T) {
	p := progCompile(t, progKarta(t, refsKarta), Options{})
	ctx := context.Background()
	ev := p.newEvaluator(ctx, nil)
	require.NotEmpty(t, ev.s.Vars, "the references' values are bound")
	for _, tc := range []struct {
		v    any
		want string
	}{
		{map[string]any{"b": int64(2), "a": 1.5}, `{"a":1.5,"b":2}`},
		{[]any{nil, true, "x"}, `[null,true,"x"]`},
		{1.5, "1.5"},
	} {
		got, err := ev.tostring(tc.v)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	require.NoError(t, ev.finish(nil))
}
