package main

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/kartalua/karta/exporter"
	"github.com/kartalua/karta/interpreter"
)

// newExporter creates the workload metrics exporter (docs/metrics.md) of
// the registry, its series registered with metrics, on the process's
// shared informers.
func newExporter(disco discovery.DiscoveryInterface, dyn dynamic.Interface, shared *sharedWatch, reg *interpreter.Registry,
	log *slog.Logger, metrics prometheus.Registerer, probe func(context.Context) error, references interpreter.Resolver) (*exporter.Exporter, error) {
	return exporter.New(dyn, shared.meta, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), reg, exporter.Options{
		Registerer:  metrics,
		Logger:      log,
		ServerProbe: probe,
		References:  references,
		Informers:   shared.informers,
	})
}
