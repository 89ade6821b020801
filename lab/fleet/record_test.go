package fleet

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/pgcluster"
	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/lab"
)

// RecordEnv names the directory TestRecordCases writes to.
const RecordEnv = "LATSCOPE_FLEET_RECORD"

// serveChildEnv makes TestServeChild run one instance of the service.
const serveChildEnv = "LATSCOPE_FLEET_SERVE_CHILD"

// TestServeChild is the instance process of TestRecordCases: this test
// binary, run again with serveChildEnv set and `fleet-serve` flags
// after "--".
func TestServeChild(t *testing.T) {
	if os.Getenv(serveChildEnv) != "1" {
		t.Skip("the instance process of TestRecordCases")
	}
	args := flag.Args()
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") { // "fleet-serve"
		args = args[1:]
	}
	cfg := DefaultServeConfig
	fs := flag.NewFlagSet("fleet-serve", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		ch := make(chan os.Signal, 1)
		signalNotify(ch)
		<-ch
		cancel()
	}()
	if err := Serve(ctx, cfg, os.Stdout); err != nil {
		t.Fatal(err)
	}
}

// Case is one window of a recording, for internal/triage's tests: the
// triage to run over it and what it must find.
type Case struct {
	Name      string        `json:"name"`
	Signal    string        `json:"signal"`
	Start     time.Time     `json:"start"`
	End       time.Time     `json:"end"`
	Step      time.Duration `json:"step_ns"`
	Threshold time.Duration `json:"threshold_ns"`
	// Route is triage's --route ("" = every route).
	Route string `json:"route,omitempty"`
	Truth Truth  `json:"truth"`
	What  string `json:"what"`
}

// Recording is a recorded run: its series (OpenMetrics, gzipped, beside
// it) and its cases.
type Recording struct {
	OpenMetrics string `json:"openmetrics"`
	Cases       []Case `json:"cases"`
}

// TestRecordCases runs the fleet (minute 2 s) through faults the lab's
// phases do not have and keeps its series and windows for
// internal/triage's tests (LATSCOPE_FLEET_RECORD=DIR; root, PostgreSQL
// and Prometheus; about 5 minutes):
//
//   - hover: the shared table locked 60 ms of every 500 ms for 12 minutes,
//     so that the DB-call p95 hovers around the threshold: one continuous
//     fault, no period;
//   - lock10: the table locked 1 s of every 10 s (every 5 minutes), 8
//     times: a period of 10 s (at a 5 s step the lock falls in every
//     other step);
//   - slow: instance A spinning 2 goroutines for 10 minutes (no quota):
//     its DB calls far slower than its peers', under the threshold;
//   - thin: the load cut to 2 clients per route and instance (about 15
//     requests per step), one request of instance C 150 ms slower twice
//     (a stray, the process as fast as ever);
//   - busy: no fault, a CPU burner per core in this process.
func TestRecordCases(t *testing.T) {
	dir := recordDir(t)
	ctx := context.Background()
	c := ShortConfig
	c.Minute = 2 * time.Second
	out := t.TempDir()
	env := &lab.Env{Out: out, Log: testWriter{t}, Command: func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestServeChild$", "--"}, args...)...)
		cmd.Env = append(os.Environ(), serveChildEnv+"=1")
		return cmd
	}}
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Settings: map[string]string{"log_min_duration_statement": "-1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Stop()
	conn, err := pgx.Connect(ctx, cluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := createTable(ctx, conn); err != nil {
		t.Fatal(err)
	}
	r := &runner{env: env, cfg: c, conn: conn}
	defer r.stopFleet()
	if err := r.startFleet(ctx, cluster.URL()); err != nil {
		t.Fatal(err)
	}
	r.prom, err = StartPrometheus(ctx, PromOptions{Job: Job, Targets: r.addrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.prom.Stop()
	if err := waitUp(ctx, r.prom.URL, 3, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	ld := startLoad(ctx, r.addrs(), c, time.Hour)
	lab.Sleep(ctx, c.minutes(2))
	a, cInst := r.fleet[0], r.fleet[2]
	var cases []Case
	window := func(name, signal string, minutes int, thr time.Duration, truth Truth, what string, run func(start time.Time)) {
		start := time.Now().Add(c.Minute - 1).Truncate(c.Minute)
		sleepUntil(ctx, start)
		t.Logf("%s: %s", name, what)
		run(start)
		end := start.Add(c.minutes(float64(minutes)))
		sleepUntil(ctx, end)
		cases = append(cases, Case{Name: name, Signal: signal, Start: start, End: end, Step: c.Minute, Threshold: thr, Truth: truth, What: what})
		sleepUntil(ctx, end.Add(c.minutes(2)))
	}
	window("hover", "db", 20, c.Threshold, Truth{Scope: "shared", DBPath: "db-only"},
		"the table locked 60 ms of every 500 ms from minute 4 to minute 16", func(start time.Time) {
			sleepUntil(ctx, start.Add(c.minutes(4)))
			if err := lockCycle(ctx, conn, 60*time.Millisecond, 440*time.Millisecond, start.Add(c.minutes(16))); err != nil {
				t.Error(err)
			}
		})
	window("lock10", "db", 44, c.Threshold, Truth{Scope: "shared", DBPath: "db-only", Period: 10 * time.Second},
		"the table locked 1 s of every 10 s from minute 2.65, 8 times", func(start time.Time) {
			for k := range 8 {
				sleepUntil(ctx, start.Add(c.minutes(2.65)+time.Duration(k)*10*time.Second))
				if err := lockCycle(ctx, conn, time.Second, 0, time.Now().Add(time.Millisecond)); err != nil {
					t.Error(err)
				}
			}
		})
	window("slow", "db", 14, c.Threshold, Truth{Scope: "local", Instance: a.addr},
		"instance A spinning 2 goroutines from minute 2 to minute 12", func(start time.Time) {
			sleepUntil(ctx, start.Add(c.minutes(2)))
			if err := postBurst(ctx, a.addr, c.minutes(10), 2); err != nil {
				t.Error(err)
			}
		})
	// thin: the load cut to 2 clients per route and instance
	if err := ld.stop(); err != nil {
		t.Error(err)
	}
	thin := c
	thin.DBClients, thin.NoDBClients = 2, 2
	ld = startLoad(ctx, r.addrs(), thin, time.Hour)
	lab.Sleep(ctx, c.minutes(2))
	window("thin", "request", 20, 200*time.Millisecond, Truth{Scope: "none"},
		"2 clients per route and instance; one request of instance C 150 ms slower at minutes 5.3 and 13.6 (POST /stray)", func(start time.Time) {
			for _, m := range []float64{5.3, 13.6} {
				sleepUntil(ctx, start.Add(c.minutes(m)))
				if err := postStray(ctx, cInst.addr, 150*time.Millisecond); err != nil {
					t.Error(err)
				}
			}
		})
	if err := ld.stop(); err != nil {
		t.Error(err)
	}
	ld = startLoad(ctx, r.addrs(), c, time.Hour)
	lab.Sleep(ctx, c.minutes(2))
	stopBurn := make(chan struct{})
	window("busy", "db", 14, c.Threshold, Truth{Scope: "none"},
		"no fault; a CPU burner per core in the recording process", func(time.Time) {
			for range 2 {
				go func() {
					for {
						select {
						case <-stopBurn:
							return
						default:
							spin(10 * time.Millisecond)
						}
					}
				}()
			}
		})
	close(stopBurn)
	if err := ld.stop(); err != nil {
		t.Error(err)
	}
	rename := map[string]string{}
	for _, m := range r.fleet {
		rename[m.addr] = strings.ToLower(m.name) + ":8080"
	}
	for i := range cases {
		if n, ok := rename[cases[i].Truth.Instance]; ok {
			cases[i].Truth.Instance = n
		}
	}
	if err := writeRecording(ctx, dir, "fleet-cases", r.prom.URL, began.Add(-30*time.Second), time.Now(), rename, cases); err != nil {
		t.Fatal(err)
	}
}

// TestRecordUpstream runs the fleet (minute 2 s) with a third route,
// RouteQuote, whose requests call one upstream shared by every instance
// through the agent's transport and make no DB call, and slows the
// upstream from 5 to 300 ms for 6 minutes: a slow dependency that is not
// the database (issue #35). It keeps the series and two windows for
// internal/triage's tests as fleet-upstream (LATSCOPE_FLEET_RECORD=DIR;
// root, PostgreSQL and Prometheus; about a minute):
//
//   - upstream-request: the request p95 over 200 ms on every instance:
//     shared, the outbound calls of GET /quote;
//   - upstream-db: the same window with the default signal, whose DB calls
//     did not slow: no bad step, and it must say what it did not watch.
func TestRecordUpstream(t *testing.T) {
	recordUpstream(t, "fleet-upstream", "upstream", 20, "", false, true)
}

// TestRecordGC runs the fleet (minute 2 s) and makes instance A allocate
// heavily for 6 minutes (POST /alloc: 2 goroutines replacing the nodes of
// a live heap of small objects), its peers not: a GC-bound instance whose
// DB calls slow far over its peers' but under the threshold (issue #35,
// item 5; the measured case was 17–39 ms against 1 ms). It keeps
// the series, with the agent's runtime/metrics counters, and one window
// for internal/triage's tests as fleet-gc (recordLocal; about 55 s).
//
//   - gc: local to A by the peer rule, cause gc (its collector's share of
//     its CPU rose; no throttling, steal or stall explains it).
func TestRecordGC(t *testing.T) {
	recordLocal(t, "fleet-gc", "gc", "instance A allocating in 2 goroutines (POST /alloc, a live heap of 2^18 small objects) from minute 10 to minute 16; its peers not", "gc", 0,
		func(ctx context.Context, addr string, d time.Duration) error { return postAlloc(ctx, addr, d, 2) })
}

// TestRecordSpin is TestRecordGC's control: instance A spinning 2
// goroutines (POST /burn) instead of allocating — CPU work of the process
// that is not its collector — kept as fleet-spin, so that triage's test
// can check that it is not named gc (about 55 s).
func TestRecordSpin(t *testing.T) {
	recordLocal(t, "fleet-spin", "spin", "instance A spinning 2 goroutines (POST /burn) from minute 10 to minute 16; its peers not", "", 0,
		func(ctx context.Context, addr string, d time.Duration) error { return postBurst(ctx, addr, d, 2) })
}

// TestRecordGCLoaded is TestRecordGC with a CPU burner per core in this
// process for the whole run (issue #35's "with a burner per core"; run 3
// of the default lab fleet named it `unknown` before the GC baseline left
// out the fault's own steps), kept as fleet-gc-loaded (about 55 s).
//
//   - gc-loaded: local to A, cause gc.
func TestRecordGCLoaded(t *testing.T) {
	recordLocal(t, "fleet-gc-loaded", "gc-loaded", fmt.Sprintf("instance A allocating in 2 goroutines (POST /alloc, a live heap of 2^18 small objects) from minute 10 to minute 16; its peers not; %d CPU burners (one per core) in the recording process throughout", runtime.NumCPU()), "gc", runtime.NumCPU(),
		func(ctx context.Context, addr string, d time.Duration) error { return postAlloc(ctx, addr, d, 2) })
}

// recordLocal runs the fleet (minute 2 s), starts fault on instance A for
// 6 minutes after 10 quiet ones (the runtime updates its CPU classes at
// the end of each collection only, so a step without one adds nothing to
// the GC share: the quiet minutes give the baseline its steps with a
// collection), and keeps the series and one window, case, as name
// (LATSCOPE_FLEET_RECORD=DIR; root, PostgreSQL and Prometheus). With
// burners > 0, that many CPU burners run in this process from before the
// load starts until it stops.
func recordLocal(t *testing.T, name, kase, what, cause string, burners int, fault func(ctx context.Context, addr string, d time.Duration) error) {
	tier.Timing(t)
	dir := recordDir(t)
	ctx := context.Background()
	c := ShortConfig
	c.Minute = 2 * time.Second
	r, stop := startRecordFleet(t, ctx, c, "")
	defer stop()
	if burners > 0 {
		defer startSpinners(burners)()
	}
	began := time.Now()
	ld := startLoad(ctx, r.addrs(), c, time.Hour)
	lab.Sleep(ctx, c.minutes(2))
	start := time.Now().Add(c.Minute - 1).Truncate(c.Minute)
	sleepUntil(ctx, start)
	a := r.fleet[0]
	t.Logf("%s: %s", kase, what)
	sleepUntil(ctx, start.Add(c.minutes(10)))
	if err := fault(ctx, a.addr, c.minutes(6)); err != nil {
		t.Error(err)
	}
	end := start.Add(c.minutes(20))
	sleepUntil(ctx, end)
	if err := ld.stop(); err != nil {
		t.Error(err)
	}
	rename := map[string]string{}
	for _, m := range r.fleet {
		rename[m.addr] = strings.ToLower(m.name) + ":8080"
	}
	cases := []Case{{Name: kase, Signal: "db", Start: start, End: end, Step: c.Minute, Threshold: c.Threshold,
		Truth: Truth{Scope: "local", Instance: rename[a.addr], Cause: cause}, What: what}}
	if err := writeRecording(ctx, dir, name, r.prom.URL, began.Add(-10*time.Second), time.Now(), rename, cases); err != nil {
		t.Fatal(err)
	}
}

// startRecordFleet starts PostgreSQL with the table, the three instances
// (calling upstream on RouteQuote when it is not "") and a Prometheus
// scraping them, as TestRecordCases does; stop ends them all.
func startRecordFleet(t *testing.T, ctx context.Context, c Config, upstream string) (*runner, func()) {
	t.Helper()
	env := &lab.Env{Out: t.TempDir(), Log: testWriter{t}, Command: func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestServeChild$", "--"}, args...)...)
		cmd.Env = append(os.Environ(), serveChildEnv+"=1")
		return cmd
	}}
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	fail := func(err error) {
		stop()
		t.Fatal(err)
	}
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Settings: map[string]string{"log_min_duration_statement": "-1"}})
	if err != nil {
		t.Fatal(err)
	}
	stops = append(stops, func() { cluster.Stop() })
	conn, err := pgx.Connect(ctx, cluster.URL())
	if err != nil {
		fail(err)
	}
	stops = append(stops, func() { conn.Close(context.Background()) })
	if err := createTable(ctx, conn); err != nil {
		fail(err)
	}
	r := &runner{env: env, cfg: c, conn: conn, upstream: upstream}
	stops = append(stops, r.stopFleet)
	if err := r.startFleet(ctx, cluster.URL()); err != nil {
		fail(err)
	}
	r.prom, err = StartPrometheus(ctx, PromOptions{Job: Job, Targets: r.addrs()})
	if err != nil {
		fail(err)
	}
	stops = append(stops, func() { r.prom.Stop() })
	if err := waitUp(ctx, r.prom.URL, 3, 30*time.Second); err != nil {
		fail(err)
	}
	return r, stop
}

// writeRecording writes NAME.om.gz (the series of [from, to]) and
// NAME.cases.json under dir.
func writeRecording(ctx context.Context, dir, name, prom string, from, to time.Time, rename map[string]string, cases []Case) error {
	var om bytes.Buffer
	if err := ExportOpenMetrics(ctx, prom, Job, from, to, rename, &om); err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(om.Bytes())
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, name+".om.gz"), gz.Bytes(), 0o644); err != nil {
		return err
	}
	b, err := json.MarshalIndent(Recording{OpenMetrics: name + ".om.gz", Cases: cases}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".cases.json"), append(b, '\n'), 0o644)
}

// testWriter logs lines to t.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// signalNotify relays SIGTERM and SIGINT to ch.
func signalNotify(ch chan os.Signal) { signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT) }

// postStray asks the instance at addr to make its next request of
// RouteNoDB d slower.
func postStray(ctx context.Context, addr string, d time.Duration) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/stray?for="+d.String(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("stray on %s: %s", addr, resp.Status)
	}
	return nil
}

// startSpinners starts n goroutines in this process that spin until the
// returned function is called (a CPU burner per goroutine, as
// TestRecordCases's busy case); the function stops them.
func startSpinners(n int) func() {
	done := make(chan struct{})
	for range n {
		go func() {
			for {
				select {
				case <-done:
					return
				default:
					spin(10 * time.Millisecond)
				}
			}
		}()
	}
	return func() { close(done) }
}

// TestRecordThinUpstream is TestRecordUpstream with 2 clients per
// instance on RouteQuote (about 19 requests a 2 s step, 8 while slowed),
// triaged alone (--route 'GET /quote'): a thin route whose slow upstream
// rule 3 must still name (issue #35, the lab's thin phase). Kept as
// fleet-thin-upstream (LATSCOPE_FLEET_RECORD=DIR; root, PostgreSQL and
// Prometheus; about 40 s):
//
//   - thin-upstream: shared, the outbound calls of GET /quote.
func TestRecordThinUpstream(t *testing.T) {
	recordUpstream(t, "fleet-thin-upstream", "thin-upstream", 2, RouteQuote, false, false)
}

// TestRecordUpstreamLate is TestRecordUpstream in the shape of the lab's
// run 1 (docs/triage.md, "In the fleet lab"): the clients of RouteQuote
// (20 per instance) start with the window and the upstream slows from
// minute 2 to minute 6 of 8, so that the route's outbound series has too
// few good steps for a baseline (its first step has nothing to gain on).
// Kept as fleet-upstream-late (about 30 s):
//
//   - upstream-late: shared, the outbound calls of GET /quote (what the
//     test set; triage may only say it cannot compare the route).
func TestRecordUpstreamLate(t *testing.T) {
	recordUpstream(t, "fleet-upstream-late", "upstream-late", 20, "", true, false)
}

// recordUpstream runs the fleet (minute 2 s) with quote clients per
// instance on RouteQuote beside the usual load on /db and /nodb, slows the
// upstream of RouteQuote from 5 to 300 ms, and keeps the series and one
// request-signal window (threshold 200 ms, triage's --route route) as
// name. Late: the quote clients start with the window and the upstream is
// slow from minute 2 to minute 6 of 8; else they start with the rest of
// the load and it is slow from minute 4 to minute 10 of 14. withDB keeps
// the same window with the default signal too, as kase-db (the request
// one then as kase-request).
func recordUpstream(t *testing.T, name, kase string, quote int, route string, late, withDB bool) {
	tier.Timing(t)
	dir := recordDir(t)
	ctx := context.Background()
	c := ShortConfig
	c.Minute = 2 * time.Second
	up, err := StartUpstream(ctx, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	r, stop := startRecordFleet(t, ctx, c, up.URL)
	defer stop()
	from, to, minutes := 4.0, 10.0, 14
	if late {
		from, to, minutes = 2, 6, 8
	}
	began := time.Now()
	base := c
	if !late {
		base.QuoteClients = quote
	}
	ld := startLoad(ctx, r.addrs(), base, time.Hour)
	lab.Sleep(ctx, c.minutes(2))
	start := time.Now().Add(c.Minute - 1).Truncate(c.Minute)
	sleepUntil(ctx, start)
	when := "with the rest of the load"
	var ql *load
	if late {
		q := c
		q.DBClients, q.NoDBClients, q.QuoteClients = 0, 0, quote
		ql = startLoad(ctx, r.addrs(), q, time.Hour)
		when = "with the window"
	}
	what := fmt.Sprintf("%d clients per instance on GET /quote, starting %s; its upstream (every instance's) 5 → 300 ms from minute %g to minute %g; no DB call on that route",
		quote, when, from, to)
	if route != "" {
		what += "; triaged with --route '" + route + "'"
	}
	t.Logf("%s: %s", kase, what)
	sleepUntil(ctx, start.Add(c.minutes(from)))
	up.SetDelay(300 * time.Millisecond)
	sleepUntil(ctx, start.Add(c.minutes(to)))
	up.SetDelay(5 * time.Millisecond)
	end := start.Add(c.minutes(float64(minutes)))
	sleepUntil(ctx, end)
	if ql != nil {
		if err := ql.stop(); err != nil {
			t.Error(err)
		}
	}
	if err := ld.stop(); err != nil {
		t.Error(err)
	}
	cases := []Case{{Name: kase, Signal: "request", Start: start, End: end, Step: c.Minute, Threshold: 200 * time.Millisecond, Route: route,
		Truth: Truth{Scope: "shared", Dependency: "outbound", Route: RouteQuote}, What: what}}
	if withDB {
		cases[0].Name = kase + "-request"
		cases = append(cases, Case{Name: kase + "-db", Signal: "db", Start: start, End: end, Step: c.Minute, Threshold: c.Threshold,
			Truth: Truth{Scope: "none"}, What: what + "; the default signal (DB calls)"})
	}
	rename := map[string]string{}
	for _, m := range r.fleet {
		rename[m.addr] = strings.ToLower(m.name) + ":8080"
	}
	if err := writeRecording(ctx, dir, name, r.prom.URL, began.Add(-10*time.Second), time.Now(), rename, cases); err != nil {
		t.Fatal(err)
	}
}

// recordDir is the directory a recording test writes to (RecordEnv); it
// skips the test, saying why, when that is unset or the test is not root.
func recordDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(RecordEnv)
	if dir == "" {
		t.Skip(RecordEnv + "=DIR records the fleet cases of internal/triage")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (cgroups)")
	}
	return dir
}
