package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kartalua/karta/karmada"
	"github.com/kartalua/karta/webhook"
)

// shutdownGrace is how long requests in flight have to finish once a
// signal asks the server to stop.
const shutdownGrace = 10 * time.Second

type serveFlags struct {
	listen          string
	tlsCert         string
	tlsKey          string
	customizations  []string
	maxRequestBytes int64
}

func newServeCmd(s streams) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --listen ADDR [--tls-cert FILE --tls-key FILE] -c CUSTOMIZATION... [--max-request-bytes N]",
		Short: "Serve Karmada's resource interpreter webhook for ResourceInterpreterCustomizations",
		Long: "Serve Karmada's resource interpreter webhook (ResourceInterpreterContext,\n" +
			"config.karmada.io/v1alpha1) at /interpret for every operation the customizations of -c\n" +
			"script, plus /healthz (\"ok\") and /metrics (Prometheus). Retain, ReviseReplica and\n" +
			"AggregateStatus answer with a JSON Patch from the request's object to the result.\n" +
			"With --tls-cert and --tls-key the server speaks HTTPS, as Karmada requires of webhooks.\n" +
			"SIGINT or SIGTERM stops it, after the requests in flight finish.",
		Example: "  karta serve --listen :8443 --tls-cert tls.crt --tls-key tls.key -c customizations.yaml\n" +
			"  karta serve --listen 127.0.0.1:8080 -c widget.yaml -c gadget.yaml",
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
	fl.Int64Var(&f.maxRequestBytes, "max-request-bytes", webhook.DefaultMaxRequestBytes, "the largest request body `N` accepted (larger: 413)")
	for _, name := range []string{"listen", "customization"} {
		_ = cmd.MarkFlagRequired(name) // the flags exist: no error
	}
	return cmd
}

func runServe(ctx context.Context, s streams, f *serveFlags) error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usageError("--tls-cert and --tls-key go together")
	}
	if f.maxRequestBytes <= 0 {
		return usageError("--max-request-bytes must be positive, not %d", f.maxRequestBytes)
	}
	var custs []*karmada.Customization
	for _, file := range f.customizations {
		data, source, err := readInput(s, file)
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

	srv := &http.Server{
		Handler:           webhook.New(webhook.Options{MaxRequestBytes: f.maxRequestBytes}, webhook.NewKarmada(in)),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(s.err, "karta: http: ", 0),
	}
	scheme := "http"
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return reported(s, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", f.tlsCert, f.tlsKey, err))
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		scheme = "https"
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
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
	fmt.Fprintf(s.err, "karta: serving %d kinds on %s://%s\n", len(in.Kinds()), scheme, ln.Addr())

	select {
	case err := <-served: // the listener failed
		return reported(s, fmt.Errorf("serving: %w", err))
	case <-ctx.Done():
	}
	stop() // a second signal kills at once
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
