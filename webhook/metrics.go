package webhook

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// unknownLabel stands for an operation or kind the request did not name
// usably (a malformed request, an unknown operation, a kind no backend
// handles), so that clients cannot grow the label sets at will.
const unknownLabel = "unknown"

// metrics are the handler's collectors, in the registry /metrics serves.
type metrics struct {
	registry *prometheus.Registry
	calls    *prometheus.CounterVec
	errors   *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight prometheus.Gauge
	// limitErrors counts the hook calls that ended on a limit, by Karta
	// (or customization), hook and limit kind.
	limitErrors *prometheus.CounterVec
}

// newMetrics registers the handler's collectors with registry (nil: a
// registry of their own).
func newMetrics(backends []Backend, registry *prometheus.Registry) *metrics {
	if registry == nil {
		registry = prometheus.NewRegistry()
	}
	labels := []string{"operation", "api_version", "kind"}
	m := &metrics{
		registry: registry,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "webhook", Name: "calls_total",
			Help: "Interpretation requests, by operation and target kind.",
		}, labels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "webhook", Name: "errors_total",
			Help: "Interpretation requests that failed, by operation, target kind and status code.",
		}, append(labels, "code")),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "karta", Subsystem: "webhook", Name: "call_duration_seconds",
			Help:    "Time to answer an interpretation request, by operation and target kind.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, labels),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "karta", Subsystem: "webhook", Name: "in_flight_requests",
			Help: "Interpretation requests being answered.",
		}),
		limitErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "karta", Subsystem: "webhook", Name: "limit_errors_total",
			Help: "Interpretation requests whose hook ended on a limit, by Karta (or Karmada customization), hook and limit kind.",
		}, []string{"karta", "hook", "kind"}),
	}
	m.registry.MustRegister(m.calls, m.errors, m.latency, m.inFlight, m.limitErrors)
	for i, b := range backends {
		sb, ok := b.(StatsBackend)
		if !ok {
			continue
		}
		constLabels := prometheus.Labels{"backend": strconv.Itoa(i)}
		m.registry.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Namespace: "karta", Subsystem: "webhook", Name: "pool_size",
				Help: "The most interpreters a backend keeps alive.", ConstLabels: constLabels,
			}, func() float64 { return float64(sb.PoolStats().Size) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Namespace: "karta", Subsystem: "webhook", Name: "pool_in_use",
				Help: "A backend's interpreters running a call.", ConstLabels: constLabels,
			}, func() float64 { return float64(sb.PoolStats().InUse) }),
		)
	}
	return m
}
