package demo

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// durationBuckets are finest around the 100–160 ms the modes are expected to take.
var durationBuckets = []float64{
	.005, .01, .025, .05, .075, .1, .11, .12, .13, .14, .15, .16, .17, .18, .2, .25, .3, .4, .5, .75, 1, 2.5, 5,
}

// metrics are the service's own Prometheus registry and instruments. Each
// Service has its own registry, so several can live in one process.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration prometheus.Histogram
}

func newMetrics(mode Mode) *metrics {
	labels := prometheus.Labels{"mode": mode.String()}
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "latscope_demo_requests_total",
			Help:        "Requests to /work answered, by HTTP status code.",
			ConstLabels: labels,
		}, []string{"code"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "latscope_demo_request_duration_seconds",
			Help:        "Time from the start of the /work handler to its response.",
			ConstLabels: labels,
			Buckets:     durationBuckets,
		}),
	}
	m.requests.WithLabelValues("200")
	m.requests.WithLabelValues("500")
	m.reg.MustRegister(
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
		m.requests,
		m.duration,
	)
	return m
}

// observe counts one answered request.
func (m *metrics) observe(code int, d time.Duration) {
	m.requests.WithLabelValues(strconv.Itoa(code)).Inc()
	m.duration.Observe(d.Seconds())
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
