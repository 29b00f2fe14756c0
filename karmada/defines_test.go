package karmada_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
)

// What a webhook configuration may send each built-in: Karmada takes a
// refused operation as an error, so these must be exactly what the
// Program answers.
func TestDefinedOperations(t *testing.T) {
	always := []karmada.Operation{karmada.OpInterpretStatus, karmada.OpAggregateStatus, karmada.OpInterpretHealth, karmada.OpInterpretDependency}
	cases := []struct {
		name string
		want []karmada.Operation
	}{
		// One component of one instance, a replicasPath: all but Retain.
		{"deployment", append([]karmada.Operation{karmada.OpInterpretReplica, karmada.OpInterpretComponent, karmada.OpReviseReplica}, always...)},
		// Two pod-bearing components: no single replica count.
		{"pytorchjob", append([]karmada.Operation{karmada.OpInterpretComponent}, always...)},
		// One component with instance ids (a Job per replicated job):
		// GetReplicas refuses a JobSet of several.
		{"jobset", append([]karmada.Operation{karmada.OpInterpretComponent}, always...)},
		// One instance, no replicasPath to revise.
		{"nimcache", append([]karmada.Operation{karmada.OpInterpretReplica, karmada.OpInterpretComponent}, always...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, ok, err := builtin.Get(tc.name)
			require.NoError(t, err)
			require.True(t, ok)
			p, err := b.Compile(interpreter.Options{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, karmada.ForProgram(p).DefinedOperations())
			assert.False(t, karmada.ForProgram(p).Defines(karmada.OpRetain), "a Karta generates no Retain")
		})
	}
}
