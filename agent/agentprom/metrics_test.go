package agentprom

import (
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/latscope/latscope/agent"
	"github.com/latscope/latscope/agent/internal/agenttest"
	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/tracelog"
)

// wrappers are the agent's wrappers the agenttest muxes serve through.
var wrappers = agenttest.Wrappers{Connector: agent.WrapConnector, Transport: agent.Transport}

// TestMetricsScrape runs a real HTTP server with the agent's metrics on a
// real registry, makes requests whose DB and outbound time the test knows
// (a driver that sleeps, an upstream that sleeps), scrapes /metrics over
// HTTP and parses it as Prometheus would.
func TestMetricsScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{NoRecorder: true, Metrics: New(reg)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	agenttest.RunScenario(t, a.Handler(agenttest.ScenarioMux(t, wrappers)))
	fams := scrape(t, reg)

	checkHistograms(t, fams)
	const dbFirst, dbSecond, noDBSleep, upstreamSleep = agenttest.DBFirst, agenttest.DBSecond, agenttest.NoDBSleep, agenttest.UpstreamSleep
	n, nd := uint64(agenttest.ScenarioRequests), time.Duration(agenttest.ScenarioRequests)
	type want struct {
		name    string
		labels  map[string]string
		count   uint64
		atLeast time.Duration // sum, from the sleeps
	}
	for _, w := range []want{
		{"latscope_request_duration_seconds", map[string]string{"route": "GET /db", "db": "yes"}, n, nd * (dbFirst + dbSecond)},
		{"latscope_request_duration_seconds", map[string]string{"route": "GET /nodb", "db": "no"}, n, nd * noDBSleep},
		{"latscope_request_duration_seconds", map[string]string{"route": "GET /out", "db": "no"}, n, nd * upstreamSleep},
		{"latscope_request_db_seconds", map[string]string{"route": "GET /db"}, n, nd * (dbFirst + dbSecond)},
		{"latscope_db_call_duration_seconds", map[string]string{"route": "GET /db"}, 2 * n, nd * (dbFirst + dbSecond)},
		{"latscope_request_outbound_seconds", map[string]string{"route": "GET /out"}, n, nd * upstreamSleep},
	} {
		h := histogram(t, fams, w.name, w.labels)
		if h == nil {
			continue
		}
		sum := time.Duration(h.GetSampleSum() * float64(time.Second))
		t.Logf("%s%v: count %d sum %v", w.name, w.labels, h.GetSampleCount(), sum)
		if h.GetSampleCount() != w.count {
			t.Errorf("%s%v: count %d, want %d", w.name, w.labels, h.GetSampleCount(), w.count)
		}
		if sum < w.atLeast {
			t.Errorf("%s%v: sum %v, want at least the %v slept", w.name, w.labels, sum, w.atLeast)
		}
	}
	// The DB calls are sequential parts of the request: their total is
	// within the request's latency.
	req := histogram(t, fams, "latscope_request_duration_seconds", map[string]string{"route": "GET /db", "db": "yes"})
	db := histogram(t, fams, "latscope_request_db_seconds", map[string]string{"route": "GET /db"})
	if req != nil && db != nil && db.GetSampleSum() > req.GetSampleSum() {
		t.Errorf("DB time %.4f s > request time %.4f s of the same requests", db.GetSampleSum(), req.GetSampleSum())
	}
	// No DB call is faster than the 10 ms the driver slept.
	if call := histogram(t, fams, "latscope_db_call_duration_seconds", map[string]string{"route": "GET /db"}); call != nil {
		for _, b := range call.GetBucket() {
			if b.GetUpperBound() < dbSecond.Seconds() && b.GetCumulativeCount() != 0 {
				t.Errorf("db call bucket le=%g has %d calls; every call slept at least %v", b.GetUpperBound(), b.GetCumulativeCount(), dbSecond)
			}
		}
	}
	for _, absent := range []struct {
		name   string
		labels map[string]string
	}{
		{"latscope_request_duration_seconds", map[string]string{"route": "GET /nodb", "db": "yes"}},
		{"latscope_request_db_seconds", map[string]string{"route": "GET /nodb"}},
		{"latscope_request_outbound_seconds", map[string]string{"route": "GET /db"}},
	} {
		if h := find(fams, absent.name, absent.labels); h != nil && h.GetHistogram().GetSampleCount() != 0 {
			t.Errorf("%s%v has %d observations, want none", absent.name, absent.labels, h.GetHistogram().GetSampleCount())
		}
	}
	checkHostCounters(t, fams)
	for _, name := range []string{"latscope_stall_seconds_total", "latscope_stalls_total"} {
		if f := fams[name]; f == nil || f.GetType() != dto.MetricType_COUNTER {
			t.Errorf("%s: not exported as a counter with the probe on (NoRecorder, Metrics): %v", name, f)
		}
	}
}

// TestMetricsRegister: the collectors go on the given registry and come
// off at Close, so a second agent can use it; two open agents on one
// registry is an error naming the option; a registry set as it is
// (without New) is taken the same way, since this package is linked; the
// stall counters are left out with the probe off.
func TestMetricsRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{NoRecorder: true, Metrics: New(reg)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.New(agent.Options{NoRecorder: true, Metrics: reg})
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) || !strings.Contains(err.Error(), "Options.Metrics") {
		t.Errorf("second agent on one registry: %v, want an AlreadyRegisteredError naming Options.Metrics", err)
	}
	a.Close()
	if fams, _ := reg.Gather(); len(fams) != 0 {
		t.Errorf("after Close, %d families are still registered", len(fams))
	}
	b, err := agent.New(agent.Options{NoRecorder: true, Metrics: prometheus.Registerer(reg), ProbeEvery: -1})
	if err != nil {
		t.Fatalf("agent on a registry whose agent closed, the registry set as it is: %v", err)
	}
	defer b.Close()
	fams := scrape(t, reg)
	if _, ok := fams["latscope_request_duration_seconds"]; ok {
		t.Errorf("a request histogram before any request")
	}
	if _, ok := fams["latscope_routes_over_limit_total"]; !ok {
		t.Errorf("latscope_routes_over_limit_total not registered by a registry set as Options.Metrics")
	}
	if _, ok := fams["latscope_stalls_total"]; ok {
		t.Errorf("latscope_stalls_total exported with the probe off (ProbeEvery < 0)")
	}
}

// TestMetricsOpenTwice: one New(reg) serves one open agent at a time.
func TestMetricsOpenTwice(t *testing.T) {
	m := New(prometheus.NewRegistry())
	if err := m.Open(false); err != nil {
		t.Fatal(err)
	}
	if err := m.Open(false); err == nil {
		t.Errorf("second Open of open metrics: no error")
	}
	m.Close()
	if err := m.Open(false); err != nil {
		t.Errorf("Open after Close: %v", err)
	}
	m.Close()
}

// TestMetricsStall: each stall adds its whole lateness and one to the
// count.
func TestMetricsStall(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	if err := m.Open(true); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Stall(3 * time.Millisecond)
	m.Stall(100 * time.Millisecond)
	fams := scrape(t, reg)
	got := find(fams, "latscope_stall_seconds_total", nil).GetCounter().GetValue()
	if want := (103 * time.Millisecond).Seconds(); got < want-1e-9 || got > want+1e-9 {
		t.Errorf("stall seconds %g, want %g", got, want)
	}
	if n := find(fams, "latscope_stalls_total", nil).GetCounter().GetValue(); n != 2 {
		t.Errorf("stalls %g, want 2", n)
	}
	if h := fams["latscope_stalls_total"].GetHelp(); !strings.Contains(h, tracelog.ProbeLate.String()) {
		t.Errorf("help %q does not name tracelog.ProbeLate", h)
	}
}

// TestMetricsPrepared: the prepared statements of agenttest.PreparedMux
// are two DB calls in latscope_db_call_duration_seconds, each at least
// what the driver slept, under one request with a DB call.
func TestMetricsPrepared(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{NoRecorder: true, Metrics: New(reg), ProbeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	app := httptest.NewServer(a.Handler(agenttest.PreparedMux(t, wrappers)))
	defer app.Close()
	if code, body := agenttest.Get(t, app.Client(), app.URL+"/stmt"); code != http.StatusOK {
		t.Fatalf("GET /stmt: %d %s", code, body)
	}
	fams := scrape(t, reg)
	call := histogram(t, fams, "latscope_db_call_duration_seconds", map[string]string{"route": "GET /stmt"})
	req := histogram(t, fams, "latscope_request_duration_seconds", map[string]string{"route": "GET /stmt", "db": "yes"})
	if call == nil || req == nil {
		return
	}
	if call.GetSampleCount() != 2 || call.GetSampleSum() < (2*agenttest.PreparedSleep).Seconds() {
		t.Errorf("DB calls: count %d sum %.4f s, want 2 calls of at least %v each", call.GetSampleCount(), call.GetSampleSum(), agenttest.PreparedSleep)
	}
	if req.GetSampleCount() != 1 {
		t.Errorf("requests with a DB call: %d, want 1", req.GetSampleCount())
	}
}

// TestMetricsAllocs: the Prometheus metrics add no allocation to a
// request, with a DB call or without, once the route's observers exist.
func TestMetricsAllocs(t *testing.T) {
	for _, path := range []string{"/db", "/nodb"} {
		allocs := func(h http.Handler) float64 { return agenttest.Allocs(h, http.MethodGet, path) }
		off, on := allocs(benchAgent(t, nil)), allocs(benchAgent(t, prometheus.NewRegistry()))
		t.Logf("%s: %g allocations per request without metrics, %g with", path, off, on)
		if on > off {
			t.Errorf("%s: metrics add %g allocations per request", path, on-off)
		}
	}
}

// TestMetricsDocExample serves docs/metrics.md's example (Example's shape):
// the agent's Handler wraps the app's mux under a root mux that also
// serves /metrics. The root mux sets r.Pattern = "/" before the agent
// runs; every request used to be route="/". One series per route of the
// app's mux, with the counts sent, and none for "/" (agent's
// TestMetricsDocExample checks the tasks).
func TestMetricsDocExample(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{NoRecorder: true, ProbeEvery: -1, Metrics: New(reg)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	mux, sent := agenttest.DocExampleMux(agent.NoRoute)
	root := http.NewServeMux() // scrapes stay out of the request metrics
	root.Handle("/", a.Handler(mux))
	root.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(root)
	defer srv.Close()
	const n = 15
	agenttest.Send(t, srv.Client(), srv.URL, sent, n)
	_, scrape := agenttest.Get(t, srv.Client(), srv.URL+"/metrics")
	for _, s := range sent {
		line := `latscope_request_duration_seconds_count{db="no",route="` + s.Route + `"} ` + strconv.Itoa(n)
		if !strings.Contains(string(scrape), line+"\n") {
			t.Errorf("no %s in the scrape", line)
		}
	}
	if strings.Contains(string(scrape), `route="/"`) {
		t.Errorf(`a route="/" series: the outer mux's pattern won`)
	}
}

// TestRouteCap: a Route hook that returns paths, 5,000 distinct paths:
// the request series stay bounded by the default cap, 5 per route and
// OtherRoute, and the requests beyond it are counted.
func TestRouteCap(t *testing.T) {
	const paths = 5000
	reg := prometheus.NewRegistry()
	a, err := agent.New(agent.Options{NoRecorder: true, Metrics: New(reg), ProbeEvery: -1,
		Route: func(r *http.Request) string { return r.URL.Path }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	h := a.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for i := range paths {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/p/"+strconv.Itoa(i), nil))
	}
	maxRoutes := agent.DefaultOptions.MaxRoutes
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	routes := map[string]bool{}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "latscope_request_") && !strings.HasPrefix(f.GetName(), "latscope_db_call_") {
			continue
		}
		for _, m := range f.GetMetric() {
			series++
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" {
					routes[l.GetValue()] = true
				}
			}
		}
	}
	// Five series per route: request duration (db yes and no), request DB
	// time, request outbound time, DB calls.
	if want := 5 * (maxRoutes + 1); series > want || len(routes) != maxRoutes+1 {
		t.Errorf("%d request series over %d routes after %d distinct paths, want at most %d over %d (MaxRoutes %d and %q)",
			series, len(routes), paths, want, maxRoutes+1, maxRoutes, agent.OtherRoute)
	}
	fs := scrape(t, reg)
	if h := histogram(t, fs, "latscope_request_duration_seconds", map[string]string{"route": agent.OtherRoute, "db": "no"}); h != nil && h.GetSampleCount() != paths-uint64(maxRoutes) {
		t.Errorf("%q requests: %d, want %d", agent.OtherRoute, h.GetSampleCount(), paths-maxRoutes)
	}
	if c := find(fs, "latscope_routes_over_limit_total", map[string]string{}); c == nil || c.GetCounter().GetValue() != paths-float64(maxRoutes) {
		t.Errorf("latscope_routes_over_limit_total: %v, want %d", c, paths-maxRoutes)
	}
}

// benchAgent returns an agent's Handler (no recorder, metrics on reg when
// not nil) over agenttest.BenchMux.
func benchAgent(b testing.TB, reg prometheus.Registerer) http.Handler {
	opts := agent.Options{NoRecorder: true, ProbeEvery: -1}
	if reg != nil {
		opts.Metrics = New(reg)
	}
	a, err := agent.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return a.Handler(agenttest.BenchMux(b, wrappers))
}

// scrape serves reg with promhttp on a real listener, gets /metrics and
// parses it with the Prometheus text parser.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer srv.Close()
	return scrapeURL(t, srv.URL+"/metrics")
}

// scrapeURL gets url and parses the text exposition format.
func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := agenttest.Get(t, nil, url, "Accept", "text/plain")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// histogramLabels are the label names of each request histogram.
var histogramLabels = map[string][]string{
	"latscope_request_duration_seconds": {"db", "route"},
	"latscope_request_db_seconds":       {"route"},
	"latscope_request_outbound_seconds": {"route"},
	"latscope_db_call_duration_seconds": {"route"},
}

// checkHistograms checks the type, labels and buckets of every series of
// the request histograms.
func checkHistograms(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	for name, labels := range histogramLabels {
		f := fams[name]
		if f == nil {
			t.Errorf("%s: not exported", name)
			continue
		}
		if f.GetType() != dto.MetricType_HISTOGRAM {
			t.Errorf("%s: type %v, want histogram", name, f.GetType())
		}
		for _, m := range f.GetMetric() {
			var got []string
			for _, l := range m.GetLabel() {
				got = append(got, l.GetName())
			}
			if !slices.Equal(got, labels) {
				t.Errorf("%s: labels %v, want %v", name, got, labels)
			}
			var bounds []float64
			for _, b := range m.GetHistogram().GetBucket() {
				if !math.IsInf(b.GetUpperBound(), 1) { // the parser adds +Inf
					bounds = append(bounds, b.GetUpperBound())
				}
			}
			if !slices.Equal(bounds, agent.MetricBuckets) {
				t.Errorf("%s: buckets %v, want agent.MetricBuckets %v", name, bounds, agent.MetricBuckets)
			}
		}
	}
}

// find returns the series of family name with exactly labels, or nil.
func find(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) == len(labels) && func() bool {
			for k, v := range labels {
				if got[k] != v {
					return false
				}
			}
			return true
		}() {
			return m
		}
	}
	return nil
}

// histogram returns the histogram of the series, failing the test if it is
// missing.
func histogram(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	m := find(fams, name, labels)
	if m == nil {
		t.Errorf("%s%v: no such series", name, labels)
		return nil
	}
	return m.GetHistogram()
}

// checkHostCounters: each host counter is exported exactly when hostsig
// reads its source on this machine, and the sources of this Linux host
// (/proc/stat, /proc/pressure/cpu) are read.
func checkHostCounters(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	s, err := hostsig.NewSampler(os.Getpid(), hostsig.Options{})
	if err != nil {
		t.Skipf("SKIP: host counters: this machine has no /proc to read: %v", err)
	}
	defer s.Close()
	smp, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		src    hostsig.Source
	}{
		{"latscope_cfs_periods_total", nil, hostsig.SourceThrottle},
		{"latscope_cfs_throttled_periods_total", nil, hostsig.SourceThrottle},
		{"latscope_cfs_throttled_seconds_total", nil, hostsig.SourceThrottle},
		{"latscope_cpu_pressure_some_seconds_total", map[string]string{"scope": "cgroup"}, hostsig.SourceCgroupPSI},
		{"latscope_cpu_pressure_some_seconds_total", map[string]string{"scope": "host"}, hostsig.SourceSystemPSI},
		{"latscope_steal_seconds_total", nil, hostsig.SourceSteal},
	} {
		m := find(fams, c.name, c.labels)
		switch {
		case smp.Has(c.src) && m == nil:
			t.Errorf("%s%v: not exported though its source is readable", c.name, c.labels)
		case !smp.Has(c.src) && m != nil:
			t.Errorf("%s%v: exported as %v though its source is absent (%s)", c.name, c.labels, m.GetCounter().GetValue(), smp.Absent[c.src])
		case m != nil && fams[c.name].GetType() != dto.MetricType_COUNTER:
			t.Errorf("%s: type %v, want counter", c.name, fams[c.name].GetType())
		case m != nil:
			t.Logf("%s%v = %g", c.name, c.labels, m.GetCounter().GetValue())
		default:
			t.Logf("%s%v absent on this machine: %s", c.name, c.labels, smp.Absent[c.src])
		}
	}
	for _, src := range []hostsig.Source{hostsig.SourceSteal, hostsig.SourceSystemPSI} {
		if !smp.Has(src) {
			t.Logf("LOUD: source %v is not readable on this machine (%s): its counter is untested here", src, smp.Absent[src])
		}
	}
}
