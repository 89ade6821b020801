// Package routertest checks a router adapter of the agent on the real
// router: requests over several routes through the agent and the router,
// then the trace's task names and the routes the metrics were told against
// the routes the client asked for (agentprom makes each such route a
// route label).
package routertest

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/agenttest"
)

// Req is one request the client sends and what it must get.
type Req struct {
	Method, Path string
	Route        string // the route the agent must name it
	Status       int    // 0: 200
	Body         string // the body the router's handler answers ("" for any)
}

// Result is what Check saw, for further checks.
type Result struct {
	Tasks   map[string]int // task begins by name
	Metrics map[string]int // requests the metrics recorded, by route
}

// Check makes an agent (no flight recorder; metrics on, counting requests;
// maxRoutes, 0 for the default), serves build(a) on an httptest server,
// sends each of reqs n times (round robin, in order) under runtime/trace,
// and checks every answer, the tasks' names and counts, and the request
// metrics' route labels and counts. Routes beyond maxRoutes, in the order
// the requests first reach them, are expected as agent.OtherRoute.
func Check(t *testing.T, n, maxRoutes int, reqs []Req, build func(a *agent.Agent) http.Handler) Result {
	t.Helper()
	m := &counts{routes: map[string]*routeCount{}}
	a, err := agent.New(agent.Options{NoRecorder: true, ProbeEvery: -1, Metrics: m, MaxRoutes: maxRoutes})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(build(a))
	defer srv.Close()

	want := map[string]int{}
	var order []string
	for i := 0; i < n; i++ {
		for _, rq := range reqs {
			if !slices.Contains(order, rq.Route) {
				order = append(order, rq.Route)
			}
			route := rq.Route
			if maxRoutes > 0 && slices.Index(order, route) >= maxRoutes {
				route = agent.OtherRoute
			}
			want[route]++
		}
	}
	evs := agenttest.Traced(t, func() {
		for i := 0; i < n; i++ {
			for _, rq := range reqs {
				req, err := http.NewRequest(rq.Method, srv.URL+rq.Path, nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if status := max(rq.Status, 200); resp.StatusCode != status || rq.Body != "" && string(b) != rq.Body {
					t.Fatalf("%s %s: %d %q, want %d %q", rq.Method, rq.Path, resp.StatusCode, b, status, rq.Body)
				}
			}
		}
	})
	res := Result{Tasks: map[string]int{}, Metrics: map[string]int{}}
	for _, ev := range evs {
		if ev.Kind == agenttest.KindTaskBegin {
			res.Tasks[ev.Name]++
		}
	}
	m.mu.Lock()
	for route, c := range m.routes {
		if n := int(c.n.Load()); n > 0 {
			res.Metrics[route] = n
		}
	}
	m.mu.Unlock()
	t.Logf("sent %v", want)
	if !maps.Equal(res.Tasks, want) {
		t.Errorf("tasks %v, want %v", res.Tasks, want)
	}
	if !maps.Equal(res.Metrics, want) {
		t.Errorf("metrics' routes %v, want %v", res.Metrics, want)
	}
	return res
}

// Allocs logs the allocations of one request rq through build(nil) (the
// router alone) and through build(a) (the router with the agent's
// middleware, no recorder, metrics on), and fails when the agent adds more
// than the agent's own Handler does to a ServeMux route (5: the task's two,
// the context, the request copy, the traceparent).
func Allocs(t *testing.T, build func(a *agent.Agent) http.Handler, rq Req) {
	t.Helper()
	a, err := agent.New(agent.Options{NoRecorder: true, ProbeEvery: -1, Metrics: &counts{routes: map[string]*routeCount{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	allocs := func(h http.Handler) float64 { return agenttest.Allocs(h, rq.Method, rq.Path) }
	plain, with := allocs(build(nil)), allocs(build(a))
	t.Logf("%s %s: %g allocations per request by the router alone, %g with the agent (+%g)", rq.Method, rq.Path, plain, with, with-plain)
	if with-plain > 5 && !race {
		t.Errorf("the agent adds %g allocations per request, want at most 5", with-plain)
	}
}

// counts is an agent.Metrics that counts each route's requests.
type counts struct {
	mu     sync.Mutex
	routes map[string]*routeCount
}

// routeCount counts one route's requests.
type routeCount struct{ n atomic.Int64 }

func (m *counts) Open(bool) error     { return nil }
func (m *counts) Close()              {}
func (m *counts) RouteOverLimit()     {}
func (m *counts) Stall(time.Duration) {}

func (m *counts) Route(route string) agent.RouteMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.routes[route]
	if c == nil {
		c = &routeCount{}
		m.routes[route] = c
	}
	return c
}

func (c *routeCount) Request(agent.RequestStats) { c.n.Add(1) }
func (c *routeCount) DBCall(time.Duration)       {}
