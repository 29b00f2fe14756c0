package luaapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kartalua/karta/internal/srcbound"
)

func TestLimitsDefaults(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want Limits
	}{
		{"zero: every default", Limits{}, Limits{Timeout: time.Second, MaxInstructions: DefaultMaxInstructions,
			CallDepth: DefaultCallStackSize, MaxStringSize: DefaultMaxStringSize, MaxMemory: DefaultMaxMemory,
			MaxSourceSize: srcbound.DefaultMaxSourceSize, MaxNesting: srcbound.DefaultMaxNesting}},
		{"negative: none", Limits{Timeout: -1, MaxInstructions: -1, MaxMemory: -1}, Limits{Timeout: -1, MaxInstructions: -1,
			CallDepth: DefaultCallStackSize, MaxStringSize: DefaultMaxStringSize, MaxMemory: -1,
			MaxSourceSize: srcbound.DefaultMaxSourceSize, MaxNesting: srcbound.DefaultMaxNesting}},
		{"set: kept", Limits{Timeout: time.Minute, MaxInstructions: 5, CallDepth: 9, MaxStringSize: 7, MaxMemory: 3, MaxSourceSize: 11, MaxNesting: 13},
			Limits{Timeout: time.Minute, MaxInstructions: 5, CallDepth: 9, MaxStringSize: 7, MaxMemory: 3, MaxSourceSize: 11, MaxNesting: 13}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.WithDefaults()
			assert.Equal(t, tc.want, got)
			sb := tc.in.Sandbox(nil)
			assert.Equal(t, SandboxOptions{CallStackSize: got.CallDepth, MaxStringSize: got.MaxStringSize,
				MaxInstructions: got.MaxInstructions, MaxMemory: got.MaxMemory}, sb)
		})
	}
}
