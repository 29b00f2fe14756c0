package luaapi

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoCallLimits: Go work under a GoCall ends on the limits a Lua call
// ends on, with the *LimitError CallProtected returns for each.
func TestGoCallLimits(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		limits Limits
		start  time.Time
		steps  int64
		bytes  int64
		want   LimitKind // "" for none
		cause  error
		limit  string
	}{
		{name: "within the limits", ctx: context.Background(), limits: Limits{MaxInstructions: 1000, MaxMemory: 1 << 20}, start: time.Now(), steps: 10, bytes: 100},
		{name: "budget", ctx: context.Background(), limits: Limits{MaxInstructions: 1000}, start: time.Now(), steps: 2000, want: KindInstructions, limit: "1000"},
		{name: "memory", ctx: context.Background(), limits: Limits{MaxMemory: 1 << 20}, start: time.Now(), bytes: 2 << 20, want: KindMemory, limit: "1 MiB"},
		{name: "deadline passed", ctx: context.Background(), limits: Limits{Timeout: time.Millisecond}, start: time.Now().Add(-time.Second), want: KindDeadline, cause: context.DeadlineExceeded, limit: "1ms"},
		{name: "context done", ctx: cancelled, limits: Limits{}, start: time.Now(), want: KindDeadline, cause: context.Canceled},
		{name: "no limits", ctx: context.Background(), limits: Limits{Timeout: -1, MaxInstructions: -1, MaxMemory: -1}, start: time.Now().Add(-time.Hour), steps: 1 << 40, bytes: 1 << 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.limits.StartGo(tc.ctx, tc.start)
			err := g.Charge(tc.steps, tc.bytes)
			if tc.want == "" {
				require.NoError(t, err)
				require.NoError(t, g.Context().Err())
				return
			}
			var le *LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.want, le.Kind)
			if tc.limit != "" {
				assert.Equal(t, tc.limit, le.Limit)
			}
			if tc.cause != nil {
				assert.ErrorIs(t, err, tc.cause)
			}
			assert.Error(t, g.Context().Err(), "the context is done: gojq stops")
			assert.Equal(t, err, g.Err(), "the limit stays")
		})
	}
}
