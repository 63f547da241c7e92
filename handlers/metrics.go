package handlers

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus series, in a registry of its own so
// several servers (tests) can live in one process.
type metrics struct {
	reg              *prometheus.Registry
	connections      prometheus.Gauge
	bytesIn          prometheus.Counter
	bytesOut         prometheus.Counter
	evictions        prometheus.Counter
	skips            prometheus.Counter
	skippedBytes     prometheus.Counter
	paced            prometheus.Counter
	pacedInput       prometheus.Counter
	overBudget       *prometheus.CounterVec
	reconnects       *prometheus.CounterVec
	authFailures     *prometheus.CounterVec
	permissionDenied *prometheus.CounterVec
}

func newMetrics(terminals func() float64) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{Name: "termhost_connections",
			Help: "Open AHP WebSocket connections."}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{Name: "termhost_websocket_received_bytes_total",
			Help: "Bytes of WebSocket messages received."}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{Name: "termhost_websocket_sent_bytes_total",
			Help: "Bytes of WebSocket messages sent."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "termhost_slow_client_evictions_total",
			Help: "Connections closed because their send queue overflowed and they could not skip ahead."}),
		skips: prometheus.NewCounter(prometheus.CounterOpts{Name: "termhost_slow_client_skips_total",
			Help: "Times a connection fell behind on a terminal's output and skipped ahead to its screen."}),
		skippedBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "termhost_slow_client_skipped_bytes_total",
			Help: "Terminal output not sent to connections that skipped ahead (a redraw of the screen went instead)."}),
		paced: prometheus.NewCounter(prometheus.CounterOpts{Name: "termhost_paced_requests_total",
			Help: "Costly requests that waited for their participant's rate (handlers/budget.go)."}),
		pacedInput: prometheus.NewCounter(prometheus.CounterOpts{Name: "termhost_paced_input_total",
			Help: "Waits of a connection's terminal/input for room in its terminal's input queue (the connection is not read meanwhile)."}),
		overBudget: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "termhost_over_budget_total",
			Help: "Connections and downloads refused or closed over a participant's budget, by kind."}, []string{"kind"}),
		reconnects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "termhost_reconnects_total",
			Help: "AHP reconnects by outcome (replay, snapshot, channels, rejected)."}, []string{"result"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "termhost_auth_failures_total",
			Help: "Refused credentials, sign-ins and upgrades, by reason (bad_credential, rate_limited, cross_site, unauthenticated, origin)."}, []string{"reason"}),
		permissionDenied: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "termhost_permission_denied_total",
			Help: "Requests and dispatches refused by role (share links), by kind."}, []string{"kind"}),
	}
	m.reg.MustRegister(m.connections, m.bytesIn, m.bytesOut, m.evictions, m.skips, m.skippedBytes, m.paced, m.pacedInput, m.overBudget, m.reconnects, m.authFailures, m.permissionDenied,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "termhost_terminals", Help: "Terminals (running or exited, not disposed)."}, terminals),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
