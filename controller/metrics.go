package controller

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// The result label of karta_controller_reconciles_total.
const (
	// resultAccepted: the Karta compiled and owns its kind.
	resultAccepted = "accepted"
	// resultInvalid: the Karta did not load or validate.
	resultInvalid = "invalid"
	// resultCompileFailed: the Karta is valid but did not compile.
	resultCompileFailed = "compile_failed"
	// resultConflict: an older Karta owns the kind.
	resultConflict = "conflict"
	// resultDeleted: the object is gone and forgotten.
	resultDeleted = "deleted"
	// resultError: reading or writing the cluster failed; the object is
	// retried with backoff.
	resultError = "error"
)

// The state label of karta_controller_kartas.
var kartaStates = []string{resultAccepted, resultInvalid, resultCompileFailed, resultConflict}

// metrics are the controller's collectors, named as the webhook's are
// (karta_<subsystem>_<name>).
type metrics struct {
	reconciles   *prometheus.CounterVec
	statusWrites prometheus.Counter
	kartas       *prometheus.GaugeVec
}

func newMetrics(c *Controller, reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "controller", Name: "reconciles_total",
			Help: "Karta reconciles, by result (accepted, invalid, compile_failed, conflict, deleted, error).",
		}, []string{"result"}),
		statusWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "controller", Name: "status_writes_total",
			Help: "Status updates written to Kartas.",
		}),
		kartas: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "karta", Subsystem: "controller", Name: "kartas",
			Help: "Kartas known to the controller, by state (accepted, invalid, compile_failed, conflict).",
		}, []string{"state"}),
	}
	for _, s := range kartaStates {
		m.kartas.WithLabelValues(s)
	}
	if reg == nil {
		return m, nil
	}
	collectors := []prometheus.Collector{
		m.reconciles, m.statusWrites, m.kartas,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "karta", Subsystem: "controller", Name: "registry_programs",
			Help: "Programs in the registry (base Programs and Kartas').",
		}, func() float64 { return float64(c.registry.Len()) }),
	}
	collectors = append(collectors, c.loop.Gauges("controller", "Kartas",
		"1 while the controller is ready: the registry reflects every Karta of the initial list and the API server answers its watches.",
		c.Ready)...)
	for _, col := range collectors {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("controller: registering metrics: %w", err)
		}
	}
	return m, nil
}

// countKartas sets karta_controller_kartas. Called with mu held.
func (c *Controller) countKartas() {
	counts := make(map[string]int, len(kartaStates))
	for _, e := range c.entries {
		state := e.outcome
		if e.program != nil && c.serving[e.gvk] != e.key {
			state = resultConflict
		}
		counts[state]++
	}
	for _, s := range kartaStates {
		c.metrics.kartas.WithLabelValues(s).Set(float64(counts[s]))
	}
}
