package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kartalua/karta/controller"
	"github.com/kartalua/karta/exporter"
	"github.com/kartalua/karta/gangoutput"
	"github.com/kartalua/karta/webhook"
)

// The paths of the controller's probe server.
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
)

// controllerServer is one of the controller's HTTP servers, listening.
type controllerServer struct {
	*http.Server
	what string
	ln   net.Listener
}

func (s *controllerServer) serve() error {
	if s.TLSConfig != nil {
		return s.ServeTLS(s.ln, "", "")
	}
	return s.Serve(s.ln)
}

// newControllerMetrics is the registry of /metrics: the controller's
// collectors and the Go runtime's and process's.
func newControllerMetrics() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// metricsHandler serves /metrics: the registry's series, and the
// workload series of the exporter when there is one.
func metricsHandler(metrics *prometheus.Registry, exp *exporter.Exporter) http.Handler {
	if exp != nil {
		return exp.Handler(metrics)
	}
	return promhttp.HandlerFor(metrics, promhttp.HandlerOpts{})
}

// probes serves /healthz (the process answers) and /readyz (the registry
// reflects the cluster, the gang output's caches, when there is one, and
// the references' caches are synced, and the API server has answered
// their watches within the bound; the body says whether this replica
// leads, or why it is not ready).
func probes(ctrl *controller.Controller, gang *gangRun, live *liveReferences) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(healthzPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok")
	})
	mux.Handle(readyzPath, readyz(func() error { return errors.Join(ctrl.Ready(), gang.ready(), live.ready()) }, func() string {
		if ctrl.Leading() {
			return "ok: leader"
		}
		return "ok: standby"
	}))
	return mux
}

// readyz is the /readyz of karta's long-running commands (controller,
// serve): 503 and "not ready: " with why while ready fails, else 200 and
// ok's text.
func readyz(ready func() error, ok func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := ready(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "not ready: "+strings.ReplaceAll(err.Error(), "\n", "; "))
			return
		}
		_, _ = io.WriteString(w, ok())
	})
}

// listenController opens the listeners of the probe, metrics and (with
// --serve) webhook servers, so that a busy port fails the command before
// anything runs.
func listenController(s streams, f *controllerFlags, ctrl *controller.Controller, gang *gangRun, kartas webhook.Kartas, live *liveReferences,
	metrics *prometheus.Registry, exp *exporter.Exporter) ([]*controllerServer, error) {
	type want struct {
		what, flag, addr string
		handler          http.Handler
	}
	wants := []want{
		{"health probes", "--health-addr", f.healthAddr, probes(ctrl, gang, live)},
		{"metrics", "--metrics-addr", f.metricsAddr, metricsHandler(metrics, exp)},
	}
	if f.serve != "" {
		var h http.Handler = webhook.New(webhook.Options{Fair: f.isolate.fair(), References: live.resolver()}, kartas)
		if f.podWebhook {
			mux := http.NewServeMux()
			mux.Handle(gangoutput.WebhookPath, gang.ctrl.Webhook())
			mux.Handle("/", h)
			h = mux
		}
		wants = append(wants, want{"the interpreter webhook", "--serve", f.serve, h})
	}
	var servers []*controllerServer
	closeAll := func() {
		for _, srv := range servers {
			_ = srv.ln.Close()
		}
	}
	for _, w := range wants {
		srv := &controllerServer{what: w.what, Server: &http.Server{
			Handler:           w.handler,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       time.Minute,
			WriteTimeout:      time.Minute,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          log.New(s.err, "karta: http: ", 0),
		}}
		if w.flag == "--serve" && f.tlsCert != "" {
			cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
			if err != nil {
				closeAll()
				return nil, reported(s, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", f.tlsCert, f.tlsKey, err))
			}
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
			if f.clientCA != "" {
				if err := clientCAConfig(srv.TLSConfig, f.clientCA); err != nil {
					closeAll()
					return nil, reported(s, err)
				}
			}
		}
		ln, err := net.Listen("tcp", w.addr)
		if err != nil {
			closeAll()
			return nil, reported(s, fmt.Errorf("%s: %w", w.flag, err))
		}
		srv.ln = ln
		servers = append(servers, srv)
	}
	return servers, nil
}
