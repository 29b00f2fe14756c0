package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/refs"
	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/exporter"
	"github.com/kartalua/karta/internal/watchguard"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/webhook"
)

type controllerFlags struct {
	config          cluster.ConfigFlags
	selector        string
	leaderElect     bool
	leaseNamespace  string
	leaseName       string
	healthAddr      string
	metricsAddr     string
	builtins        bool
	workers         int
	serve           string
	tlsCert, tlsKey string
	clientCA        string
	isolate         isolateFlags
	leaseDuration   time.Duration
	leaseRenewal    time.Duration
	leaseRetry      time.Duration
	identity        string
	limitInterval   time.Duration
	// metricsExporter turns on the workload metrics exporter.
	metricsExporter bool

	// The gang output (controller_gang.go).
	gangOutput        string
	gangSkip          []string
	gangSelector      string
	gangQueue         string
	gangCPG           bool
	gangVolcanoPolicy bool
	podWebhook        bool

	// flags are the command's, to tell a flag given from its default.
	flags *pflag.FlagSet
}

func newControllerCmd(s streams) *cobra.Command {
	f := controllerFlags{}
	cmd := &cobra.Command{
		Use:   "controller [--kubeconfig FILE] [--context CONTEXT] [--leader-elect=false] [--health-addr ADDR] [--metrics-addr ADDR] [--serve ADDR]",
		Short: "Run the Karta controller: keep a registry in step with the cluster's Kartas",
		Long: "Run the Karta controller against a cluster: it watches the Karta objects (run.ai/v1alpha1\n" +
			"kartas, and the legacy optimization.nvidia.com/v1alpha1 resourceinterfaces when served),\n" +
			"validates and compiles each one, registers its Program for its kind in place of the built-in\n" +
			"(unless --builtins=false) and writes status.conditions Accepted and Compiled on it, and\n" +
			"Evaluating on a registered one (False while its evaluations end on limits; --limit-interval).\n" +
			"With --leader-elect (the default) only the holder of a Lease writes status; every replica\n" +
			"keeps its registry current. /healthz answers while the process runs, /readyz once the\n" +
			"registry reflects the cluster and the caches of the gang output and of the Kartas'\n" +
			"referenced kinds are synced, while the API server answers their watches (\"ok: leader\" or\n" +
			"\"ok: standby\"), /metrics serves Prometheus metrics. --serve also serves Karmada's resource interpreter webhook from the live registry.\n" +
			"--gang-output TARGET keeps a gang scheduler's objects (the Kubernetes Workload API's, or\n" +
			"KAI-Scheduler's, Volcano's or coscheduling's PodGroups) in step with every workload a Karta\n" +
			"describes, and --pod-webhook links each new pod to its group (served on --serve's port at\n" +
			"/mutate-pods). --metrics-exporter adds every described workload's series to /metrics\n" +
			"(docs/metrics.md). SIGINT or SIGTERM stops it and releases the lease.",
		Example: "  karta controller\n" +
			"  karta controller --kubeconfig ~/.kube/config --context prod --leader-election-namespace karta-system\n" +
			"  karta controller --leader-elect=false --serve :8443 --tls-cert tls.crt --tls-key tls.key\n" +
			"  karta controller --gang-output volcano --pod-webhook --serve :8443 --tls-cert tls.crt --tls-key tls.key",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runController(cmd.Context(), s, &f)
		},
	}
	fl := cmd.Flags()
	f.flags = fl
	f.config.AddFlags(fl, false)
	// Kartas are cluster-scoped: the namespace is only the Lease's.
	fl.Lookup("namespace").Usage = "the `NAMESPACE` of the Lease when --leader-election-namespace is not given (default the context's namespace, or \"default\")"
	fl.StringVarP(&f.selector, "selector", "l", "", "only the Kartas whose labels match this `SELECTOR` (e.g. shard=a); the others are left alone")
	fl.BoolVar(&f.leaderElect, "leader-elect", true, "elect a leader with a Lease; only the leader writes status")
	fl.StringVar(&f.leaseNamespace, "leader-election-namespace", "", "the `NAMESPACE` of the Lease (default -n)")
	fl.StringVar(&f.leaseName, "leader-election-name", "karta-controller", "the `NAME` of the Lease")
	fl.DurationVar(&f.leaseDuration, "leader-election-lease-duration", 15*time.Second, "how long standbys wait before taking over a lease that is not renewed")
	fl.DurationVar(&f.leaseRenewal, "leader-election-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it steps down")
	fl.DurationVar(&f.leaseRetry, "leader-election-retry-period", 2*time.Second, "how often to try to acquire or renew the lease")
	fl.StringVar(&f.identity, "leader-election-identity", "", "this replica's `IDENTITY` in the Lease (default HOSTNAME_PID)")
	fl.StringVar(&f.healthAddr, "health-addr", ":8081", "the `ADDR` of /healthz and /readyz (port 0 picks a free one)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", ":8080", "the `ADDR` of /metrics (port 0 picks a free one)")
	fl.BoolVar(&f.builtins, "builtins", true, "start the registry with the built-in Kartas (a Karta of the same kind replaces one)")
	fl.IntVar(&f.workers, "workers", controller.DefaultWorkers, "how many Kartas to reconcile at once")
	fl.DurationVar(&f.limitInterval, "limit-interval", controller.DefaultLimitInterval, "how often to report, in each Karta's Evaluating condition, the evaluations that ended on a limit (0: never)")
	fl.BoolVar(&f.metricsExporter, "metrics-exporter", false, "also serve the series of every workload the registry's Kartas describe on /metrics (docs/metrics.md)")
	fl.StringVar(&f.serve, "serve", "", "also serve Karmada's resource interpreter webhook on `ADDR` from the live registry")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "the PEM certificate `FILE` of --serve (with --tls-key: HTTPS)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "the PEM private key `FILE` of --tls-cert")
	fl.StringVar(&f.clientCA, "client-ca", "", "the PEM `FILE` of the CAs whose client certificates --serve requires (mTLS; with --tls-cert)")
	f.isolate.register(fl)
	addGangFlags(fl, &f)
	return cmd
}

func runController(ctx context.Context, s streams, f *controllerFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	cfg, err := f.config.RESTConfig()
	if err != nil {
		return reported(s, err)
	}
	cfg.UserAgent = "karta-controller"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return reported(s, fmt.Errorf("kubeconfig: %w", err))
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return reported(s, fmt.Errorf("kubeconfig: %w", err))
	}
	crds, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return reported(s, fmt.Errorf("kubeconfig: %w", err))
	}
	reg := interpreter.NewRegistry()
	if f.builtins {
		// The default pool size: the controller's registry answers
		// concurrent calls (the webhook of --serve, an embedder).
		if reg, err = builtin.Registry(interpreter.Options{}); err != nil {
			return reported(s, err)
		}
	}
	// The built-ins the registry starts with are trusted; the cluster's
	// Kartas, which replace or join them, run in worker processes
	// (--isolate). base shares the built-ins' entries, so a built-in
	// compiled on first use is the same Program in both.
	base := reg.Clone()
	kartas := webhook.Kartas{Registry: reg}
	sup, err := f.isolate.apply(&kartas, func(p *interpreter.Program) bool {
		bp, ok := base.Get(p.GVK())
		return ok && bp == p
	})
	if err != nil {
		return reported(s, err)
	}
	limitStats := (*interpreter.Program).LimitStats
	if sup != nil {
		defer sup.Close()
		limitStats = sup.LimitStats
	}
	log := slog.New(slog.NewTextHandler(s.err, nil))
	// client-go's own records (leader election's, the reflectors') go
	// through the same logger, rate-limited.
	defer watchguard.RouteKlog(log)()
	// One probe of the API server for every informer: a list or watch it
	// does not answer waits for /readyz and is retried at once.
	probe := watchguard.ReadyzProbe(disco.RESTClient())
	metrics := newControllerMetrics()
	// One informer per resource for the references cache, the gang output
	// and the exporter, which watch the same workload kinds, owners and
	// pods (a Deployment's ReplicaSets: its references, the exporter's
	// described kind, the gang output's owners).
	shared, err := newSharedWatch(cfg, dyn, log, metrics, probe)
	if err != nil {
		return reported(s, err)
	}
	// One cache of the referenced objects for every consumer: the gang
	// output, the exporter and the webhook of --serve (docs/karta.md,
	// "References").
	live, err := newLiveReferences(dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), reg,
		refs.Options{Registerer: metrics, Logger: log, Informers: shared.informers})
	if err != nil {
		return reported(s, err)
	}
	gang, err := newGangOutput(f, cfg, disco, dyn, shared, reg, log, metrics, gangHooks(kartas), probe, live.cache)
	if err != nil {
		return reported(s, err)
	}
	if gang.ctrl != nil {
		live.cache.OnChange(gang.ctrl.ReferenceChanged)
	}
	var exp *exporter.Exporter
	if f.metricsExporter {
		if exp, err = newExporter(disco, dyn, shared, reg, log, metrics, probe, live.cache); err != nil {
			return reported(s, err)
		}
		live.cache.OnChange(exp.ReferenceChanged)
	}
	kartaDyn, err := newKartaClient(cfg)
	if err != nil {
		return reported(s, err)
	}
	ctrl, err := controller.New(kartaDyn, reg, controller.Options{
		OnChange: func(gvk schema.GroupVersionKind, p *interpreter.Program) {
			gang.kindChanged(gvk, p)
			if exp != nil {
				exp.KindChanged(gvk, p)
			}
			live.changed()
		},
		Discovery:     disco,
		CRDs:          crds.ApiextensionsV1().CustomResourceDefinitions(),
		Logger:        log,
		Registerer:    metrics,
		ServerProbe:   probe,
		Standby:       f.leaderElect,
		LabelSelector: f.selector,
		Workers:       f.workers,
		LimitInterval: limitInterval(f.limitInterval),
		LimitStats:    limitStats,
	})
	if err != nil {
		return reported(s, err)
	}
	lead := leaders{ctrl}
	if gang.ctrl != nil {
		lead = append(lead, gang.ctrl)
	}
	var elect *election
	if f.leaderElect {
		if elect, err = newElection(f, cfg, lead, log); err != nil {
			return reported(s, err)
		}
	}
	servers, err := listenController(s, f, ctrl, gang, kartas, live, metrics, exp)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	failed := make(chan error, len(servers)+3)
	for _, srv := range servers {
		log.Info("serving "+srv.what, "addr", srv.ln.Addr().String())
		wg.Go(func() {
			if err := srv.serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				failed <- fmt.Errorf("%s: %w", srv.what, err)
			}
		})
	}
	// Before the watchers' runs: their informers run under ctx.
	shared.informers.Start(ctx)
	wg.Go(func() { live.run(ctx) })
	wg.Go(func() {
		if err := ctrl.Run(ctx); err != nil {
			failed <- err
		}
	})
	if gang.ctrl != nil {
		wg.Go(func() {
			if err := gang.ctrl.Run(ctx); err != nil {
				failed <- err
			}
		})
	}
	defer gang.stop()
	if exp != nil {
		wg.Go(func() {
			if err := exp.Run(ctx); err != nil {
				failed <- err
			}
		})
	}
	if elect != nil {
		wg.Go(func() { elect.run(ctx) })
	}

	var runErr error
	select {
	case runErr = <-failed:
	case <-ctx.Done():
	}
	stop() // a second signal kills at once
	log.Info("shutting down")
	cancel() // stops the controller and releases the lease
	shutdownCtx, done := context.WithTimeout(context.Background(), shutdownGrace)
	defer done()
	for _, srv := range servers {
		_ = srv.Shutdown(shutdownCtx) // requests in flight get the grace period
	}
	wg.Wait()
	shared.informers.Wait() // they use klog's logger, restored when this returns
	if runErr != nil {
		return reported(s, runErr)
	}
	return nil
}

// check rejects flag combinations that cannot work (exit 2).
func (f *controllerFlags) check() error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usageError("--tls-cert and --tls-key go together")
	}
	if f.tlsCert != "" && f.serve == "" {
		return usageError("--tls-cert and --tls-key are for --serve")
	}
	if f.clientCA != "" && f.tlsCert == "" {
		return usageError("--client-ca needs --tls-cert and --tls-key")
	}
	if err := f.isolate.check(); err != nil {
		return err
	}
	if _, err := labels.Parse(f.selector); err != nil {
		return usageError("--selector: %v", err)
	}
	if f.workers <= 0 {
		return usageError("--workers must be positive, not %d", f.workers)
	}
	if f.limitInterval < 0 {
		return usageError("--limit-interval must not be negative, not %s", f.limitInterval)
	}
	if f.leaderElect {
		if f.leaseName == "" {
			return usageError("--leader-election-name must not be empty")
		}
	}
	return f.checkGang()
}

// limitInterval is --limit-interval as controller.Options.LimitInterval,
// where 0 means the default and a negative value never.
func limitInterval(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
