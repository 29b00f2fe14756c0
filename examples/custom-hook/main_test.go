package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCustomHook(t *testing.T) {
	out, err := run(context.Background(), ".")
	require.NoError(t, err)
	assert.Equal(t, "data/nightly-etl: Degraded (matched: Degraded, Running)\n", out)
}
