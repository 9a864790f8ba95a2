package app

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idenplane/idenplane/store"
)

// metrics lives in its own registry: nothing global, so tests and several
// Apps in one process never collide.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	identity *identityMetrics
}

func newMetrics(st *store.Store, now func() time.Time) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idenplane_http_requests_total", Help: "HTTP requests by method, route template and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "idenplane_http_request_duration_seconds", Help: "HTTP request duration by method and route template.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"method", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "idenplane_http_requests_in_flight", Help: "HTTP requests being served.",
		}),
	}
	writer, reader := st.DBs()
	m.registry.MustRegister(m.requests, m.duration, m.inFlight,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(writer, "writer"),
		collectors.NewDBStatsCollector(reader, "reader"),
	)
	m.identity = newIdentityMetrics(m.registry, st, now)
	return m
}

func (m *metrics) observe(method, route string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(elapsed.Seconds())
}

func (a *App) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	promhttp.HandlerFor(a.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}
