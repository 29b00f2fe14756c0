package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmbed runs the program on the PyTorchJob example: the job's four pods
// form one gang that can be admitted.
func TestEmbed(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, "../pytorchjob/running.yaml", "../pytorchjob/pods.yaml"))
	assert.Regexp(t, `^PyTorchJob \S+/\S+ is Running \(Karta "pytorchjob"\)\n`, out.String())
	assert.Regexp(t, `(?m)^admit pg-\S+-job: 4 of minMember 4 pods present$`, out.String())
}
