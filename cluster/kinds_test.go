package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/clustertest"
)

// KIND matches a kind by any of its names, case-insensitively, or a Karta
// by name.
func TestKindsMatch(t *testing.T) {
	c, _ := fakeCluster(t)
	reg := builtins(t)
	cases := []struct {
		arg  string
		want []string // Karta names
	}{
		{"", []string{"appwrapper", "cronjob", "daemonset", "deployment", "dynamographdeployment-v1beta1", "flinkdeployment",
			"inferenceservice", "jaxjob", "job", "jobset", "knative-service", "leaderworkerset", "llminferenceservice",
			"milvus", "mpijob-v1", "nimcache", "nimservice", "notebook", "paddlejob", "pod", "podcliqueset", "pytorchjob",
			"raycluster", "rayjob", "rayservice", "replicaset", "sandbox", "sparkapplication", "statefulset", "tfjob",
			"trainjob", "volcano-job", "workflow", "xgboostjob"}},
		{"PyTorchJob", []string{"pytorchjob"}},
		{"pytorchjobs", []string{"pytorchjob"}},
		{"PYTORCHJOB", []string{"pytorchjob"}},
		{"pytorchjobs.kubeflow.org", []string{"pytorchjob"}},
		{"isvc", []string{"inferenceservice"}},
		{"ksvc", []string{"knative-service"}},
		{"service", []string{"knative-service"}},
		{"lws", []string{"leaderworkerset"}},
		{"milvuses", []string{"milvus"}},
		{"jobset", []string{"jobset"}},
		{"knative-service", []string{"knative-service"}},
		// The API server's own kinds, by kubectl's names.
		{"pods", []string{"pod"}},
		{"po", []string{"pod"}},
		{"deploy", []string{"deployment"}},
		{"deployments.apps", []string{"deployment"}},
		{"rs", []string{"replicaset"}},
		{"sts", []string{"statefulset"}},
		{"ds", []string{"daemonset"}},
		{"jobs", []string{"job"}},
		{"jobs.batch", []string{"job"}},
		{"cj", []string{"cronjob"}},
		// One resource, two Kartas: the cluster's preferred version,
		// unless a Karta is named.
		{"mpijobs", []string{"mpijob-v1"}},
		{"mpijob-v1", []string{"mpijob-v1"}},
		{"mpijob", []string{"mpijob"}},
		{"llmisvc", []string{"llminferenceservice"}},
		{"llminferenceservice-v1alpha1", []string{"llminferenceservice-v1alpha1"}},
		{"dgd", []string{"dynamographdeployment-v1beta1"}},
		{"dynamographdeployment", []string{"dynamographdeployment"}},
		{"pcs", []string{"podcliqueset"}},
		{"nimcaches", []string{"nimcache"}},
		{"aw", []string{"appwrapper"}},
		{"flinkdep", []string{"flinkdeployment"}},
		{"rayservices", []string{"rayservice"}},
		{"sandbox", []string{"sandbox"}},
		{"wf", []string{"workflow"}},
		// Volcano's Job is named by its group or its Karta's name.
		{"jobs.batch.volcano.sh", []string{"volcano-job"}},
		{"volcano-job", []string{"volcano-job"}},
	}
	for _, tc := range cases {
		t.Run(tc.arg, func(t *testing.T) {
			kinds, err := c.Kinds(reg, tc.arg)
			require.NoError(t, err)
			var names []string
			for _, k := range kinds {
				names = append(names, k.Program.Name())
			}
			assert.ElementsMatch(t, tc.want, names)
		})
	}
}

// Kinds the cluster does not serve are skipped, unless named; a KIND no
// Karta is for is an error that lists the known ones.
func TestKindsNotServed(t *testing.T) {
	served := []clustertest.Resource{{GVK: schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}, Namespaced: true}}
	c, _ := clustertest.New(t, append(clustertest.Core(), served...))
	reg := builtins(t)

	kinds, err := c.Kinds(reg, "")
	require.NoError(t, err)
	var names []string
	for _, k := range kinds {
		names = append(names, k.Program.Name())
	}
	// Core serves Pods, Jobs, ReplicaSets, Deployments and StatefulSets
	// (not DaemonSets or CronJobs).
	assert.ElementsMatch(t, []string{"deployment", "job", "pod", "pytorchjob", "replicaset", "statefulset"}, names)

	for _, arg := range []string{"jobset", "JobSets", "jobsets.jobset.x-k8s.io"} {
		_, err = c.Kinds(reg, arg)
		var ns *cluster.NotServedError
		require.ErrorAs(t, err, &ns, arg)
		assert.EqualError(t, err, arg+": the cluster does not serve jobset (jobset.x-k8s.io/v1alpha2, Kind=JobSet); is its CRD installed?")
	}

	_, err = c.Kinds(reg, "cronjobs")
	var notServed *cluster.NotServedError
	require.ErrorAs(t, err, &notServed)
	assert.EqualError(t, err, "cronjobs: the cluster does not serve cronjob (batch/v1, Kind=CronJob); is its CRD installed?")

	_, err = c.Kinds(reg, "configmaps")
	var unknown *cluster.UnknownKindError
	require.ErrorAs(t, err, &unknown)
	assert.Contains(t, err.Error(), "configmaps: no Karta for this kind (known: appwrapper, cronjob, daemonset, deployment, dynamographdeployment, flinkdeployment, inferenceservice, jaxjob, job, jobset,")
}
