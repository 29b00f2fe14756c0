package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
	"github.com/kartalua/karta/interpreter"
)

// builtinExamples are the examples of the built-in Kartas: each has a
// running.yaml and the pods.yaml of that object.
var builtinExamples = []string{
	"dynamographdeployment", "dynamographdeployment-v1beta1", "inferenceservice", "jaxjob", "jobset", "knative-service", "leaderworkerset",
	"llminferenceservice", "llminferenceservice-v1alpha1", "milvus",
	"appwrapper", "cronjob", "daemonset", "deployment", "flinkdeployment", "job", "mpijob", "mpijob-v1", "nimcache",
	"nimservice", "notebook", "paddlejob", "pod", "podcliqueset", "pytorchjob", "raycluster", "rayjob", "rayservice",
	"replicaset", "sandbox", "sparkapplication", "statefulset", "tfjob", "trainjob", "volcano-job", "workflow",
	"xgboostjob",
}

// examples reads the running object and the pods of each example, with
// the owners in between (see clustertest.Examples).
func examples(t *testing.T, names ...string) []*unstructured.Unstructured {
	t.Helper()
	return clustertest.Examples(t, "..", names...)
}

// fakeCluster serves the built-in kinds and holds objs.
func fakeCluster(t *testing.T, objs ...*unstructured.Unstructured) (*cluster.Client, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	return clustertest.New(t, append(clustertest.Core(), clustertest.Builtins(t)...), objs...)
}

// builtins is the registry of the built-ins, compiled once.
func builtins(t *testing.T) *interpreter.Registry {
	t.Helper()
	reg, err := builtin.Registry(interpreter.Options{PoolSize: 2})
	require.NoError(t, err)
	return reg
}
