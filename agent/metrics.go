package agent

import (
	"fmt"
	"sync"
	"time"

	"github.com/latscope/latscope/agent/internal/span"
	"github.com/prometheus/client_golang/prometheus"
)

// MetricBuckets are the bucket upper bounds, in seconds, of every histogram
// the agent exports (docs/metrics.md): fine from 1 ms to 100 ms, where a
// DB-call p95 threshold usually lies, coarse up to 10 s.
var MetricBuckets = []float64{.001, .0025, .005, .01, .02, .03, .04, .05, .06, .075, .1, .15, .2, .3, .5, .75, 1, 2.5, 5, 10}

// Label values of the db label of latscope_request_duration_seconds.
const (
	dbYes = "yes"
	dbNo  = "no"
)

// metrics holds the agent's collectors on Options.Metrics.
type metrics struct {
	reg        prometheus.Registerer
	registered []prometheus.Collector

	request, requestDB, requestOut, dbCall *prometheus.HistogramVec
	stallSeconds, stalls                   prometheus.Counter // nil without the probe
	routesOver                             prometheus.Counter // requests beyond Options.MaxRoutes
	late                                   time.Duration      // a wake-up later than this is a stall
	host                                   *hostCollector
	routes                                 sync.Map // route -> *routeMetrics
}

// routeMetrics are the observers of one route, resolved once per route so
// that a request hashes no label values.
type routeMetrics struct {
	withDB, noDB, db, out, dbCall prometheus.Observer
}

// newMetrics registers the agent's collectors on reg: the request
// histograms, the host counters, and the stall counters when probe is true
// (the probe runs; a wake-up later than late is a stall). On error nothing
// stays registered.
func newMetrics(reg prometheus.Registerer, probe bool, late time.Duration) (*metrics, error) {
	hist := func(name, help string, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: MetricBuckets}, labels)
	}
	m := &metrics{
		reg:        reg,
		late:       late,
		request:    hist("latscope_request_duration_seconds", "Latency of each request as the agent's Handler times it; db=\"no\" when it made no DB call.", "route", "db"),
		requestDB:  hist("latscope_request_db_seconds", "Per request with at least one DB call: total time in DB calls as the application timed them.", "route"),
		requestOut: hist("latscope_request_outbound_seconds", "Per request with at least one outbound HTTP call: total time in them, until response headers.", "route"),
		dbCall:     hist("latscope_db_call_duration_seconds", "Each DB call (database/sql wrapper or agentpgx tracer) made under a request.", "route"),
		host:       newHostCollector(),
		routesOver: prometheus.NewCounter(prometheus.CounterOpts{Name: "latscope_routes_over_limit_total",
			Help: "Requests counted under route=\"" + OtherRoute + "\" because Options.MaxRoutes distinct routes were already in use (a Route hook that returns paths?)."}),
	}
	cs := []prometheus.Collector{m.request, m.requestDB, m.requestOut, m.dbCall, m.host, m.routesOver}
	if probe {
		m.stallSeconds = prometheus.NewCounter(prometheus.CounterOpts{Name: "latscope_stall_seconds_total",
			Help: "Summed lateness of the agent's CPU-availability probe's late wake-ups: time the process could not run (throttled, stolen, stopped, CPUs busy)."})
		m.stalls = prometheus.NewCounter(prometheus.CounterOpts{Name: "latscope_stalls_total",
			Help: fmt.Sprintf("Late wake-ups of the CPU-availability probe (later than %v), counted in latscope_stall_seconds_total.", late)})
		cs = append(cs, m.stallSeconds, m.stalls)
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			m.unregister()
			return nil, fmt.Errorf("agent: Options.Metrics: %w", err)
		}
		m.registered = append(m.registered, c)
	}
	return m, nil
}

// route returns the observers of route, making them on its first request.
func (m *metrics) route(route string) *routeMetrics {
	if rm, ok := m.routes.Load(route); ok {
		return rm.(*routeMetrics)
	}
	rm := &routeMetrics{
		withDB: m.request.WithLabelValues(route, dbYes),
		noDB:   m.request.WithLabelValues(route, dbNo),
		db:     m.requestDB.WithLabelValues(route),
		out:    m.requestOut.WithLabelValues(route),
		dbCall: m.dbCall.WithLabelValues(route),
	}
	v, _ := m.routes.LoadOrStore(route, rm)
	return v.(*routeMetrics)
}

// observe records a request that took d, with the calls added to ri.
func (rm *routeMetrics) observe(d time.Duration, ri *span.Info) {
	dbCalls, db, outCalls, out := ri.Calls()
	if dbCalls > 0 {
		rm.withDB.Observe(d.Seconds())
		rm.db.Observe(db.Seconds())
	} else {
		rm.noDB.Observe(d.Seconds())
	}
	if outCalls > 0 {
		rm.out.Observe(out.Seconds())
	}
}

// wake counts one wake-up of the probe, lateness d late.
func (m *metrics) wake(d time.Duration) {
	if d > m.late {
		m.stallSeconds.Add(d.Seconds())
		m.stalls.Inc()
	}
}

// unregister removes the agent's collectors from the registry and closes
// the host reader.
func (m *metrics) unregister() {
	for _, c := range m.registered {
		m.reg.Unregister(c)
	}
	m.registered = nil
	m.host.close()
}
