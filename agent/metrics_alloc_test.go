package agent

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricsAllocs: the metrics add no allocation to a request, with a
// DB call or without, once the route's observers exist.
func TestMetricsAllocs(t *testing.T) {
	for _, path := range []string{"/db", "/nodb"} {
		allocs := func(h http.Handler) float64 {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req) // the route's observers, the pool's connection
			return testing.AllocsPerRun(200, func() {
				w.Body.Reset()
				h.ServeHTTP(w, req)
			})
		}
		off, on := allocs(benchAgent(t, nil)), allocs(benchAgent(t, prometheus.NewRegistry()))
		t.Logf("%s: %g allocations per request without metrics, %g with", path, off, on)
		if on > off {
			t.Errorf("%s: metrics add %g allocations per request", path, on-off)
		}
	}
}
