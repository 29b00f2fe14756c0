package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/karmada"
)

// Issue 30's targets for what a user ships: the argocd-cm of every
// built-in within half a ConfigMap, each built-in's Karmada export within
// 100 KB and PyTorchJob's (a 108-line Karta) within 40 KB.
const (
	argoCMTarget         = 512 << 10
	karmadaTarget        = 100_000
	karmadaPyTorchTarget = 40_000
)

// TestExportSizes: every export a built-in has is within issue 30's
// targets, so a change that grows one past its target fails. Each Karmada
// rule's script carries its own copy of the parts of the jq runtime its
// function reaches (Karmada has no shared library), so the largest are
// AppWrapper's component and dependency rules, each of which derives the
// podSets from their paths and follows them into the wrapped template
// (docs/performance.md, "Exports a user can ship").
func TestExportSizes(t *testing.T) {
	reg, err := builtinRegistry()
	require.NoError(t, err)
	progs := reg.List()
	require.NotEmpty(t, progs)
	exported := 0
	for _, p := range progs {
		data, err := karmada.Export(p)
		if err != nil {
			continue // a built-in Karmada's runtime cannot run (TestBundledScriptsAreFresh lists them)
		}
		exported++
		target := karmadaTarget
		if p.Name() == "pytorchjob" {
			target = karmadaPyTorchTarget
		}
		assert.LessOrEqual(t, len(data), target, "the Karmada export of %s", p.Name())
	}
	assert.Greater(t, exported, len(progs)/2, "most built-ins export to Karmada")

	stdout, stderr, code := runCLI(t, "", "argo", "export", "-o", "argocd-cm", "--examples", "../../examples")
	require.Equal(t, 0, code, stderr)
	assert.LessOrEqual(t, len(stdout), argoCMTarget, "the argocd-cm of every built-in")
}
