package main

import (
	"time"

	"k8s.io/client-go/rest"

	"github.com/kartalua/karta/cluster"
)

// newClusterClient connects to the cluster the kubeconfig flags select.
// Tests replace it with a fake cluster. The API server's warnings
// (deprecated versions, say) go to standard error, once each.
var newClusterClient = func(s streams, f *cluster.ConfigFlags) (*cluster.Client, error) {
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.WarningHandler = rest.NewWarningWriter(s.err, rest.WarningWriterOptions{Deduplicate: true})
	return cluster.NewClient(cfg)
}

// now is the clock ages are measured by; tests pin it.
var now = time.Now
