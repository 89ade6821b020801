package agent

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRouteCap: a Route hook that returns paths, 5,000 distinct paths,
// the metrics on and the flight recorder on. The routes the metrics see
// and the recorder's per-route windows stay bounded by the default cap:
// the first DefaultOptions.MaxRoutes routes keep their names, the rest are
// counted under OtherRoute (agentprom's TestRouteCap counts the series).
func TestRouteCap(t *testing.T) {
	const paths = 5000
	m := newFakeMetrics()
	a, err := New(Options{
		Dir:         t.TempDir(),
		Metrics:     m,
		ProbeEvery:  -1,
		MinInterval: time.Hour,
		Route:       func(r *http.Request) string { return r.URL.Path },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var warned bytes.Buffer
	a.routes.warn = &warned
	h := a.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for i := range paths {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/p/"+strconv.Itoa(i), nil))
	}
	maxRoutes := DefaultOptions.MaxRoutes
	if maxRoutes <= 0 || maxRoutes >= paths {
		t.Fatalf("DefaultOptions.MaxRoutes = %d, want a cap below %d", maxRoutes, paths)
	}
	if len(m.order) != maxRoutes+1 {
		t.Errorf("the metrics saw %d routes after %d distinct paths, want %d (MaxRoutes %d and %q)", len(m.order), paths, maxRoutes+1, maxRoutes, OtherRoute)
	}
	if r := m.route(OtherRoute); r == nil || r.requests() != paths-int64(maxRoutes) {
		t.Errorf("%q requests: %v, want %d", OtherRoute, r, paths-maxRoutes)
	}
	if n := m.over.Load(); n != paths-int64(maxRoutes) {
		t.Errorf("requests over the limit: %d, want %d", n, paths-maxRoutes)
	}
	if lines := strings.Count(warned.String(), "\n"); lines != 1 || !strings.Contains(warned.String(), "MaxRoutes") {
		t.Errorf("warning written %d times, want once naming MaxRoutes: %q", lines, warned.String())
	}
	windows := 0
	a.slow.routes.Range(func(any, any) bool { windows++; return true })
	if windows > maxRoutes+1 {
		t.Errorf("the recorder keeps %d per-route windows, want at most %d", windows, maxRoutes+1)
	}
}

// TestRouteCapAllocs: the cap adds no allocation per request, for a known
// route or one turned to OtherRoute, and with no metrics it counts nothing
// and still warns once.
func TestRouteCapAllocs(t *testing.T) {
	var warned bytes.Buffer
	s := newRouteSet(2, nil, &warned)
	known := strings.Clone("GET /users/{id}")
	for _, r := range []string{known, "GET /b", "GET /c", "GET /d"} {
		s.admit(r)
	}
	if got := s.admit(strings.Clone(known)); got != known {
		t.Errorf("admit(known) = %q", got)
	}
	if got := s.admit("GET /d"); got != OtherRoute {
		t.Errorf("admit beyond the cap = %q, want %q", got, OtherRoute)
	}
	other := strings.Clone("GET /e")
	for _, tt := range []struct{ name, route string }{{"known", known}, {"other", other}} {
		if n := testing.AllocsPerRun(1000, func() { s.admit(tt.route) }); n != 0 {
			t.Errorf("admit(%s route): %g allocations, want 0", tt.name, n)
		}
	}
	if strings.Count(warned.String(), "\n") != 1 {
		t.Errorf("warning %q, want one line", warned.String())
	}
}

// BenchmarkRouteAdmit times what the route cap adds to a request of a
// known route: one sync.Map read.
func BenchmarkRouteAdmit(b *testing.B) {
	s := newRouteSet(DefaultOptions.MaxRoutes, nil, nil)
	for i := range 100 {
		s.admit("GET /r" + strconv.Itoa(i) + "/{id}")
	}
	route := "GET /r42/{id}"
	b.ReportAllocs()
	for b.Loop() {
		s.admit(route)
	}
}
