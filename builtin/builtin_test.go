package builtin_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karta"
)

// The built-in workloads (MPIJob, LLMInferenceService and
// DynamoGraphDeployment in two versions each), sorted by name.
var wantBuiltins = []string{
	"appwrapper", "cronjob", "daemonset", "deployment", "dynamographdeployment", "dynamographdeployment-v1beta1",
	"flinkdeployment", "inferenceservice", "jaxjob", "job", "jobset", "knative-service", "leaderworkerset",
	"llminferenceservice", "llminferenceservice-v1alpha1", "milvus", "mpijob", "mpijob-v1", "nimcache", "nimservice",
	"notebook", "paddlejob", "pod", "podcliqueset", "pytorchjob", "raycluster", "rayjob", "rayservice", "replicaset",
	"sandbox", "sparkapplication", "statefulset", "tfjob", "trainjob", "volcano-job", "workflow", "xgboostjob",
}

func TestBuiltinsAreComplete(t *testing.T) {
	assert.Equal(t, wantBuiltins, builtin.Names())
}

// TestBuiltinsValidate: every built-in validates with no errors and
// compiles; warnings are listed so that a new one is a visible change.
func TestBuiltinsValidate(t *testing.T) {
	all, err := builtin.All()
	require.NoError(t, err)
	for _, b := range all {
		t.Run(b.Name, func(t *testing.T) {
			problems := karta.ValidateWithOptions(b.Karta, interpreter.ValidateOptions())
			assert.Empty(t, problems.Errors(), "a built-in must validate with no errors")
			for _, w := range problems.Warnings() {
				t.Logf("%s", w)
			}
			_, err := b.Compile(interpreter.Options{})
			require.NoError(t, err)
		})
	}
}

func TestRegistryByGVKAndName(t *testing.T) {
	reg, err := builtin.Registry(interpreter.Options{})
	require.NoError(t, err)
	for _, p := range reg.List() {
		got, ok := reg.Get(p.GVK())
		require.True(t, ok)
		assert.Same(t, p, got)
		byName, ok := reg.ByName(p.Name())
		require.True(t, ok)
		assert.Same(t, p, byName)
	}
	assert.Len(t, reg.List(), len(wantBuiltins))
}
