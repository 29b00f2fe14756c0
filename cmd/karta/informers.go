package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kartalua/karta/internal/kindwatch"
)

// sharedWatch is what the process's watchers of workloads (the
// references cache, the gang output, the metrics exporter) share: the
// metadata client and the informers, one per resource, so that the
// workload kinds, their owners, the referenced kinds and the pods are
// watched and cached once however many watch them.
type sharedWatch struct {
	meta      metadata.Interface
	informers *kindwatch.Informers
}

func newSharedWatch(cfg *rest.Config, dyn dynamic.Interface, log *slog.Logger, metrics prometheus.Registerer,
	probe func(context.Context) error) (*sharedWatch, error) {
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	inf, err := kindwatch.NewInformers(dyn, meta, kindwatch.Options{Probe: probe, Registerer: metrics, Logger: log})
	if err != nil {
		return nil, err
	}
	return &sharedWatch{meta: meta, informers: inf}, nil
}

// newKartaClient is the client of the Karta controller's watch and status
// writes, apart from the one the workload informers share: each client has
// its own client-side rate limiter (client-go's 5 queries a second), and
// after an outage the workload kinds' forty-odd watches queue on theirs —
// the Kartas' watch, behind them, took up to 9 s to be retried, so the
// controller's readiness said nothing for that long (the chaos test's 20 s
// outage), and its registry waited as long to catch up after the server's
// return.
func newKartaClient(cfg *rest.Config) (dynamic.Interface, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return dyn, nil
}
