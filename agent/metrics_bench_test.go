package agent

import (
	"database/sql"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latscope/latscope/agent/internal/span"
)

// BenchmarkMetricsCost measures what Options.Metrics adds to a request, in
// process, without the network: two agents without recorders, one with
// metrics, serve the same mux in alternating batches of 1000 requests, in
// alternating order (so that both see the same machine). Route "db" makes
// one DB call through WrapConnector over a driver that answers at once;
// "nodb" makes none. It reports both times per request and the difference,
// ns/req-metrics, the cost of the metrics: a difference of two times of
// several µs, so noisy on a busy host (BenchmarkMetricsPath times the
// added work alone).
func BenchmarkMetricsCost(b *testing.B) {
	for _, path := range []string{"/db", "/nodb"} {
		b.Run(path[1:], func(b *testing.B) {
			off, on := benchAgent(b, nil), benchAgent(b, prometheus.NewRegistry())
			req := httptest.NewRequest(http.MethodGet, path, nil)
			w := httptest.NewRecorder()
			batch := func(h http.Handler) time.Duration {
				start := time.Now()
				for range 1000 {
					w.Body.Reset()
					h.ServeHTTP(w, req)
				}
				return time.Since(start)
			}
			var tOff, tOn time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 { // alternate the order too: the second batch pays the first's garbage
					tOff += batch(off)
					tOn += batch(on)
				} else {
					tOn += batch(on)
					tOff += batch(off)
				}
			}
			n := float64(b.N) * 1000
			b.ReportMetric(float64(tOff.Nanoseconds())/n, "ns/req-off")
			b.ReportMetric(float64(tOn.Nanoseconds())/n, "ns/req-on")
			b.ReportMetric(float64((tOn-tOff).Nanoseconds())/n, "ns/req-metrics")
		})
	}
}

// BenchmarkMetricsPath times the work the metrics add to a request with
// one DB call, alone: the route's observers, the DB call's two clock reads
// and its addition to the request (with its observation), and the
// request's observations at its end.
func BenchmarkMetricsPath(b *testing.B) {
	m, err := newMetrics(prometheus.NewRegistry(), false, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer m.unregister()
	for b.Loop() {
		rm := m.route("GET /users/{id}")
		ri := span.Info{DBCall: rm.dbCall}
		start := time.Now()
		ri.AddDB(time.Since(start))
		rm.observe(time.Millisecond, &ri)
	}
}

// benchAgent returns an agent's Handler (no recorder, metrics on reg when
// not nil) over a mux with GET /db (one instant DB call) and GET /nodb.
func benchAgent(b testing.TB, reg prometheus.Registerer) http.Handler {
	opts := Options{NoRecorder: true, ProbeEvery: -1}
	if reg != nil {
		opts.Metrics = reg
	}
	a, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	db := sql.OpenDB(WrapConnector(sleepConnector{}))
	b.Cleanup(func() { db.Close() })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /db", func(w http.ResponseWriter, r *http.Request) {
		if _, err := db.ExecContext(r.Context(), "SELECT 1"); err != nil {
			http.Error(w, err.Error(), 500)
		}
	})
	mux.HandleFunc("GET /nodb", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	return a.Handler(mux)
}

// BenchmarkHostCollect measures one scrape of the host counters (a
// hostsig sample of this process: its stat, threads, cgroup, PSI and
// /proc/stat).
func BenchmarkHostCollect(b *testing.B) {
	c := newHostCollector()
	defer c.close()
	ch := make(chan prometheus.Metric, 16)
	for b.Loop() {
		c.Collect(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
}
