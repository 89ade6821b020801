package triage

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/tier"
	"github.com/latscope/latscope/internal/triage/promtest"
)

// fleetRecording is a real run of the fleet lab (lab/fleet: the lab's
// phases, or the cases of its TestRecord* tests), kept as testdata/NAME.om.gz (its
// series, for recording again) and NAME.cases.json (its windows and their
// truth); the answers are replayed from NAME.prom.json.gz.
type fleetRecording struct {
	OpenMetrics string      `json:"openmetrics"`
	Cases       []fleetCase `json:"cases"`
}

type fleetCase struct {
	Name      string        `json:"name"`
	Signal    string        `json:"signal"`
	Start     time.Time     `json:"start"`
	End       time.Time     `json:"end"`
	Step      time.Duration `json:"step_ns"`
	Threshold time.Duration `json:"threshold_ns"`
	// Route is triage's --route ("" = every route).
	Route string `json:"route"`
	Truth struct {
		Scope    string        `json:"scope"`
		Instance string        `json:"instance"`
		DBPath   string        `json:"db_path"`
		Period   time.Duration `json:"period_ns"`
		Cause    string        `json:"cause"`
		// Dependency is what slowed ("database", "outbound", "host"; "":
		// not judged), Route the route whose outbound calls did.
		Dependency string `json:"dependency"`
		Route      string `json:"route"`
	} `json:"truth"`
	What string `json:"what"`
}

// fleetExpect is what a case must show beyond its truth.
type fleetExpect struct {
	// period overrides the truth's period (-1: keep it): what an honest
	// test can claim from the data.
	period time.Duration
	rule   string // the verdict's rule, "" = not checked
	// quantileBelow: the signal fell back below the signal's own
	// percentile.
	quantileBelow bool
	// noWarning: no warning contains it.
	noWarning string
	// dep is the verdict's dependency ("" = not checked), beyond the
	// truth's (the recordings made before issue #35 have none).
	dep Dependency
	// checkDep: dep is checked.
	checkDep bool
	// unknownForOutbound accepts DepUnknown in place of the truth's
	// outbound dependency (never another one) when the truth's route is
	// then named as present but not comparable: the data could not tell
	// (a route whose series began with the window has too few good steps
	// for a baseline), and saying so is right where host would be wrong.
	unknownForOutbound bool
	// check runs further checks.
	check func(t *testing.T, r *Report)
}

// fleetExpectations are the checks of each recording's cases beyond
// their truth, by "recording/case".
var fleetExpectations = map[string]fleetExpect{
	// The lab's throttle phase with 3 bursts every 4 minutes (before
	// issue #35): runs placed at random in their span fall as evenly 1
	// time in 5, so no period passes the test.
	"fleet-3bursts/throttle-db":  {period: 0, rule: "threshold", dep: DepHost, checkDep: true},
	"fleet-3bursts/lock-db":      {period: -1, dep: DepDatabase, checkDep: true},
	"fleet-3bursts/stop-request": {period: -1, dep: DepHost, checkDep: true},
	"fleet-3bursts/none-db":      {period: -1, noWarning: "stall probe"},
	"fleet-3bursts/none-request": {period: -1, noWarning: "stall probe",
		check: func(t *testing.T, r *Report) {
			if r.Quantile != 0.95 { // about 380 requests per 2 s step: under the p99's 500
				t.Errorf("quantile %v, want 0.95", r.Quantile)
			}
		}},
	// The lab's run with 6 bursts (issue #35), quiet host.
	"fleet-quiet/throttle-db": {period: -1, rule: "threshold", dep: DepHost, checkDep: true},
	"fleet-quiet/lock-db":     {period: -1, dep: DepDatabase, checkDep: true},
	// C stopped for a minute: the stall probe's one wake-up 2 s late in
	// the window's only step with a late wake-up (the usual lateness of a
	// wake-up, taken from those steps, was that stall itself: the step was
	// missed until one of the n wake-ups was allowed to be the long one).
	"fleet-quiet/stop-request": {period: -1, rule: "held", dep: DepHost, checkDep: true},
	"fleet-quiet/none-db":      {period: -1, noWarning: "stall probe"},
	"fleet-quiet/none-request": {period: -1, noWarning: "stall probe"},
	// The same with a CPU burner per core: the lock phase's DB calls too
	// few for a p95 in more than a tenth of the steps (the lock holds them),
	// the p90 said; no hidden-stall warning without a fault.
	"fleet-loaded/throttle-db": {period: -1, rule: "threshold", dep: DepHost, checkDep: true},
	// The DB-call series is the signal itself at the p90 (rule 3 compares
	// at the signal's percentile; it kept the p95 from before the
	// step-down), and the outbound percentile is asked again at it.
	"fleet-loaded/lock-db": {period: -1, dep: DepDatabase, checkDep: true, check: func(t *testing.T, r *Report) {
		if e := r.Dependency; e.Quantile != 0.9 || !strings.Contains(e.Reason, "DB-call p90 ") || !askedOutboundAt(r, "0.9") {
			t.Errorf("dependency quantile %v, reason %q: want the p90, the outbound asked at it", e.Quantile, e.Reason)
		}
	}},
	"fleet-loaded/stop-request": {period: -1, rule: "held", dep: DepHost, checkDep: true},
	"fleet-loaded/none-db":      {period: -1, noWarning: "stall probe"},
	"fleet-loaded/none-request": {period: -1, noWarning: "stall probe"},
	// TestRecordCases (lab/fleet): a lock hovering at the threshold for 12
	// minutes — one continuous fault, no period, no occurrence planned.
	"fleet-cases/hover": {period: -1, rule: "threshold", dep: DepDatabase, checkDep: true},
	// A lock every 10 s at a 2 s step: every 10 s (not 20 s), p ≤ 0.01.
	"fleet-cases/lock10": {period: -1, rule: "threshold", dep: DepDatabase, checkDep: true, check: func(t *testing.T, r *Report) {
		if w := r.When; w.OnPhase != w.Clusters || !(w.PValue <= PeriodAlpha) {
			t.Errorf("when %+v: want every run on the phase, p ≤ %g", w, PeriodAlpha)
		}
	}},
	// Instance A spinning 2 goroutines: its DB calls 5–20 times its
	// peers', mostly under the 30 ms threshold: the peer rule finds it.
	"fleet-cases/slow": {period: -1, check: func(t *testing.T, r *Report) {
		a := r.instance("a:8080")
		if len(a.Peer) < 3 || !strings.Contains(r.Verdict.Rule, "peer") || !strings.Contains(r.Verdict.Line, "by the peer rule") {
			t.Errorf("a:8080 peer steps %v, rule %q: want 3 or more, named", a.Peer, r.Verdict.Rule)
		}
		for _, ir := range r.Instances {
			if ir.Name != "a:8080" && len(ir.Bad) > 0 {
				t.Errorf("%s bad in %v", ir.Name, ir.Bad)
			}
		}
		// Recorded before the agent exported the runtime's CPU classes:
		// spinning goroutines, not the collector, and triage cannot tell.
		if !a.GC.Absent || r.Verdict.Cause == "gc" || !strings.Contains(r.Verdict.Line, "GC cannot be told apart") {
			t.Errorf("cause %q, GC %+v: want GC absent and said so", r.Verdict.Cause, a.GC)
		}
		// the writers name it too (triagereport's TestFleetWriters)
		named := false
		for _, b := range r.BadSteps {
			named = named || slices.Contains(r.RuleNames(b), "a:8080 (peer)")
		}
		if !named || r.Verdict.Rule != "threshold+peer" && r.Verdict.Rule != "peer" {
			t.Errorf("rule %q: the peer rule is not named in a bad step's instances or the verdict's rule", r.Verdict.Rule)
		}
	}},
	// 2 clients per route and instance (about 15 requests a step), two
	// stray slow requests on C: the p99 of so few is their largest, which
	// made "local to c:8080" before; the signal falls back and says so.
	"fleet-cases/thin": {period: -1, quantileBelow: true, check: func(t *testing.T, r *Report) {
		if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "too few requests per step for the p99") {
			t.Errorf("warnings %q: want the fallback said first", r.Warnings)
		}
		// rule 3's dependencies follow the signal down
		if q := strconv.FormatFloat(r.Quantile, 'g', -1, 64); !askedOutboundAt(r, q) {
			t.Errorf("the outbound quantile was not asked at the signal's %s: %q", q, r.Queries)
		}
	}},
	// No fault, a CPU burner per core: no hidden-stall warning, and the
	// requests the DB-call signal does not watch did not slow.
	"fleet-cases/busy": {period: -1, noWarning: "stall probe", check: func(t *testing.T, r *Report) {
		if u := r.Unwatched; u == nil || u.Slowed != 0 || len(u.Outbound) != 0 || !strings.Contains(r.Verdict.Line, "not watched by the DB-call p95: requests without DB calls (") || r.Verdict.Next != "" {
			t.Errorf("unwatched %+v, line %q, next %q: want them said, none slowed, no next step", u, r.Verdict.Line, r.Verdict.Next)
		}
	}},
	// TestRecordUpstream (lab/fleet, issue #35): the upstream of GET
	// /quote, shared by every instance, 5 → 300 ms for 6 minutes, no DB
	// call on that route. The request signal finds it shared and names
	// the route's outbound calls; the next step is not dbwait.
	"fleet-upstream/upstream-request": {period: 0, rule: "threshold", check: func(t *testing.T, r *Report) {
		v := r.Verdict
		if strings.Contains(v.Line, "the host or the process") || strings.Contains(v.Next, "dbwait") ||
			!strings.Contains(v.Next, "latscope analyze --task 'GET /quote' SNAPSHOT") || strings.Contains(v.Next, "any of") {
			t.Errorf("verdict %q, next %q: want the outbound route, on one instance, without dbwait or the host", v.Line, v.Next)
		}
		if e := r.Dependency; e.DB.Compared == 0 || e.DB.rose() || len(e.Outbound) != 1 || e.Outbound[0].Rose != e.Outbound[0].Compared {
			t.Errorf("dependency %+v: want the DB calls compared and not risen, GET /quote risen in every pair", e)
		}
		if v.Dependency != DepOutbound || v.Route != "GET /quote" {
			t.Errorf("dependency %s, route %q: want outbound, GET /quote", v.Dependency, v.Route)
		}
	}},
	// TestRecordGC (lab/fleet, issue #35 item 5): instance A allocating in
	// 2 goroutines, its DB calls far over its peers' and mostly under the
	// threshold: the peer rule finds it, and the collector's share of its
	// CPU names GC as the cause, with the numbers and a next step for it.
	"fleet-gc/gc": {period: -1, check: func(t *testing.T, r *Report) {
		v, a := r.Verdict, r.instance("a:8080")
		if !strings.Contains(v.Rule, "peer") || len(a.Peer) == 0 {
			t.Errorf("rule %q, a:8080 peer steps %v: want the peer rule", v.Rule, a.Peer)
		}
		g := a.GC
		if g.Absent || !g.Rose || !(g.Bad-g.Good >= GCShareRise) {
			t.Errorf("GC evidence %+v: want the share risen", g)
		}
		if want := "gc (" + gcPhrase(g); !strings.Contains(v.Line, want) || !strings.Contains(v.Line, " → ") {
			t.Errorf("verdict %q: want %q", v.Line, want)
		}
		if !strings.Contains(v.Next, "GC assist") || !strings.Contains(v.Next, "GOMEMLIMIT") || strings.Contains(v.Next, "dbwait") {
			t.Errorf("next %q: want the GC waits, a heap profile and GOGC/GOMEMLIMIT, not dbwait", v.Next)
		}
		if v.Cause != "gc" || a.Cause != "gc" || math.IsNaN(g.Good) {
			t.Errorf("cause %q, a:8080's %q, GC share in the good steps %v: want gc, with a baseline", v.Cause, a.Cause, g.Good)
		}
	}},
	// TestRecordSpin (lab/fleet): its control, instance A spinning 2
	// goroutines instead — CPU work of the process that is not its
	// collector, recorded with the runtime's counters: the share did not
	// rise, and the cause is not gc.
	"fleet-spin/spin": {period: -1, check: func(t *testing.T, r *Report) {
		v, a := r.Verdict, r.instance("a:8080")
		if g := a.GC; g.Absent || g.Rose || v.Cause == "gc" || !strings.Contains(v.Line, "not risen") || strings.Contains(v.Next, "GOGC") {
			t.Errorf("cause %q, GC %+v, next %q: want the share measured, not risen, and no GC cause", v.Cause, g, v.Next)
		}
		if !strings.Contains(v.Rule, "peer") {
			t.Errorf("rule %q: want the peer rule", v.Rule)
		}
	}},
	// TestRecordThinUpstream (lab/fleet, issue #35 WP2): 2 clients per
	// instance on GET /quote (about 19 requests a 2 s step, 8 while
	// slowed), triaged with --route 'GET /quote', its upstream 5 → 300 ms
	// for 6 minutes: the signal steps down, rule 3 follows it and names the
	// route's outbound calls at that percentile.
	"fleet-thin-upstream/thin-upstream": {period: -1, quantileBelow: true, rule: "threshold", check: func(t *testing.T, r *Report) {
		q := strconv.FormatFloat(r.Quantile, 'g', -1, 64)
		if e := r.Dependency; e.Quantile != r.Quantile || !strings.Contains(e.Reason, "outbound p"+strconv.Itoa(int(math.Round(100*r.Quantile)))+" ") || !askedOutboundAt(r, q) {
			t.Errorf("dependency quantile %v, reason %q: want the signal's %s, named, the outbound asked at it", e.Quantile, e.Reason, q)
		}
		if e := r.Dependency; len(e.Outbound) != 1 || e.Outbound[0].Rose != e.Outbound[0].Compared || e.Outbound[0].Compared == 0 {
			t.Errorf("outbound %+v: want GET /quote risen in every pair compared", e.Outbound)
		}
		if v := r.Verdict; !strings.Contains(v.Next, "latscope analyze --task 'GET /quote' SNAPSHOT") || strings.Contains(v.Next, "dbwait") {
			t.Errorf("next %q: want the route's outbound calls, not dbwait", v.Next)
		}
	}},
	// TestRecordGCLoaded (lab/fleet, issue #35 WP2): TestRecordGC with a CPU
	// burner per core throughout (run 3's shape, cause unknown before the
	// GC baseline left out the fault's own steps): still local to A, gc,
	// with the allocating steps the peer rule left good out of the baseline.
	"fleet-gc-loaded/gc-loaded": {period: -1, check: func(t *testing.T, r *Report) {
		v, g := r.Verdict, r.instance("a:8080").GC
		if g.Absent || !g.Rose || g.Throughout || g.LeftOut == 0 {
			t.Errorf("GC evidence %+v: want the share risen, the elevated good steps left out of the baseline", g)
		}
		if !strings.Contains(v.Line, "gc (") || !strings.Contains(v.Next, "GOMEMLIMIT") || strings.Contains(v.Next, "dbwait") {
			t.Errorf("verdict %q, next %q: want gc named, its next step, not dbwait", v.Line, v.Next)
		}
		for _, ir := range r.Instances {
			if ir.Name != "a:8080" && len(ir.Bad) > 0 {
				t.Errorf("%s bad in %v", ir.Name, ir.Bad)
			}
		}
	}},
	// TestRecordUpstreamLate (lab/fleet, issue #35 WP2): run 1's shape, the
	// clients of GET /quote starting with the window, its upstream slowed
	// from minute 2 to 6 of 8: the route's outbound series has 2 good steps
	// (its first step has nothing to gain on), so it cannot be compared.
	// The truth (from the fault) is outbound; triage may say unknown with
	// the route named as not comparable and the re-triage from earlier as
	// the next step — never host.
	"fleet-upstream-late/upstream-late": {period: -1, unknownForOutbound: true, check: func(t *testing.T, r *Report) {
		v := r.Verdict
		if v.Dependency == DepHost || strings.Contains(v.Line, "the hosts or the network") {
			t.Errorf("verdict %q: the host named for a route that could not be compared", v.Line)
		}
		if v.Dependency == DepUnknown && !strings.Contains(v.Next, "latscope triage --route 'GET /quote' --signal request --since ") {
			t.Errorf("next %q: want the route triaged alone from earlier", v.Next)
		}
		if v.Dependency == DepUnknown && len(r.Dependency.Uncomparable) == 0 {
			t.Errorf("no route listed as not compared")
		}
	}},
	// The same with the default signal: no DB call slowed, so no bad step;
	// it says what it did not watch and that it slowed.
	"fleet-upstream/upstream-db": {period: -1, check: func(t *testing.T, r *Report) {
		u := r.Unwatched
		if u == nil || u.Slowed == 0 || len(u.Outbound) != 1 || u.Outbound[0].Route != "GET /quote" || u.Outbound[0].Steps < 3*5 {
			t.Fatalf("unwatched %+v: want GET /quote's outbound calls slowed on every instance", u)
		}
		if v := r.Verdict; !strings.Contains(v.Line, "not watched by the DB-call p95") || !strings.Contains(v.Line, "GET /quote") || !strings.Contains(v.Next, "--signal request") {
			t.Errorf("verdict %q, next %q: want what was not watched, the route, and --signal request", v.Line, v.Next)
		}
	}},
}

// TestFleetRecordings runs triage over the windows of real fleet runs and
// checks each verdict against the window's truth.
func TestFleetRecordings(t *testing.T) {
	t.Parallel()
	testFleetRecordings(t, func(t *testing.T, name string, om []byte) string { return promtest.Replay(t, name, om) })
}

// TestFleetRecordingsLive runs the same on a real Prometheus holding the
// series.
func TestFleetRecordingsLive(t *testing.T) {
	tier.Busy(t)
	testFleetRecordings(t, func(t *testing.T, _ string, om []byte) string { return promtest.Start(t, om) })
}

func testFleetRecordings(t *testing.T, serve func(t *testing.T, name string, om []byte) string) {
	files, err := filepath.Glob("testdata/*.cases.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".cases.json")
		t.Run(name, func(t *testing.T) {
			var rec fleetRecording
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			om := gunzipFile(t, filepath.Join("testdata", rec.OpenMetrics))
			base := serve(t, name, om)
			for _, c := range rec.Cases {
				t.Run(c.Name, func(t *testing.T) {
					r, err := Run(context.Background(), Config{URL: base, Job: "latscope-fleet", Start: c.Start, End: c.End, Step: c.Step, Threshold: c.Threshold, Signal: c.Signal, Route: c.Route})
					if err != nil {
						t.Fatal(err)
					}
					checkFleetCase(t, name, c, r)
				})
			}
		})
	}
}

func checkFleetCase(t *testing.T, rec string, c fleetCase, r *Report) {
	t.Helper()
	ex, ok := fleetExpectations[rec+"/"+c.Name]
	if !ok {
		ex.period = -1
	}
	v, tr := r.Verdict, c.Truth
	t.Logf("verdict: %s\nnext: %s", v.Line, v.Next)
	defer func() {
		if t.Failed() {
			t.Logf("%s (%s): rule %q, dependency %s (%s), warnings %q", c.Name, c.What, v.Rule, v.Dependency, r.Dependency.Reason, r.Warnings)
		}
	}()
	if v.Scope != tr.Scope {
		t.Errorf("scope %s, want %s", v.Scope, tr.Scope)
	}
	if tr.Instance != "" && v.Instance != tr.Instance {
		t.Errorf("instance %q, want %q", v.Instance, tr.Instance)
	}
	if tr.DBPath != "" && v.DBPath != tr.DBPath {
		t.Errorf("DB path %s, want %s", v.DBPath, tr.DBPath)
	}
	want := tr.Period
	if ex.period >= 0 {
		want = ex.period
	}
	if v.Period != want {
		t.Errorf("period %v, want %v (p = %v)", v.Period, want, r.When.PValue)
	}
	if want == 0 && strings.Contains(v.Next, "next occurrence") {
		t.Errorf("next step plans an occurrence without a period: %s", v.Next)
	}
	switch {
	case ex.unknownForOutbound && tr.Dependency == "outbound" && v.Dependency == DepUnknown:
		// the route is named as present but not comparable in its place
		if u := r.Dependency.Uncomparable; len(u) == 0 || u[0].Route != tr.Route {
			t.Errorf("dependency unknown, uncomparable %+v: want %q named first (%s)", u, tr.Route, r.Dependency.Reason)
		}
		if !strings.Contains(r.Dependency.Reason, tr.Route) {
			t.Errorf("dependency reason %q: want %q named", r.Dependency.Reason, tr.Route)
		}
	default:
		if tr.Dependency != "" && v.Dependency.String() != tr.Dependency {
			t.Errorf("dependency %s, want %s (%s)", v.Dependency, tr.Dependency, r.Dependency.Reason)
		}
		if tr.Route != "" && v.Route != tr.Route {
			t.Errorf("route %q, want %q", v.Route, tr.Route)
		}
	}
	if tr.Cause != "" && v.Cause != tr.Cause {
		t.Errorf("cause %s, want %s", v.Cause, tr.Cause)
	}
	if ex.rule != "" && v.Rule != ex.rule {
		t.Errorf("rule %q, want %q", v.Rule, ex.rule)
	}
	if ex.quantileBelow && !(r.Quantile < signalQuantile(c.Signal)) {
		t.Errorf("quantile %v, want one below the signal's own", r.Quantile)
	}
	if ex.noWarning != "" {
		for _, w := range r.Warnings {
			if strings.Contains(w, ex.noWarning) {
				t.Errorf("warning %q", w)
			}
		}
	}
	if ex.checkDep && v.Dependency != ex.dep {
		t.Errorf("dependency %s, want %s (%s)", v.Dependency, ex.dep, r.Dependency.Reason)
	}
	if ex.check != nil {
		ex.check(t, r)
	}
}

// askedOutboundAt says whether r asked the outbound quantile q.
func askedOutboundAt(r *Report, q string) bool {
	for _, s := range r.Queries {
		if strings.HasPrefix(s, "histogram_quantile("+q+", sum by (job, instance, route, peer, le) (") {
			return true
		}
	}
	return false
}

func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
