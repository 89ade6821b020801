package agent

import (
	"fmt"
	"sync"
	"time"

	"github.com/latscope/latscope/agent/internal/metricsconv"
	"github.com/latscope/latscope/agent/internal/span"
	"github.com/latscope/latscope/tracelog"
)

// MetricBuckets are the bucket upper bounds, in seconds, of every histogram
// the agent exports through agentprom (docs/metrics.md): fine from 1 ms to
// 100 ms, where a DB-call p95 threshold usually lies, coarse up to 10 s.
var MetricBuckets = []float64{.001, .0025, .005, .01, .02, .03, .04, .05, .06, .075, .1, .15, .2, .3, .5, .75, 1, 2.5, 5, 10}

// Metrics receives what the agent measures for metrics (Options.Metrics).
// Package agentprom (github.com/latscope/latscope/agent/agentprom) is its
// Prometheus implementation, with the names of docs/metrics.md; package
// agent itself links no metrics library.
//
// The agent calls Open once, in New, before any other method, and Close
// once, in Close. Route, RouteOverLimit and Stall are called concurrently,
// on the request path (Stall on the probe's goroutine): they must be safe
// for concurrent use and cheap.
type Metrics interface {
	// Open prepares the metrics of one agent; probe tells whether the
	// CPU-availability probe runs, so that Stall may be called. An error
	// fails New.
	Open(probe bool) error
	// Route returns the recorder of the requests of one route: a task name
	// (a pattern, NoRoute, OtherRoute or what Options.Route returns). The
	// agent calls it once per route, at the route's first request, and
	// keeps what it returns: at most Options.MaxRoutes+1 routes.
	Route(route string) RouteMetrics
	// RouteOverLimit counts one request counted under OtherRoute because
	// Options.MaxRoutes routes were already in use.
	RouteOverLimit()
	// Stall counts one wake-up of the CPU-availability probe that came
	// later than tracelog.ProbeLate after its deadline, by how late it was:
	// time the process could not run.
	Stall(lateness time.Duration)
	// Close ends the metrics of the agent (it unregisters them).
	Close()
}

// RouteMetrics records the requests of one route (Metrics.Route). Its
// methods run on the request path, concurrently, and should not allocate.
type RouteMetrics interface {
	// Request records one request when it ends.
	Request(RequestStats)
	// DBCall records one DB call made under a request of the route (a
	// QueryContext or ExecContext through WrapConnector or WrapDriver, or a
	// pgx query through agentpgx.QueryTracer), of duration d.
	DBCall(d time.Duration)
}

// RequestStats is one finished request as the metrics see it.
type RequestStats struct {
	// Latency is the request's time as Handler (or Begin and End) timed
	// it: the same interval as the request's task.
	Latency time.Duration
	// DBCalls is the number of DB calls made with the request's context
	// (RouteMetrics.DBCall), on any goroutine; DB is their summed duration.
	DBCalls int
	DB      time.Duration
	// OutboundCalls is the number of outbound HTTP calls made through
	// Transport with the request's context; Outbound their summed duration,
	// each until its response headers arrived.
	OutboundCalls int
	Outbound      time.Duration
}

// metrics is the agent's side of Options.Metrics: the Metrics, and the
// recorder of each route it has seen.
type metrics struct {
	m      Metrics
	routes sync.Map // route -> RouteMetrics
}

// openMetrics turns Options.Metrics into the agent's metrics and opens
// them; nil when v is nil.
func openMetrics(v any, probe bool) (*metrics, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(Metrics)
	if !ok {
		c, found := metricsconv.Convert(v)
		if m, ok = c.(Metrics); !found || !ok {
			return nil, fmt.Errorf("agent: Options.Metrics is a %T, not an agent.Metrics: use agentprom.New(reg) from github.com/latscope/latscope/agent/agentprom (a prometheus.Registerer is taken as it is once that package is imported)", v)
		}
	}
	if err := m.Open(probe); err != nil {
		return nil, fmt.Errorf("agent: Options.Metrics: %w", err)
	}
	return &metrics{m: m}, nil
}

// route returns the recorder of route, asking Metrics for it at the
// route's first request.
func (m *metrics) route(route string) RouteMetrics {
	if rm, ok := m.routes.Load(route); ok {
		return rm.(RouteMetrics)
	}
	v, _ := m.routes.LoadOrStore(route, m.m.Route(route))
	return v.(RouteMetrics)
}

// observe records a request that took d, with the calls added to ri.
func observe(rm RouteMetrics, d time.Duration, ri *span.Info) {
	dbCalls, db, outCalls, out := ri.Calls()
	rm.Request(RequestStats{Latency: d, DBCalls: int(dbCalls), DB: db, OutboundCalls: int(outCalls), Outbound: out})
}

// wake takes one wake-up of the probe, lateness d late: a stall when later
// than tracelog.ProbeLate.
func (m *metrics) wake(d time.Duration) {
	if d > tracelog.ProbeLate {
		m.m.Stall(d)
	}
}
