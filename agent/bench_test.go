package agent

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/agent/internal/agenttest"
)

// BenchmarkHandler measures the middleware alone, in process, without the
// network: a plain mux, the agent without and with its flight recorder, and
// the agent wrapping the route's own handler instead of the mux. A route
// with a wildcard (/hello/{name}) costs the agent a second search of the
// mux; a literal one (/status) does not.
func BenchmarkHandler(b *testing.B) {
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello " + r.PathValue("name")))
	})
	status := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	})
	newMux := func(wrap func(http.Handler) http.Handler) *http.ServeMux {
		mux := http.NewServeMux()
		mux.Handle("GET /hello/{name}", wrap(hello))
		mux.Handle("GET /status", wrap(status))
		return mux
	}
	same := func(h http.Handler) http.Handler { return h }
	for _, route := range []string{"/hello/x", "/status"} {
		for _, bc := range []struct {
			name     string
			opts     *Options
			perRoute bool
		}{
			{"plain", nil, false},
			{"agent-no-recorder", &Options{NoRecorder: true}, false},
			{"agent-recorder", &Options{Dir: b.TempDir()}, false},
			{"agent-recorder-per-route", &Options{Dir: b.TempDir()}, true},
		} {
			b.Run(strings.TrimPrefix(route, "/")+"/"+bc.name, func(b *testing.B) {
				var h http.Handler = newMux(same)
				if bc.opts != nil {
					a, err := New(*bc.opts)
					if err != nil {
						b.Fatal(err)
					}
					defer a.Close()
					if bc.perRoute {
						h = newMux(a.Handler) // r.Pattern names the task
					} else {
						h = a.Handler(h)
					}
				}
				req := httptest.NewRequest(http.MethodGet, route, nil)
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					w := httptest.NewRecorder()
					for pb.Next() {
						w.Body.Reset()
						h.ServeHTTP(w, req)
					}
				})
			})
		}
	}
}

// BenchmarkTracerEvent measures what the runtime's tracer costs per event on
// this machine, whatever the agent does: two goroutines pass a value back and
// forth over channels, with no trace and with a flight recorder running, in
// the same benchmark. It reports both times per round trip, the events one
// round trip writes (counted in a trace of the same loop) and the difference
// per event. Every goroutine block, wake-up, syscall and creation in a traced
// process pays this; docs/agent.md ("Overhead") multiplies it by the events
// a request writes.
func BenchmarkTracerEvent(b *testing.B) {
	a, c := make(chan int), make(chan int)
	go func() {
		for v := range a {
			c <- v
		}
	}()
	defer close(a)
	roundTrips := func(n int) time.Duration {
		start := time.Now()
		for range n {
			a <- 1
			<-c
		}
		return time.Since(start)
	}
	perOp, err := eventsPerOp(func() { roundTrips(10000) }, 10000)
	if err != nil {
		b.Fatal(err)
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{})
	var off, on time.Duration
	for b.Loop() { // alternate the two, so that both see the same machine
		off += roundTrips(1000)
		if err := fr.Start(); err != nil {
			b.Fatal(err)
		}
		on += roundTrips(1000)
		fr.Stop()
	}
	n := float64(b.N) * 1000
	b.ReportMetric(float64(off.Nanoseconds())/n, "ns/op-plain")
	b.ReportMetric(float64(on.Nanoseconds())/n, "ns/op-traced")
	b.ReportMetric(perOp, "events/op")
	b.ReportMetric(float64((on-off).Nanoseconds())/n/perOp, "ns/event")
}

// eventsPerOp traces f, which does ops operations, and returns the trace's
// events per operation.
func eventsPerOp(f func(), ops int) (float64, error) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		return 0, err
	}
	f()
	trace.Stop()
	c, err := agenttest.CountEvents("trace of the benchmark loop", &buf)
	return float64(c.Events) / float64(ops), err
}
