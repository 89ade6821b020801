package agent

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// fakeMetrics is a Metrics that keeps what the agent reports, for the
// tests of what the agent measures; agentprom's tests check how Prometheus
// exports it.
type fakeMetrics struct {
	openErr error // what Open returns

	mu             sync.Mutex
	opened, closed int
	probe          bool
	routes         map[string]*fakeRoute
	order          []string // routes in the order Route was asked

	over, stalls atomic.Int64
	stalled      atomic.Int64 // summed lateness of the stalls, ns
}

// fakeRoute keeps one route's requests and DB calls.
type fakeRoute struct {
	withDB, noDB, withOut atomic.Int64 // requests
	latency, db, out      atomic.Int64 // summed, ns
	dbCalls, dbCallNanos  atomic.Int64 // DBCall
	minDBCall             atomic.Int64 // ns; 0 before the first
}

func newFakeMetrics() *fakeMetrics { return &fakeMetrics{routes: map[string]*fakeRoute{}} }

func (m *fakeMetrics) Open(probe bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.openErr != nil {
		return m.openErr
	}
	if m.opened > m.closed {
		return errors.New("fake metrics: open twice")
	}
	m.opened++
	m.probe = probe
	return nil
}

func (m *fakeMetrics) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed++
}

func (m *fakeMetrics) Route(route string) RouteMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.routes[route]
	if r == nil {
		r = &fakeRoute{}
		m.routes[route] = r
	}
	m.order = append(m.order, route)
	return r
}

func (m *fakeMetrics) RouteOverLimit() { m.over.Add(1) }

func (m *fakeMetrics) Stall(d time.Duration) {
	m.stalls.Add(1)
	m.stalled.Add(int64(d))
}

// route returns the requests of route so far (nil: never asked).
func (m *fakeMetrics) route(route string) *fakeRoute {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.routes[route]
}

func (r *fakeRoute) Request(s RequestStats) {
	r.latency.Add(int64(s.Latency))
	if s.DBCalls > 0 {
		r.withDB.Add(1)
		r.db.Add(int64(s.DB))
	} else {
		r.noDB.Add(1)
	}
	if s.OutboundCalls > 0 {
		r.withOut.Add(1)
		r.out.Add(int64(s.Outbound))
	}
}

func (r *fakeRoute) DBCall(d time.Duration) {
	r.dbCalls.Add(1)
	r.dbCallNanos.Add(int64(d))
	for {
		old := r.minDBCall.Load()
		if old != 0 && old <= int64(d) || r.minDBCall.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// requests is the number of the route's requests.
func (r *fakeRoute) requests() int64 { return r.withDB.Load() + r.noDB.Load() }
