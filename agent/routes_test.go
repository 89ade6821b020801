package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/tracelog"
)

// TestMetricsDocExample serves docs/metrics.md's example (the shape of
// agentprom's Example): the agent's Handler wraps the app's mux under a
// root mux that also serves /metrics. The root mux sets r.Pattern = "/"
// before the agent runs; every request used to be route="/". The
// innermost pattern must win: one route per route of the app's mux, with
// the counts sent, and tasks of the same names (agentprom's
// TestMetricsDocExample checks the series of the same example).
func TestMetricsDocExample(t *testing.T) {
	m := newFakeMetrics()
	a, err := New(Options{NoRecorder: true, ProbeEvery: -1, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	mux, sent := agenttest.DocExampleMux(NoRoute)
	root := http.NewServeMux() // scrapes stay out of the request metrics
	root.Handle("/", a.Handler(mux))
	root.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv := httptest.NewServer(root)
	defer srv.Close()

	const n = 15
	evs := traced(t, func() { agenttest.Send(t, srv.Client(), srv.URL, sent, n) })
	tasks := map[string]int{}
	for _, ev := range evs {
		if ev.Kind == agenttest.KindTaskBegin {
			tasks[ev.Name]++
		}
	}
	get(t, srv.Client(), srv.URL+"/metrics")
	for _, s := range sent {
		if tasks[s.Route] != n {
			t.Errorf("%d tasks %q, want %d (all: %v)", tasks[s.Route], s.Route, n, tasks)
		}
		if r := m.route(s.Route); r == nil || r.noDB.Load() != n {
			t.Errorf("route %q: %v, want %d requests without a DB call", s.Route, r, n)
		}
	}
	if len(tasks) != len(sent) || len(m.order) != len(sent) {
		t.Errorf("tasks %v and routes %v, want only the %d routes sent", tasks, m.order, len(sent))
	}
}

// TestBeginUnderHandler: a router middleware's Begin under the agent's
// Handler (both used) keeps the request's first task: one task per
// request, counted once.
func TestBeginUnderHandler(t *testing.T) {
	a, err := New(Options{NoRecorder: true, ProbeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var inner string
	h := a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2, q := a.Begin(r, RouteName(r.Method, "/x/{id}"))
		defer q.End()
		if r2 != r || q != nil {
			t.Error("Begin under Handler began a second request")
		}
		inner = q.Route()
	}))
	evs := traced(t, func() {
		for range 3 {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x/1", nil))
		}
	})
	n := 0
	for _, ev := range evs {
		if ev.Kind == agenttest.KindTaskBegin {
			n++
			if ev.Name != "http" {
				t.Errorf("task %q, want http", ev.Name)
			}
		}
	}
	if n != 3 || inner != "" {
		t.Errorf("%d tasks, inner route %q; want 3 and none", n, inner)
	}
}

// TestRouteNameAllocs: a known route's name is made once.
func TestRouteNameAllocs(t *testing.T) {
	if got := RouteName("GET", "/users/:id"); got != "GET /users/:id" {
		t.Fatalf("RouteName = %q", got)
	}
	if got := RouteName("GET", ""); got != NoRoute {
		t.Fatalf("RouteName without pattern = %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { RouteName("GET", "/users/:id") }); n != 0 {
		t.Errorf("RouteName of a known route: %g allocations", n)
	}
}

// TestBeginContext: a job taken from a queue is a request of its own, a
// task named by its route with the caller's trace in its Request log; one
// begun inside a request stays part of it; an empty route is NoRoute and a
// traceparent that does not parse starts a new trace.
func TestBeginContext(t *testing.T) {
	a, err := New(Options{NoRecorder: true, ProbeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	evs := traced(t, func() {
		ctx, q := a.BeginContext(context.Background(), "job resize", caller)
		if q == nil || q.Route() != "job resize" {
			t.Fatalf("BeginContext: request %v", q)
		}
		if ctx2, q2 := a.BeginContext(ctx, "job inner", ""); ctx2 != ctx || q2 != nil {
			t.Error("BeginContext inside a request began a second one")
		}
		q.End()
		_, q = a.BeginContext(context.Background(), "", "not a traceparent")
		q.End()
	})
	var tasks []string
	for _, ev := range evs {
		if ev.Kind == agenttest.KindTaskBegin {
			tasks = append(tasks, ev.Name)
		}
	}
	if want := []string{"job resize", NoRoute}; !slices.Equal(tasks, want) {
		t.Errorf("tasks %q, want %q", tasks, want)
	}
	req := logs(evs, tracelog.Request)
	if len(req) != 2 {
		t.Fatalf("%d Request logs, want 2", len(req))
	}
	if !strings.HasPrefix(req[0].Message, caller[:36]) || req[0].Message == caller {
		t.Errorf("the job's Request log %q: want the caller's trace %s with a span of its own", req[0].Message, caller[3:35])
	}
	if strings.HasPrefix(req[1].Message, caller[:36]) {
		t.Errorf("the second job's Request log %q: want a new trace", req[1].Message)
	}
}
