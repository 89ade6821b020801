package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/trace"
	"slices"
	"strings"
	"testing"
	"time"

	xtrace "golang.org/x/exp/trace"

	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/lab/upstream"
)

const demoPkg = "github.com/latscope/latscope/lab/demo."

// deps starts the two real dependencies: a PostgreSQL cluster and an
// upstream on loopback answering after 100 ms.
func deps(t testing.TB) (upstreamURL, dbURL string) {
	t.Helper()
	pg := pgtest.Start(t)
	up, err := upstream.Start(t.Context(), upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	return up.URL(), pg.URL()
}

// serve starts the service behind a real HTTP server on loopback.
func serve(t testing.TB, cfg Config) (*Service, string) {
	t.Helper()
	svc, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(svc.Handler())
	t.Cleanup(func() { ts.Close(); svc.Close() })
	return svc, ts.URL
}

// get fetches url and returns the status and body; it fails t on a
// transport error.
func get(t testing.TB, url string) (int, string) {
	t.Helper()
	code, body, err := fetch(url)
	if err != nil {
		t.Fatal(err)
	}
	return code, body
}

// client keeps a keep-alive connection per concurrent client of the tests
// and benchmarks; http.DefaultClient keeps two and makes the rest dial.
var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// fetch is get for goroutines other than the test's.
func fetch(url string) (int, string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", url, err)
	}
	return resp.StatusCode, string(body), nil
}

// TestModes runs each mode end to end against a real upstream and a real
// PostgreSQL, with an execution trace recording, and checks the shape of
// every request in the trace.
//
// Latency bounds: the upstream sleeps 100 ms and pg_sleep 50 ms, so a serial
// request cannot take less than 150 ms and an overlapped one less than
// 100 ms; these lower bounds follow from the design, so every request is
// held to them. The upper bound of 400 ms only catches a broken shape (say,
// segments run twice): the expected ~153 ms leaves room for a loaded 2-core
// machine with tracing on. A broken shape moves every request, while one
// request may wait past any bound for a CPU on a busy host (the timing tier
// shares its two cores with vet and the fuzz targets), so the bound holds
// the median request (3 of the 4), and a request over it is logged.
func TestModes(t *testing.T) {
	tier.Timing(t)
	upURL, dbURL := deps(t)
	perMS := 0 // calibrated by the first service, reused by the others
	for _, mode := range Modes() {
		t.Run(mode.String(), func(t *testing.T) {
			svc, url := serve(t, Config{Mode: mode, UpstreamURL: upURL, DBURL: dbURL, CPUIters: perMS})
			perMS = svc.CPUIters()
			if got := svc.pool.Stat().TotalConns(); got != int32(DefaultConfig.PoolSize) {
				t.Errorf("pool has %d connections after New, want all %d open", got, DefaultConfig.PoolSize)
			}
			if code, body := get(t, url+"/work"); code != 200 {
				t.Fatalf("warm-up GET /work: %d %s", code, body)
			}
			const n = 4
			latencies, tr := tracedRequests(t, url+"/work", n)
			floor := 100 * time.Millisecond
			if mode == ModeSerial {
				floor = 150 * time.Millisecond
			}
			const ceiling = 400 * time.Millisecond
			for i, d := range latencies {
				if d < floor {
					t.Errorf("request %d took %v, want at least %v", i, d, floor)
				}
				if d > ceiling {
					t.Logf("request %d took %v, over %v", i, d, ceiling)
				}
			}
			if m := median(latencies); m > ceiling {
				t.Errorf("median request %v of %v, want at most %v: a broken shape", m, latencies, ceiling)
			}
			checkRequests(t, mode, tr, n)
			t.Logf("%s: latencies %v, cpu_iters %d", mode, latencies, perMS)
		})
	}
}

// median is the median of d, the upper one of an even count: with 4
// requests the third fastest, so at most it means 3 of the 4.
func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// tracedRequests makes n sequential requests with runtime/trace recording.
func tracedRequests(t *testing.T, url string, n int) ([]time.Duration, *parsedTrace) {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatalf("trace.Start: %v", err)
	}
	latencies := make([]time.Duration, n)
	for i := range latencies {
		start := time.Now()
		code, body := get(t, url)
		latencies[i] = time.Since(start)
		if code != 200 {
			trace.Stop()
			t.Fatalf("GET /work: %d %s", code, body)
		}
	}
	trace.Stop()
	return latencies, parseTrace(t, &buf)
}

// span is a begin–end pair on the trace clock.
type span struct{ begin, end xtrace.Time }

func (s span) duration() time.Duration { return s.end.Sub(s.begin) }

// request is one "request" task and its regions.
type request struct {
	span
	regions map[string]span
}

// parsedTrace is what the tests look at in a trace.
type parsedTrace struct {
	requests     map[xtrace.TaskID]*request
	waitingFuncs map[string]bool // every function on the stack of a goroutine going to Waiting
	samples      int             // StackSample events (CPU profile samples)
}

func parseTrace(t *testing.T, r io.Reader) *parsedTrace {
	t.Helper()
	rd, err := xtrace.NewReader(r)
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	p := &parsedTrace{requests: map[xtrace.TaskID]*request{}, waitingFuncs: map[string]bool{}}
	for {
		ev, err := rd.ReadEvent()
		if errors.Is(err, io.EOF) {
			return p
		}
		if err != nil {
			t.Fatalf("trace: %v", err)
		}
		p.event(ev)
	}
}

func (p *parsedTrace) event(ev xtrace.Event) {
	switch ev.Kind() {
	case xtrace.EventTaskBegin:
		if task := ev.Task(); task.Type == "request" {
			p.requests[task.ID] = &request{span: span{begin: ev.Time()}, regions: map[string]span{}}
		}
	case xtrace.EventTaskEnd:
		if req := p.requests[ev.Task().ID]; req != nil {
			req.end = ev.Time()
		}
	case xtrace.EventRegionBegin, xtrace.EventRegionEnd:
		reg := ev.Region()
		req := p.requests[reg.Task]
		if req == nil {
			return
		}
		s := req.regions[reg.Type]
		if ev.Kind() == xtrace.EventRegionBegin {
			s.begin = ev.Time()
		} else {
			s.end = ev.Time()
		}
		req.regions[reg.Type] = s
	case xtrace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != xtrace.ResourceGoroutine {
			return
		}
		if _, to := st.Goroutine(); to == xtrace.GoWaiting {
			for f := range st.Stack.Frames() {
				p.waitingFuncs[f.Func] = true
			}
		}
	case xtrace.EventStackSample:
		p.samples++
	}
}

// checkRequests checks n requests, each with the four regions, in the order
// the mode prescribes, and that the waits happened beneath the named frames.
func checkRequests(t *testing.T, mode Mode, p *parsedTrace, n int) {
	t.Helper()
	if len(p.requests) != n {
		t.Errorf("trace has %d tasks named \"request\", want %d", len(p.requests), n)
	}
	for id, req := range p.requests {
		if req.end == 0 {
			t.Errorf("task %d: no end", id)
			continue
		}
		if err := checkShape(mode, req); err != nil {
			t.Errorf("task %d: %v", id, err)
		}
	}
	for _, fn := range []string{"callUpstream", "queryDB"} {
		if !p.waitingFuncs[demoPkg+fn] {
			t.Errorf("no goroutine waited beneath %s%s", demoPkg, fn)
		}
	}
}

// checkShape checks one request's regions against its mode.
func checkShape(mode Mode, req *request) error {
	for _, name := range []string{"cpu", "upstream", "db", "shared"} {
		s, ok := req.regions[name]
		if !ok || s.begin == 0 || s.end == 0 {
			return fmt.Errorf("region %q missing or unterminated: %+v", name, req.regions)
		}
		if s.begin < req.begin || s.end > req.end {
			return fmt.Errorf("region %q [%d, %d] outside its task [%d, %d]", name, s.begin, s.end, req.begin, req.end)
		}
	}
	cpu, up, db, shared := req.regions["cpu"], req.regions["upstream"], req.regions["db"], req.regions["shared"]
	if up.duration() < 100*time.Millisecond || db.duration() < 50*time.Millisecond {
		return fmt.Errorf("upstream region %v (want ≥ 100ms), db region %v (want ≥ 50ms)", up.duration(), db.duration())
	}
	if cpu.end > min(up.begin, db.begin) || shared.begin < max(up.end, db.end) {
		return fmt.Errorf("cpu must precede and shared follow the waits: %+v", req.regions)
	}
	overlap := max(up.begin, db.begin) < min(up.end, db.end)
	switch {
	case mode.overlaps() && !overlap:
		return fmt.Errorf("%s: upstream %+v and db %+v do not overlap", mode, up, db)
	case !mode.overlaps() && (overlap || up.end > db.begin):
		return fmt.Errorf("%s: db %+v does not follow upstream %+v", mode, db, up)
	}
	return nil
}

// TestErrors checks that a failed segment answers 500 with its error and is
// counted as such.
func TestErrors(t *testing.T) {
	tier.Timing(t)
	upURL, dbURL := deps(t)
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"upstream refused", Config{UpstreamURL: "http://127.0.0.1:1/"}, "upstream"},
		{"upstream status", Config{UpstreamURL: upURL + "?ms=bad"}, "400 Bad Request"},
		{"bad sql", Config{UpstreamURL: upURL, SQLPrefix: func(context.Context) string { return "NOT SQL " }}, "db: NOT SQL SELECT pg_sleep(0.05)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []Mode{ModeSerial, ModeConcurrent} {
				cfg := tt.cfg
				cfg.Mode, cfg.DBURL, cfg.CPUIters, cfg.PoolSize = mode, dbURL, 100, 2
				_, url := serve(t, cfg)
				code, body := get(t, url+"/work")
				if code != 500 || !strings.Contains(body, tt.wantErr) {
					t.Errorf("%s: GET /work = %d %q, want 500 naming %q", mode, code, body, tt.wantErr)
				}
				_, metrics := get(t, url+"/metrics")
				want := fmt.Sprintf(`latscope_demo_requests_total{code="500",mode="%s"} 1`, mode)
				if !strings.Contains(metrics, want) {
					t.Errorf("%s: /metrics lacks %s", mode, want)
				}
			}
		})
	}
}

// TestSQLPrefix checks that the prefix reaches PostgreSQL: the server's own
// log records the statement with it.
func TestSQLPrefix(t *testing.T) {
	tier.Timing(t)
	pg := pgtest.Start(t)
	up, err := upstream.Start(t.Context(), upstream.Options{Delay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	const comment = "/*traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/ "
	prefix := func(context.Context) string { return comment }
	_, url := serve(t, Config{UpstreamURL: up.URL(), DBURL: pg.URL(), CPUIters: 100, SQLPrefix: prefix})
	if code, body := get(t, url+"/work"); code != 200 {
		t.Fatalf("GET /work: %d %s", code, body)
	}
	want := comment + "SELECT pg_sleep(0.05)"
	deadline := time.Now().Add(10 * time.Second)
	for {
		log := readLog(t, pg.LogFile)
		if i := strings.Index(log, want); i >= 0 {
			start := strings.LastIndexByte(log[:i], '\n') + 1
			end := i + strings.IndexByte(log[i:], '\n')
			t.Logf("logged: %s", log[start:max(end, i)])
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the PostgreSQL log never showed %q; it has:\n%s", want, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readLog(t *testing.T, logFile func() (string, error)) string {
	t.Helper()
	path, err := logFile()
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("PostgreSQL log: %v", err)
	}
	return string(b)
}

// TestMetricsAndPprof checks /metrics and /healthz and that a CPU profile
// taken with /debug/pprof/profile during /debug/pprof/trace puts CPU samples
// into the trace, as the lab relies on.
func TestMetricsAndPprof(t *testing.T) {
	tier.Timing(t)
	upURL, dbURL := deps(t)
	// Calibrated work and four clients give about 13 % of a CPU, some 13
	// samples a second at the profiler's 100 Hz: none at all would be a bug.
	_, url := serve(t, Config{Mode: ModeConcurrent, UpstreamURL: upURL, DBURL: dbURL})
	if code, body := get(t, url+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	stopLoad := make(chan struct{})
	loadDone := make(chan struct{})
	go func() { // four clients, so the shared section sees some contention
		defer close(loadDone)
		for {
			select {
			case <-stopLoad:
				return
			default:
			}
			for range 3 {
				go fetch(url + "/work")
			}
			if code, body, err := fetch(url + "/work"); code != 200 {
				t.Errorf("GET /work: %d %s %v", code, body, err)
				return
			}
		}
	}()
	profile := make(chan string, 1)
	go func() {
		resp, err := http.Get(url + "/debug/pprof/profile?seconds=2")
		if err != nil {
			profile <- err.Error()
			return
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		profile <- resp.Status
	}()
	time.Sleep(200 * time.Millisecond) // let the profile start first
	code, tr := get(t, url+"/debug/pprof/trace?seconds=1")
	close(stopLoad)
	<-loadDone
	if code != 200 {
		t.Fatalf("/debug/pprof/trace: %d %s", code, tr)
	}
	p := parseTrace(t, strings.NewReader(tr))
	if status := <-profile; status != "200 OK" {
		t.Errorf("/debug/pprof/profile: %s", status)
	}
	if len(p.requests) == 0 {
		t.Error("the pprof trace has no request tasks")
	}
	if p.samples == 0 {
		t.Error("the pprof trace has no CPU samples while a CPU profile ran")
	}
	_, metrics := get(t, url+"/metrics")
	for _, want := range []string{
		"process_cpu_seconds_total ",
		"go_goroutines ",
		`latscope_demo_requests_total{code="200",mode="concurrent"} `,
		`latscope_demo_request_duration_seconds_count{mode="concurrent"} `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
