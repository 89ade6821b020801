package agentprom

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latscope/latscope/agent"
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
// one DB call, alone, once the route's observers exist (the agent keeps
// them per route): the DB call's two clock reads and its addition to the
// request (with its observation), and the request's observations at its
// end.
func BenchmarkMetricsPath(b *testing.B) {
	m := New(prometheus.NewRegistry())
	if err := m.Open(false); err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	rm := m.Route("GET /users/{id}")
	for b.Loop() {
		ri := span.Info{Route: rm}
		start := time.Now()
		ri.AddDB(time.Since(start))
		dbCalls, db, outCalls, out := ri.Calls()
		rm.Request(agent.RequestStats{Latency: time.Millisecond, DBCalls: int(dbCalls), DB: db, OutboundCalls: int(outCalls), Outbound: out})
	}
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
