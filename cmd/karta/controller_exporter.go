package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kartalua/karta/exporter"
	"github.com/kartalua/karta/interpreter"
)

// newExporter creates the workload metrics exporter (docs/metrics.md) of
// the registry, its series registered with metrics.
func newExporter(cfg *rest.Config, disco discovery.DiscoveryInterface, dyn dynamic.Interface, reg *interpreter.Registry,
	log *slog.Logger, metrics prometheus.Registerer, probe func(context.Context) error, references interpreter.Resolver) (*exporter.Exporter, error) {
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return exporter.New(dyn, meta, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), reg, exporter.Options{
		Registerer:  metrics,
		Logger:      log,
		ServerProbe: probe,
		References:  references,
	})
}
