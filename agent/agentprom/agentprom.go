// Package agentprom exports the agent's metrics to Prometheus: per route,
// request latency split by whether the request made a DB call, its time in
// DB and outbound calls, each DB call; the host's CFS throttling, CPU
// pressure and steal, read at scrape time; the stall counter of the
// CPU-availability probe; and the requests beyond Options.MaxRoutes.
// docs/metrics.md lists the names, their cost and the PromQL of each
// question.
//
// Package agent links no Prometheus client; a service that wants /metrics
// imports this package and sets
//
//	opts.Metrics = agentprom.New(reg)
//
// A prometheus.Registerer set as Options.Metrics directly (as before the
// agent was split from its Prometheus code) is taken the same way once this
// package is imported anywhere in the program.
package agentprom

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/metricsconv"
	"github.com/latscope/latscope/tracelog"
)

func init() {
	metricsconv.Register(func(v any) (any, bool) {
		if reg, ok := v.(prometheus.Registerer); ok {
			return New(reg), true
		}
		return nil, false
	})
}

// Label values of the db label of latscope_request_duration_seconds.
const (
	dbYes = "yes"
	dbNo  = "no"
)

// New returns the agent's metrics on reg (the service's registry, or a
// prometheus.NewRegistry of its own), to set as agent.Options.Metrics:
// agent.New registers the collectors there, and fails when they are
// registered already (another open agent on the same registry);
// Agent.Close unregisters them, so that an agent can be replaced.
func New(reg prometheus.Registerer) agent.Metrics { return &metrics{reg: reg} }

// metrics holds the agent's collectors on one registry.
type metrics struct {
	reg prometheus.Registerer

	mu         sync.Mutex // Open and Close
	registered []prometheus.Collector
	open       bool

	request, requestDB, requestOut, dbCall *prometheus.HistogramVec
	stallSeconds, stalls                   prometheus.Counter // nil without the probe
	routesOver                             prometheus.Counter // requests beyond Options.MaxRoutes
	host                                   *hostCollector
}

// routeMetrics are the observers of one route, resolved once per route so
// that a request hashes no label values.
type routeMetrics struct {
	withDB, noDB, db, out, dbCall prometheus.Observer
}

// Open registers the collectors: the request histograms, the host
// counters, and the stall counters when probe is true. On error nothing
// stays registered.
func (m *metrics) Open(probe bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open {
		return errors.New("agentprom: these metrics belong to an agent that is still open; use agentprom.New for each agent")
	}
	hist := func(name, help string, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: agent.MetricBuckets}, labels)
	}
	m.request = hist("latscope_request_duration_seconds", "Latency of each request as the agent's Handler times it; db=\"no\" when it made no DB call.", "route", "db")
	m.requestDB = hist("latscope_request_db_seconds", "Per request with at least one DB call: total time in DB calls as the application timed them.", "route")
	m.requestOut = hist("latscope_request_outbound_seconds", "Per request with at least one outbound HTTP call: total time in them, until response headers.", "route")
	m.dbCall = hist("latscope_db_call_duration_seconds", "Each DB call (database/sql wrapper or agentpgx tracer) made under a request.", "route")
	m.host = newHostCollector()
	m.routesOver = prometheus.NewCounter(prometheus.CounterOpts{Name: "latscope_routes_over_limit_total",
		Help: "Requests counted under route=\"" + agent.OtherRoute + "\" because Options.MaxRoutes distinct routes were already in use (a Route hook that returns paths?)."})
	cs := []prometheus.Collector{m.request, m.requestDB, m.requestOut, m.dbCall, m.host, newRuntimeCollector(), m.routesOver}
	m.stallSeconds, m.stalls = nil, nil
	if probe {
		m.stallSeconds = prometheus.NewCounter(prometheus.CounterOpts{Name: "latscope_stall_seconds_total",
			Help: "Summed lateness of the agent's CPU-availability probe's late wake-ups: time the process could not run (throttled, stolen, stopped, CPUs busy)."})
		m.stalls = prometheus.NewCounter(prometheus.CounterOpts{Name: "latscope_stalls_total",
			Help: fmt.Sprintf("Late wake-ups of the CPU-availability probe (later than %v), counted in latscope_stall_seconds_total.", tracelog.ProbeLate)})
		cs = append(cs, m.stallSeconds, m.stalls)
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			m.unregister()
			return err
		}
		m.registered = append(m.registered, c)
	}
	m.open = true
	return nil
}

// Route returns the observers of route.
func (m *metrics) Route(route string) agent.RouteMetrics {
	return &routeMetrics{
		withDB: m.request.WithLabelValues(route, dbYes),
		noDB:   m.request.WithLabelValues(route, dbNo),
		db:     m.requestDB.WithLabelValues(route),
		out:    m.requestOut.WithLabelValues(route),
		dbCall: m.dbCall.WithLabelValues(route),
	}
}

// RouteOverLimit counts a request turned to agent.OtherRoute.
func (m *metrics) RouteOverLimit() { m.routesOver.Inc() }

// Stall counts one late wake-up of the probe.
func (m *metrics) Stall(d time.Duration) {
	if m.stalls == nil {
		return
	}
	m.stallSeconds.Add(d.Seconds())
	m.stalls.Inc()
}

// Close unregisters the collectors and closes the host reader.
func (m *metrics) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unregister()
	m.open = false
}

// unregister removes the collectors from the registry and closes the host
// reader.
func (m *metrics) unregister() {
	for _, c := range m.registered {
		m.reg.Unregister(c)
	}
	m.registered = nil
	if m.host != nil {
		m.host.close()
	}
}

// Request observes one request: its latency under db="yes" or "no", its DB
// time when it made a DB call, its outbound time when it made an outbound
// call.
func (rm *routeMetrics) Request(s agent.RequestStats) {
	if s.DBCalls > 0 {
		rm.withDB.Observe(s.Latency.Seconds())
		rm.db.Observe(s.DB.Seconds())
	} else {
		rm.noDB.Observe(s.Latency.Seconds())
	}
	if s.OutboundCalls > 0 {
		rm.out.Observe(s.Outbound.Seconds())
	}
}

// DBCall observes one DB call.
func (rm *routeMetrics) DBCall(d time.Duration) { rm.dbCall.Observe(d.Seconds()) }
