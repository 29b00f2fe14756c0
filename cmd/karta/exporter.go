package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/refs"
	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/internal/watchguard"
	"github.com/kartalua/karta/interpreter"
)

type exporterFlags struct {
	config   cluster.ConfigFlags
	address  string
	builtins bool
}

func newExporterCmd(s streams) *cobra.Command {
	f := exporterFlags{}
	cmd := &cobra.Command{
		Use:   "exporter [--kubeconfig FILE] [--context CONTEXT] [--address ADDR] [--builtins=true]",
		Short: "Serve Prometheus series of every workload a Karta describes, for clusters without the controller",
		Long: "Serve, on --address, the Prometheus series of every workload a Karta describes (docs/metrics.md):\n" +
			"status, time in it, desired, observed and ready pods per component and instance, requested\n" +
			"resources, gangs, and each pod's workload, component and instance. The Kartas are the built-ins\n" +
			"(unless --builtins=false) and, when the cluster serves kartas.run.ai, the cluster's Kartas,\n" +
			"followed as they change (read only: no status is written). What it shows follows the cluster\n" +
			"through watches, within seconds. /healthz answers while the process runs, /readyz once the\n" +
			"caches are synced. karta controller --metrics-exporter serves the same series. SIGINT or\n" +
			"SIGTERM stops it.",
		Example: "  karta exporter\n" +
			"  karta exporter --kubeconfig ~/.kube/config --context prod --address :9090",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runExporter(cmd.Context(), s, &f)
		},
	}
	fl := cmd.Flags()
	// The workloads of every namespace: no -n.
	all := pflag.NewFlagSet("", pflag.ContinueOnError)
	f.config.AddFlags(all, false)
	fl.AddFlag(all.Lookup("kubeconfig"))
	fl.AddFlag(all.Lookup("context"))
	fl.StringVar(&f.address, "address", ":8080", "the `ADDR` of /metrics, /healthz and /readyz (port 0 picks a free one)")
	fl.BoolVar(&f.builtins, "builtins", true, "describe workloads with the built-in Kartas (a cluster's Karta of the same kind replaces one)")
	return cmd
}

func runExporter(ctx context.Context, s streams, f *exporterFlags) error {
	cfg, err := f.config.RESTConfig()
	if err != nil {
		return reported(s, err)
	}
	cfg.UserAgent = "karta-exporter"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return reported(s, fmt.Errorf("kubeconfig: %w", err))
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return reported(s, fmt.Errorf("kubeconfig: %w", err))
	}
	reg := interpreter.NewRegistry()
	if f.builtins {
		if reg, err = builtin.Registry(interpreter.Options{}); err != nil {
			return reported(s, err)
		}
	}
	log := slog.New(slog.NewTextHandler(s.err, nil))
	defer watchguard.RouteKlog(log)()
	probe := watchguard.ReadyzProbe(disco.RESTClient())
	metrics := newControllerMetrics()
	shared, err := newSharedWatch(cfg, dyn, log, metrics, probe)
	if err != nil {
		return reported(s, err)
	}
	live, err := newLiveReferences(dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), reg,
		refs.Options{Registerer: metrics, Logger: log, Informers: shared.informers})
	if err != nil {
		return reported(s, err)
	}
	exp, err := newExporter(disco, dyn, shared, reg, log, metrics, probe, live.cache)
	if err != nil {
		return reported(s, err)
	}
	live.cache.OnChange(exp.ReferenceChanged)
	// The cluster's Kartas, followed by a Karta controller that never
	// leads: it compiles them into the registry and writes nothing.
	kartaDyn, err := newKartaClient(cfg)
	if err != nil {
		return reported(s, err)
	}
	kartas, err := controller.New(kartaDyn, reg, controller.Options{
		OnChange: func(gvk schema.GroupVersionKind, p *interpreter.Program) {
			exp.KindChanged(gvk, p)
			live.changed()
		},
		Discovery:     disco,
		Logger:        log,
		ServerProbe:   probe,
		Standby:       true,
		LimitInterval: -1,
	})
	if err != nil {
		return reported(s, err)
	}
	var noKartas atomic.Bool
	ln, err := net.Listen("tcp", f.address)
	if err != nil {
		return reported(s, fmt.Errorf("--address: %w", err))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", exp.Handler(metrics))
	mux.HandleFunc(healthzPath, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc(readyzPath, func(w http.ResponseWriter, _ *http.Request) {
		ready := exp.Ready()
		if !noKartas.Load() {
			ready = errors.Join(ready, kartas.Ready())
		}
		if ready != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "not ready: "+strings.ReplaceAll(ready.Error(), "\n", "; "))
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan error, 3)
	var wg sync.WaitGroup
	log.Info("serving metrics", "addr", ln.Addr().String())
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			failed <- fmt.Errorf("metrics: %w", err)
		}
	})
	// Before the watchers' runs: their informers run under ctx.
	shared.informers.Start(ctx)
	wg.Go(func() { live.run(ctx) })
	wg.Go(func() {
		err := kartas.Run(ctx)
		var notInstalled *controller.CRDNotInstalledError
		switch {
		case errors.As(err, &notInstalled):
			noKartas.Store(true)
			log.Info("the cluster serves no Kartas: the workloads are described by the built-ins only", "reason", err.Error())
		case err != nil:
			failed <- err
		}
	})
	wg.Go(func() {
		if err := exp.Run(ctx); err != nil {
			failed <- err
		}
	})
	var runErr error
	select {
	case runErr = <-failed:
	case <-ctx.Done():
	}
	stop()
	log.Info("shutting down")
	cancel()
	shutdownCtx, done := context.WithTimeout(context.Background(), shutdownGrace)
	defer done()
	_ = srv.Shutdown(shutdownCtx)
	wg.Wait()
	shared.informers.Wait() // they use klog's logger, restored when this returns
	if runErr != nil {
		return reported(s, runErr)
	}
	return nil
}
