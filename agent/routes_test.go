package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/latscope/latscope/internal/tracein"
)

// TestMetricsDocExample serves docs/metrics.md's example (the shape of
// ExampleOptions_metrics): the agent's Handler wraps the app's mux under a
// root mux that also serves /metrics. The root mux sets r.Pattern = "/"
// before the agent runs; every request used to be route="/". The
// innermost pattern must win: one series per route of the app's mux, with
// the counts sent, and tasks of the same names.
func TestMetricsDocExample(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := New(Options{NoRecorder: true, ProbeEvery: -1, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello " + r.PathValue("name"))) })
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("user " + r.PathValue("id"))) })
	mux.HandleFunc("POST /items/{sku}/stock", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("item " + r.PathValue("sku"))) })
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	root := http.NewServeMux() // scrapes stay out of the request metrics
	root.Handle("/", a.Handler(mux))
	root.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(root)
	defer srv.Close()

	sent := []struct{ method, path, route, body string }{
		{"GET", "/hello/ann", "GET /hello/{name}", "hello ann"},
		{"GET", "/users/42", "GET /users/{id}", "user 42"},
		{"POST", "/items/x7/stock", "POST /items/{sku}/stock", "item x7"},
		{"GET", "/status", "GET /status", "ok"},
		{"GET", "/nope", NoRoute, "404 page not found\n"},
	}
	const n = 15
	evs := traced(t, func() {
		for i := 0; i < n; i++ {
			for _, s := range sent {
				req, _ := http.NewRequest(s.method, srv.URL+s.path, nil)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != s.body {
					t.Fatalf("%s %s: %q, want %q", s.method, s.path, b, s.body)
				}
			}
		}
	})
	tasks := map[string]int{}
	for _, ev := range evs {
		if ev.Kind == tracein.KindTaskBegin {
			tasks[ev.Name]++
		}
	}
	_, scrape := get(t, srv.Client(), srv.URL+"/metrics")
	for _, s := range sent {
		if tasks[s.route] != n {
			t.Errorf("%d tasks %q, want %d (all: %v)", tasks[s.route], s.route, n, tasks)
		}
		line := `latscope_request_duration_seconds_count{db="no",route="` + s.route + `"} 15`
		if !strings.Contains(string(scrape), line+"\n") {
			t.Errorf("no %s in the scrape", line)
		}
	}
	if len(tasks) != len(sent) {
		t.Errorf("tasks %v, want only the %d routes sent", tasks, len(sent))
	}
	if strings.Contains(string(scrape), `route="/"`) {
		t.Errorf(`a route="/" series: the outer mux's pattern won`)
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
		if ev.Kind == tracein.KindTaskBegin {
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
