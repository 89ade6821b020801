package agent

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/tracelog"
)

// wrappers are the agent's wrappers the agenttest muxes serve through.
var wrappers = agenttest.Wrappers{Connector: WrapConnector, Transport: Transport}

// TestMetricsRecorded runs a real HTTP server with the agent's metrics on,
// makes requests whose DB and outbound time the test knows (a driver that
// sleeps, an upstream that sleeps), and checks what the agent reported per
// route: agentprom's TestMetricsScrape checks the same requests as
// Prometheus exports them.
func TestMetricsRecorded(t *testing.T) {
	m := newFakeMetrics()
	a, err := New(Options{NoRecorder: true, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	agenttest.RunScenario(t, a.Handler(agenttest.ScenarioMux(t, wrappers)))
	n, nd := int64(agenttest.ScenarioRequests), time.Duration(agenttest.ScenarioRequests)
	db, nodb, out := m.route("GET /db"), m.route("GET /nodb"), m.route("GET /out")
	if db == nil || nodb == nil || out == nil {
		t.Fatalf("routes %v, want GET /db, GET /nodb and GET /out", m.order)
	}
	for _, c := range []struct {
		what      string
		got, want int64
	}{
		{"GET /db requests with a DB call", db.withDB.Load(), n},
		{"GET /db requests without", db.noDB.Load(), 0},
		{"GET /db DB calls", db.dbCalls.Load(), 2 * n},
		{"GET /db requests with an outbound call", db.withOut.Load(), 0},
		{"GET /nodb requests without a DB call", nodb.noDB.Load(), n},
		{"GET /nodb requests with", nodb.withDB.Load(), 0},
		{"GET /out requests without a DB call", out.noDB.Load(), n},
		{"GET /out requests with an outbound call", out.withOut.Load(), n},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	for _, c := range []struct {
		what         string
		sum, atLeast time.Duration
	}{
		{"GET /db latency", time.Duration(db.latency.Load()), nd * (agenttest.DBFirst + agenttest.DBSecond)},
		{"GET /db DB time", time.Duration(db.db.Load()), nd * (agenttest.DBFirst + agenttest.DBSecond)},
		{"GET /db DB calls", time.Duration(db.dbCallNanos.Load()), nd * (agenttest.DBFirst + agenttest.DBSecond)},
		{"GET /nodb latency", time.Duration(nodb.latency.Load()), nd * agenttest.NoDBSleep},
		{"GET /out latency", time.Duration(out.latency.Load()), nd * agenttest.UpstreamSleep},
		{"GET /out outbound time", time.Duration(out.out.Load()), nd * agenttest.UpstreamSleep},
	} {
		t.Logf("%s: %v", c.what, c.sum)
		if c.sum < c.atLeast {
			t.Errorf("%s: %v, want at least the %v slept", c.what, c.sum, c.atLeast)
		}
	}
	// The DB calls are sequential parts of the request: their total is
	// within the request's latency; and none is faster than the driver slept.
	if db.db.Load() > db.latency.Load() {
		t.Errorf("DB time %v > request time %v of the same requests", time.Duration(db.db.Load()), time.Duration(db.latency.Load()))
	}
	if least := time.Duration(db.minDBCall.Load()); least < agenttest.DBSecond {
		t.Errorf("a DB call of %v; every call slept at least %v", least, agenttest.DBSecond)
	}
	if len(m.order) != 3 {
		t.Errorf("Route asked for %v, want each route once", m.order)
	}
	if !m.probe {
		t.Errorf("Open(probe=false) with NoRecorder and Metrics: the probe runs for the stall counter")
	}
}

// TestMetricsOpenClose: New opens the metrics once, telling whether the
// probe runs, and Close closes them; an error from Open fails New, naming
// the option; a value that is no Metrics fails New, naming agentprom;
// without Metrics there are none.
func TestMetricsOpenClose(t *testing.T) {
	m := newFakeMetrics()
	a, err := New(Options{NoRecorder: true, Metrics: m, ProbeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	if m.opened != 1 || m.closed != 0 || m.probe {
		t.Errorf("after New: opened %d, closed %d, probe %v; want 1, 0, false (ProbeEvery < 0)", m.opened, m.closed, m.probe)
	}
	a.Close()
	a.Close()
	if m.closed != 1 {
		t.Errorf("after Close twice: closed %d times, want 1", m.closed)
	}
	refused := errors.New("refused")
	_, err = New(Options{NoRecorder: true, Metrics: &fakeMetrics{openErr: refused}})
	if !errors.Is(err, refused) || !strings.Contains(err.Error(), "Options.Metrics") {
		t.Errorf("New with Open failing: %v, want the error naming Options.Metrics", err)
	}
	_, err = New(Options{NoRecorder: true, Metrics: "registry"})
	if err == nil || !strings.Contains(err.Error(), "agentprom") {
		t.Errorf("New with a string as Metrics: %v, want an error naming agentprom", err)
	}
	off, err := New(Options{NoRecorder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if off.met != nil {
		t.Errorf("metrics on without Options.Metrics")
	}
}

// TestMetricsWake: only wake-ups later than tracelog.ProbeLate are stalls,
// and their whole lateness counts.
func TestMetricsWake(t *testing.T) {
	f := newFakeMetrics()
	m := &metrics{m: f}
	for _, d := range []time.Duration{0, 50 * time.Microsecond, tracelog.ProbeLate, 3 * time.Millisecond, 100 * time.Millisecond} {
		m.wake(d)
	}
	if got, want := time.Duration(f.stalled.Load()), 103*time.Millisecond; got != want {
		t.Errorf("stall time %v, want %v (the two wake-ups later than %v)", got, want, tracelog.ProbeLate)
	}
	if n := f.stalls.Load(); n != 2 {
		t.Errorf("stalls %d, want 2", n)
	}
}

// TestMetricsPrepared: executions of prepared statements are DB calls too —
// a statement prepared under the request, and the fallback database/sql
// takes when the driver skips QueryContext (go-sql-driver/mysql with
// arguments) — each counted once, for at least the time the driver slept.
func TestMetricsPrepared(t *testing.T) {
	m := newFakeMetrics()
	a, err := New(Options{NoRecorder: true, Metrics: m, ProbeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	app := httptest.NewServer(a.Handler(agenttest.PreparedMux(t, wrappers)))
	defer app.Close()
	if code, body := get(t, app.Client(), app.URL+"/stmt"); code != http.StatusOK {
		t.Fatalf("GET /stmt: %d %s", code, body)
	}
	r := m.route("GET /stmt")
	if r == nil {
		t.Fatalf("no route GET /stmt in %v", m.order)
	}
	if n, least := r.dbCalls.Load(), time.Duration(r.minDBCall.Load()); n != 2 || least < agenttest.PreparedSleep {
		t.Errorf("DB calls: %d, the shortest %v; want 2 calls of at least %v each", n, least, agenttest.PreparedSleep)
	}
	if n := r.withDB.Load(); n != 1 {
		t.Errorf("requests with a DB call: %d, want 1", n)
	}
}

// TestMetricsAllocs: the metrics add no allocation to a request, with a
// DB call or without, once the route's recorder exists (the agent's side;
// agentprom's TestMetricsAllocs checks its observers).
func TestMetricsAllocs(t *testing.T) {
	for _, path := range []string{"/db", "/nodb"} {
		allocs := func(m Metrics) float64 { return agenttest.Allocs(benchAgent(t, m), http.MethodGet, path) }
		off, on := allocs(nil), allocs(newFakeMetrics())
		t.Logf("%s: %g allocations per request without metrics, %g with", path, off, on)
		if on > off {
			t.Errorf("%s: metrics add %g allocations per request", path, on-off)
		}
	}
}

// benchAgent returns an agent's Handler (no recorder, metrics m when not
// nil) over agenttest.BenchMux.
func benchAgent(b testing.TB, m Metrics) http.Handler {
	opts := Options{NoRecorder: true, ProbeEvery: -1}
	if m != nil {
		opts.Metrics = m
	}
	a, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return a.Handler(agenttest.BenchMux(b, wrappers))
}
