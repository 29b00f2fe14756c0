//go:build integration

package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kartalua/karta/internal/testenv"
)

// karta controller --metrics-exporter on the test cluster: /metrics serves
// the controller's series and, within 30 s, the workload series of the
// examples deployed (a PyTorchJob and its pods; a JobSet).
func TestIntegrationControllerMetricsExporter(t *testing.T) {
	kubeconfig, ns, _, _ := liveCluster(t, "pytorchjob", "jobset")
	c := startController(t, "--kubeconfig", kubeconfig, "--leader-elect=false", "-l", "karta.run.ai/test="+ns,
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--serve", "127.0.0.1:0", "--metrics-exporter")
	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^karta_controller_synced 1$`),
		regexp.MustCompile(`(?m)^karta_exporter_info\{version="1"\} 1$`),
		regexp.MustCompile(`(?m)^karta_workload_info\{namespace="` + ns + `",workload="mistral-7b-sft",kind="PyTorchJob",group="kubeflow.org",version="v1",karta="pytorchjob"\} 1$`),
		regexp.MustCompile(`(?m)^karta_workload_info\{namespace="` + ns + `",workload="llama3-pretrain",kind="JobSet",group="jobset.x-k8s.io",version="v1alpha2",karta="jobset"\} 1$`),
		regexp.MustCompile(`(?m)^karta_pod_owner\{namespace="` + ns + `",pod="mistral-7b-sft-master-0",workload="mistral-7b-sft",kind="PyTorchJob",group="kubeflow.org",component="master",instance=""\} 1$`),
	}
	var body string
	require.Eventually(t, func() bool {
		_, body = httpGet(c.addrs["metrics"], "/metrics")
		for _, re := range want {
			if !re.MatchString(body) {
				return false
			}
		}
		return true
	}, 30*time.Second, 200*time.Millisecond, "/metrics:\n%s", grepKarta(body))
}

// karta controller --metrics-exporter --gang-output on the test cluster:
// both work, on one informer per resource — the controller holds one watch
// of JobSets (a gang output workload kind and a described kind), of
// StatefulSets (an owner kind the gang output reads by its metadata,
// described, and so read whole, by the exporter) and of ReplicaSets (the
// same, and what the built-in Deployment's references read), not two or
// three.
func TestIntegrationControllerExporterAndGangOutputShareInformers(t *testing.T) {
	_, ns, dyn, _ := liveCluster(t, "jobset")
	// The controller talks to the API server through a proxy that counts
	// its watches: the API server's own count is the cluster's, and other
	// packages' tests watch the same resources meanwhile.
	watches, kubeconfig := newWatchCounter(t, testenv.Config(t))
	c := startController(t, "--kubeconfig", kubeconfig, "--leader-elect=false", "-l", "karta.run.ai/test="+ns,
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--serve", "127.0.0.1:0", "--metrics-exporter",
		"--gang-output", "volcano")

	series := regexp.MustCompile(`(?m)^karta_workload_info\{namespace="` + ns + `",workload="llama3-pretrain",kind="JobSet",group="jobset.x-k8s.io",version="v1alpha2",karta="jobset"\} 1$`)
	var body string
	require.Eventually(t, func() bool {
		_, body = httpGet(c.addrs["metrics"], "/metrics")
		return series.MatchString(body)
	}, 30*time.Second, 200*time.Millisecond, "the exporter's series:\n%s", grepKarta(body))
	require.Eventually(t, func() bool {
		groups, err := dyn.Resource(volcanoGroupGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, g := range groups.Items {
			if ref := metav1.GetControllerOf(&g); ref != nil && ref.Kind == "JobSet" && ref.Name == "llama3-pretrain" {
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "the gang output's PodGroup of the JobSet")
	resources := []string{"jobsets", "statefulsets", "replicasets"}
	for _, resource := range resources {
		require.Eventually(t, func() bool { return watches.watching(resource) == 1 }, 30*time.Second, 200*time.Millisecond,
			"one watch of %s (now: %d)", resource, watches.watching(resource))
	}
	time.Sleep(2 * time.Second) // a second informer would have started by now
	for _, resource := range resources {
		require.Equal(t, 1, watches.watching(resource), "watches of %s", resource)
	}
}

// grepKarta keeps the karta_ lines of a scrape.
func grepKarta(body string) string {
	return strings.Join(regexp.MustCompile(`(?m)^karta_(exporter|workload|pod)_.*$`).FindAllString(body, 200), "\n")
}
