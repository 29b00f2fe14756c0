//go:build integration

package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// grepKarta keeps the karta_ lines of a scrape.
func grepKarta(body string) string {
	return strings.Join(regexp.MustCompile(`(?m)^karta_(exporter|workload|pod)_.*$`).FindAllString(body, 200), "\n")
}
