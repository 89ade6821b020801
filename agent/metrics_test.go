package agent

import (
	"database/sql"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/latscope/latscope/internal/hostsig"
	"github.com/latscope/latscope/tracelog"
)

// The request scenario of TestMetricsScrape, per request.
const (
	dbFirst, dbSecond = 20 * time.Millisecond, 10 * time.Millisecond // the two DB calls of GET /db
	noDBSleep         = 5 * time.Millisecond                         // GET /nodb
	upstreamSleep     = 15 * time.Millisecond                        // the outbound call of GET /out
	scenarioRequests  = 5                                            // per route
)

// TestMetricsScrape runs a real HTTP server with the agent's metrics on a
// real registry, makes requests whose DB and outbound time the test knows
// (a driver that sleeps, an upstream that sleeps), scrapes /metrics over
// HTTP and parses it as Prometheus would.
func TestMetricsScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := New(Options{NoRecorder: true, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	app := httptest.NewServer(a.Handler(scenarioMux(t)))
	defer app.Close()
	for range scenarioRequests {
		for _, path := range []string{"/db", "/nodb", "/out"} {
			if code, body := get(t, app.Client(), app.URL+path); code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, code, body)
			}
		}
	}
	fams := scrape(t, reg)

	checkHistograms(t, fams)
	n, nd := uint64(scenarioRequests), time.Duration(scenarioRequests)
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

// scenarioMux serves GET /db (two DB calls, the second on another
// goroutine), GET /nodb (a sleep) and GET /out (an outbound call to an
// upstream that sleeps).
func scenarioMux(t *testing.T) *http.ServeMux {
	db := sql.OpenDB(WrapConnector(sleepConnector{}))
	t.Cleanup(func() { db.Close() })
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(upstreamSleep)
	}))
	t.Cleanup(upstream.Close)
	client := &http.Client{Transport: Transport(nil)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /db", func(w http.ResponseWriter, r *http.Request) {
		if _, err := db.ExecContext(r.Context(), "sleep "+dbFirst.String()); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		var wg sync.WaitGroup
		var err error
		wg.Go(func() {
			var rows *sql.Rows
			if rows, err = db.QueryContext(r.Context(), "sleep "+dbSecond.String()); err == nil {
				rows.Close()
			}
		})
		wg.Wait()
		if err != nil {
			http.Error(w, err.Error(), 500)
		}
	})
	mux.HandleFunc("GET /nodb", func(w http.ResponseWriter, r *http.Request) { time.Sleep(noDBSleep) })
	mux.HandleFunc("GET /out", func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, upstream.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		resp.Body.Close()
	})
	return mux
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
	code, body := get(t, nil, url, "Accept", "text/plain")
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
			if !slices.Equal(bounds, MetricBuckets) {
				t.Errorf("%s: buckets %v, want MetricBuckets %v", name, bounds, MetricBuckets)
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

// TestMetricsRegister: the collectors go on the given registry and come
// off at Close, so a second agent can use it; two open agents on one
// registry is an error naming the option; without Metrics nothing is
// registered.
func TestMetricsRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := New(Options{NoRecorder: true, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{NoRecorder: true, Metrics: reg})
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) || !strings.Contains(err.Error(), "Options.Metrics") {
		t.Errorf("second agent on one registry: %v, want an AlreadyRegisteredError naming Options.Metrics", err)
	}
	a.Close()
	if fams, _ := reg.Gather(); len(fams) != 0 {
		t.Errorf("after Close, %d families are still registered", len(fams))
	}
	b, err := New(Options{NoRecorder: true, Metrics: reg, ProbeEvery: -1})
	if err != nil {
		t.Fatalf("agent on a registry whose agent closed: %v", err)
	}
	defer b.Close()
	fams := scrape(t, reg)
	if _, ok := fams["latscope_stalls_total"]; ok {
		t.Errorf("latscope_stalls_total exported with the probe off (ProbeEvery < 0)")
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
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, true, tracelog.ProbeLate)
	if err != nil {
		t.Fatal(err)
	}
	defer m.unregister()
	for _, d := range []time.Duration{0, 50 * time.Microsecond, tracelog.ProbeLate, 3 * time.Millisecond, 100 * time.Millisecond} {
		m.wake(d)
	}
	fams := scrape(t, reg)
	got := find(fams, "latscope_stall_seconds_total", nil).GetCounter().GetValue()
	if want := (103 * time.Millisecond).Seconds(); got < want-1e-9 || got > want+1e-9 {
		t.Errorf("stall seconds %g, want %g (the two wake-ups later than %v)", got, want, tracelog.ProbeLate)
	}
	if n := find(fams, "latscope_stalls_total", nil).GetCounter().GetValue(); n != 2 {
		t.Errorf("stalls %g, want 2", n)
	}
}

// TestMetricsPrepared: executions of prepared statements are DB calls too —
// a statement prepared under the request, and the fallback database/sql
// takes when the driver skips QueryContext (go-sql-driver/mysql with
// arguments) — each counted once, for at least the time the driver slept.
func TestMetricsPrepared(t *testing.T) {
	const sleep = 10 * time.Millisecond
	reg := prometheus.NewRegistry()
	a, err := New(Options{NoRecorder: true, Metrics: reg, ProbeEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	db := sql.OpenDB(WrapConnector(sleepConnector{}))
	defer db.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stmt", func(w http.ResponseWriter, r *http.Request) {
		st, err := db.PrepareContext(r.Context(), "sleep "+sleep.String())
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer st.Close()
		if _, err := st.ExecContext(r.Context(), 1); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		rows, err := db.QueryContext(r.Context(), "sleep "+sleep.String(), 1) // skipped, then prepared
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		rows.Close()
	})
	app := httptest.NewServer(a.Handler(mux))
	defer app.Close()
	if code, body := get(t, app.Client(), app.URL+"/stmt"); code != http.StatusOK {
		t.Fatalf("GET /stmt: %d %s", code, body)
	}
	fams := scrape(t, reg)
	call := histogram(t, fams, "latscope_db_call_duration_seconds", map[string]string{"route": "GET /stmt"})
	req := histogram(t, fams, "latscope_request_duration_seconds", map[string]string{"route": "GET /stmt", "db": "yes"})
	if call == nil || req == nil {
		return
	}
	if call.GetSampleCount() != 2 || call.GetSampleSum() < (2*sleep).Seconds() {
		t.Errorf("DB calls: count %d sum %.4f s, want 2 calls of at least %v each", call.GetSampleCount(), call.GetSampleSum(), sleep)
	}
	if req.GetSampleCount() != 1 {
		t.Errorf("requests with a DB call: %d, want 1", req.GetSampleCount())
	}
}
