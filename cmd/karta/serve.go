package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kartalua/karta/builtin"
	"github.com/kartalua/karta/cluster"
	"github.com/kartalua/karta/cluster/refs"
	"github.com/kartalua/karta/internal/watchguard"
	"github.com/kartalua/karta/interpreter"
	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/karta"
	"github.com/kartalua/karta/webhook"
)

// shutdownGrace is how long requests in flight have to finish once a
// signal asks the server to stop.
const shutdownGrace = 10 * time.Second

type serveFlags struct {
	listen          string
	tlsCert         string
	tlsKey          string
	clientCA        string
	customizations  []string
	kartas          []string
	builtins        bool
	maxRequestBytes int64
	isolate         isolateFlags
	// config, when --kubeconfig or --context is given, is the cluster the
	// Kartas' references resolve from.
	config cluster.ConfigFlags
}

func newServeCmd(s streams) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --listen ADDR [--tls-cert FILE --tls-key FILE [--client-ca FILE]] [-c CUSTOMIZATION...] [-k KARTA...] [--builtins=false] [--max-request-bytes N] [--isolate MODE]",
		Short: "Serve Karmada's resource interpreter webhook for Kartas and ResourceInterpreterCustomizations",
		Long: "Serve Karmada's resource interpreter webhook (ResourceInterpreterContext,\n" +
			"config.karmada.io/v1alpha1) at /interpret, plus /healthz (\"ok\"), /readyz and /metrics\n" +
			"(Prometheus).\n" +
			"It answers for the kinds of the customizations of -c (their Lua run unmodified; they win\n" +
			"over Kartas for the operations they script) and for the kinds of the Kartas of -k and the\n" +
			"built-in Kartas (their generated Karmada hooks; a -k Karta replaces the built-in of its\n" +
			"kind). Retain, ReviseReplica and\n" +
			"AggregateStatus answer with a JSON Patch from the request's object to the result.\n" +
			"What nothing interprets — a kind not served, an operation its customization does not\n" +
			"script, a hook its Karta does not define for the object (InterpretReplica of a kind with\n" +
			"two pod-bearing components) — is answered unsuccessful with code 404; a failing script or\n" +
			"hook with 500, and a bad request with 400.\n" +
			"With --tls-cert and --tls-key the server speaks HTTPS, as Karmada requires of webhooks;\n" +
			"with --client-ca too, it requires a client certificate signed by that CA (mTLS).\n" +
			"The Kartas of -k run in worker processes under kernel limits (--isolate=untrusted; all\n" +
			"isolates the built-ins too, none runs every Karta in the server): a Karta that crashes or\n" +
			"exhausts its worker fails that request with code 500, and the worker is restarted.\n" +
			"Each kind runs at most --karta-concurrency evaluations at once; requests over it wait in a\n" +
			"bounded queue for up to a second, or are answered 429 with Retry-After.\n" +
			"With --kubeconfig (or --context) the Kartas' references resolve from a cache of that\n" +
			"cluster's objects of the referenced kinds (docs/karta.md, \"References\"); without, they are\n" +
			"absent. Each reference an answer could not resolve is a Warning header of the answer.\n" +
			"The cache's lists and watches are guarded as the controller's: one the API server does not\n" +
			"answer waits for it and is retried at once, shows in karta_watch_failing, and past 10 s makes\n" +
			"/readyz answer 503 (\"not ready: ...\"), as it does until the cache's first lists are in; /readyz\n" +
			"says \"ok\" otherwise, and always without --kubeconfig.\n" +
			"It logs every kind it serves, and what answers for it, on standard error.\n" +
			"SIGINT or SIGTERM stops it, after the requests in flight finish.",
		Example: "  karta serve --listen :8443 --tls-cert tls.crt --tls-key tls.key\n" +
			"  karta serve --listen :8443 --tls-cert tls.crt --tls-key tls.key -c scripts/karmada/jobset.yaml -k examples/kartas/trainjob.yaml\n" +
			"  karta serve --listen 127.0.0.1:8080 -c cmd/karta/testdata/karmada/pass/example.io/v1/Gizmo/customizations.yaml\n" +
			"  karta serve --listen 127.0.0.1:8080 --builtins=false -k pytorchjob -k examples/kartas/trainjob.yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), s, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "", "the `ADDR` to listen on (host:port; port 0 picks a free one)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "the PEM certificate `FILE` (with --tls-key: serve HTTPS)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "the PEM private key `FILE` of --tls-cert")
	fl.StringArrayVarP(&f.customizations, "customization", "c", nil, "a ResourceInterpreterCustomization `FILE` (YAML or JSON; repeatable; all are merged as Karmada merges them)")
	fl.StringArrayVarP(&f.kartas, "karta", "k", nil, "a Karta `FILE`, or a built-in's name, whose generated Karmada hooks to serve (repeatable)")
	fl.BoolVar(&f.builtins, "builtins", true, "serve the built-in Kartas' kinds too")
	fl.Int64Var(&f.maxRequestBytes, "max-request-bytes", webhook.DefaultMaxRequestBytes, "the largest request body `N` accepted (larger: 413)")
	fl.StringVar(&f.clientCA, "client-ca", "", "the PEM `FILE` of the CAs whose client certificates are required (mTLS; with --tls-cert)")
	fl.StringVar(&f.config.Kubeconfig, "kubeconfig", "", "resolve the Kartas' references from the cluster of this kubeconfig `FILE`")
	fl.StringVar(&f.config.Context, "context", "", "resolve the Kartas' references from the cluster of this kubeconfig `CONTEXT` ($KUBECONFIG or ~/.kube/config)")
	f.isolate.register(fl)
	_ = cmd.MarkFlagRequired("listen") // the flag exists: no error
	return cmd
}

func runServe(ctx context.Context, s streams, f *serveFlags) error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usageError("--tls-cert and --tls-key go together")
	}
	if f.clientCA != "" && f.tlsCert == "" {
		return usageError("--client-ca needs --tls-cert and --tls-key")
	}
	if f.maxRequestBytes <= 0 {
		return usageError("--max-request-bytes must be positive, not %d", f.maxRequestBytes)
	}
	if err := f.isolate.check(); err != nil {
		return err
	}
	var custs []*karmada.Customization
	for _, file := range f.customizations {
		data, source, err := readInput(s, file, "the customizations")
		if err != nil {
			return err
		}
		c, err := karmada.Load(data, source)
		if err == nil && len(c) == 0 {
			err = fmt.Errorf("%s: no ResourceInterpreterCustomization found", source)
		}
		if err != nil {
			return reported(s, err)
		}
		custs = append(custs, c...)
	}
	in, err := karmada.NewInterpreter(custs, karmada.Options{})
	if err != nil {
		return reported(s, err)
	}
	defer in.Close()
	kartas, sources, err := serveKartas(s, f)
	if err != nil {
		return err
	}
	if len(custs) == 0 && kartas.Registry.Len() == 0 {
		return usageError("nothing to serve: give -c CUSTOMIZATION or -k KARTA, or keep --builtins")
	}
	sup, err := f.isolate.apply(&kartas, func(p *interpreter.Program) bool { return sources[p.Name()] == "built-in" })
	if err != nil {
		return reported(s, err)
	}
	if sup != nil {
		defer sup.Close()
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	metrics := prometheus.NewRegistry()
	live, err := serveReferences(ctx, s, f, kartas.Registry, metrics)
	if err != nil {
		return err
	}
	srv := newHTTPServer(s, serveHandler(webhook.Options{MaxRequestBytes: f.maxRequestBytes, Fair: f.isolate.fair(), Registry: metrics}, live,
		webhook.NewKarmada(in), kartas))
	scheme := "http"
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return reported(s, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", f.tlsCert, f.tlsKey, err))
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if f.clientCA != "" {
			if err := clientCAConfig(srv.TLSConfig, f.clientCA); err != nil {
				return reported(s, err)
			}
		}
		scheme = "https"
	}

	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return reported(s, fmt.Errorf("--listen: %w", err))
	}
	served := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			served <- srv.ServeTLS(ln, "", "")
		} else {
			served <- srv.Serve(ln)
		}
	}()
	kinds := servedKinds(custs, kartas, sources)
	for _, line := range kinds {
		fmt.Fprintf(s.err, "karta: serves %s\n", line)
	}
	fmt.Fprintf(s.err, "karta: serving %d kinds on %s://%s\n", len(kinds), scheme, ln.Addr())
	return untilStopped(ctx, s, srv, served, stop)
}

// serveHandler is karta serve's handler: the webhook of backends
// (/interpret, /healthz, /metrics) resolving references from live, and
// /readyz, which waits for live's caches and fails while the API server
// leaves their watches unanswered past the bound ("ok" without live).
func serveHandler(opts webhook.Options, live *liveReferences, backends ...webhook.Backend) http.Handler {
	opts.References = live.resolver()
	mux := http.NewServeMux()
	mux.Handle(readyzPath, readyz(live.ready, func() string { return "ok" }))
	mux.Handle("/", webhook.New(opts, backends...))
	return mux
}

// newHTTPServer is the HTTP server of karta's long-running commands (serve,
// studio): bounded reads, writes and idle connections, its errors logged
// on standard error.
func newHTTPServer(s streams, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(s.err, "karta: http: ", 0),
	}
}

// untilStopped waits until ctx ends (a signal) or the server fails
// (served), then shuts srv down, the requests in flight given
// shutdownGrace to finish; stop ends the signal notification first, so
// that a second signal kills at once.
func untilStopped(ctx context.Context, s streams, srv *http.Server, served <-chan error, stop func()) error {
	select {
	case err := <-served: // the listener failed
		return reported(s, fmt.Errorf("serving: %w", err))
	case <-ctx.Done():
	}
	stop()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	fmt.Fprintln(s.err, "karta: shutting down")
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return reported(s, fmt.Errorf("shutting down: %w", err))
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return reported(s, fmt.Errorf("serving: %w", err))
	}
	return nil
}

// serveKartas registers the Kartas to serve: the built-ins (unless
// --builtins=false), then each -k's Kartas — a file, or a built-in's name
// as every -k takes — replacing a built-in of the same kind. sources says
// where each registered Karta came from, by name, for the log.
func serveKartas(s streams, f *serveFlags) (webhook.Kartas, map[string]string, error) {
	reg := interpreter.NewRegistry()
	sources := map[string]string{}
	if f.builtins {
		// Compiled here with the default pool size: a server answers
		// concurrent requests, unlike the one-shot commands; and all of
		// them at start, so that a server fails now rather than on a
		// request and its first requests do not pay for compilation.
		b, err := builtin.Registry(interpreter.Options{})
		if err == nil {
			err = b.CompileAll()
		}
		if err != nil {
			return webhook.Kartas{}, nil, reported(s, err)
		}
		reg = b
		for _, e := range b.Entries() {
			sources[e.Name] = "built-in"
		}
	}
	for _, ref := range f.kartas {
		if st, err := os.Stat(ref); err != nil || st.IsDir() {
			b, ok, berr := builtin.Get(ref)
			if berr != nil {
				return webhook.Kartas{}, nil, reported(s, berr)
			}
			if !ok {
				return webhook.Kartas{}, nil, usageError("-k %s: no such file and no built-in Karta of that name", ref)
			}
			p, err := b.Compile(interpreter.Options{})
			if err != nil {
				return webhook.Kartas{}, nil, reported(s, err)
			}
			reg.Put(p)
			sources[p.Name()] = "built-in"
			continue
		}
		ks, err := karta.LoadFile(ref)
		if err != nil {
			return webhook.Kartas{}, nil, reportLoadError(s, ref, err)
		}
		for _, k := range ks {
			p, err := interpreter.Compile(k, interpreter.Options{})
			if err == nil {
				// A script whose top level cannot run would fail every
				// request for its hooks: the server fails now instead.
				err = p.CheckLoad(context.Background())
			}
			if err != nil {
				return webhook.Kartas{}, nil, reported(s, fmt.Errorf("%s: %w", ref, err))
			}
			if old := reg.Put(p); old != nil {
				delete(sources, old.Name())
			}
			sources[p.Name()] = ref
		}
	}
	return webhook.Kartas{Registry: reg}, sources, nil
}

// servedKinds lists every kind the server answers for, one line each with
// what answers: the customizations of -c (which win for the operations
// they script) and the Kartas (those in worker processes "isolated").
func servedKinds(custs []*karmada.Customization, kartas webhook.Kartas, sources map[string]string) []string {
	byKind := map[string][]string{}
	for _, c := range custs {
		gv, err := schema.ParseGroupVersion(c.Spec.Target.APIVersion)
		if err != nil {
			continue // Load checked it
		}
		k := gv.WithKind(c.Spec.Target.Kind).String()
		byKind[k] = append(byKind[k], "customization "+c.Name+" ("+c.Source+")")
	}
	for _, e := range kartas.Registry.Entries() {
		src := sources[e.Name]
		if src != "built-in" {
			src = "from " + src
		}
		if p, ok := kartas.Registry.Get(e.GVK); ok && kartas.Isolated(p) {
			src += "; isolated"
		}
		k := e.GVK.String()
		byKind[k] = append(byKind[k], fmt.Sprintf("karta %q (%s)", e.Name, src))
	}
	lines := make([]string, 0, len(byKind))
	for k, what := range byKind {
		lines = append(lines, k+": "+strings.Join(what, "; "))
	}
	sort.Strings(lines)
	return lines
}

// serveReferences is the resolver of the Kartas' references: with
// --kubeconfig or --context, a cache of the cluster's objects of the kinds
// the registry's Kartas reference, run until ctx ends (it answers from
// what it has: a reference to a kind not synced yet is absent); nil
// without, and the Kartas that read references are named in a warning.
// Its lists and watches are guarded as the controller's: one that the API
// server does not answer waits for its /readyz and is retried at once,
// counted in metrics (karta_watch_failing) and, past the bound, makes
// serve's /readyz fail (liveReferences.ready); client-go's own records go
// to the log, rate-limited, until ctx ends.
func serveReferences(ctx context.Context, s streams, f *serveFlags, reg *interpreter.Registry, metrics prometheus.Registerer) (*liveReferences, error) {
	if f.config.Kubeconfig == "" && f.config.Context == "" {
		if names := referencingKartas(reg); len(names) > 0 {
			fmt.Fprintf(s.err, "karta: warning: the references of %s resolve to nothing without --kubeconfig: absent, and said so in each answer's Warning header\n",
				strings.Join(names, ", "))
		}
		return nil, nil
	}
	cfg, err := f.config.RESTConfig()
	if err != nil {
		return nil, reported(s, err)
	}
	cfg.UserAgent = "karta-serve"
	c, err := cluster.NewClient(cfg)
	if err != nil {
		return nil, reported(s, err)
	}
	log := slog.New(slog.NewTextHandler(s.err, nil))
	live, err := newLiveReferences(c.Dynamic, c.Mapper, reg,
		refs.Options{ServerProbe: watchguard.ReadyzProbe(c.Discovery.RESTClient()), Registerer: metrics, Logger: log})
	if err != nil {
		return nil, reported(s, err)
	}
	// The kinds to watch are known before serve answers: /readyz waits for
	// their first lists, and no request finds a kind "not watched" because
	// the loop below had not begun.
	live.cache.WatchRegistry(reg)
	restore := watchguard.RouteKlog(log)
	go func() {
		defer restore()
		live.run(ctx)
	}()
	fmt.Fprintf(s.err, "karta: references resolve from the cluster at %s\n", cfg.Host)
	return live, nil
}
