package dbwait_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/analysis"
	goldenfile "github.com/latscope/latscope/internal/golden"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/report/dbwaitreport"
)

// The captures in testdata/lab are real: one run of each condition of
// `latscope-lab dbwait` on this machine (the service's execution trace,
// with host samples logged into it every 100 ms, and its part of the
// PostgreSQL jsonlog). Regenerate them as root with
//
//	go test ./lab/dbwait -run TestLab -update
//
// and then the golden reports with go test ./dbwait -update.

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// conditions are the captured lab conditions.
var conditions = []string{"baseline", "lock", "pause", "quota", "cpu", "proxy"}

// readGz returns the decompressed contents of testdata/lab/name.
func readGz(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "lab", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// capture is one condition's trace and server log.
type capture struct{ trace, pglog []byte }

var captures = map[string]capture{}

func loadCapture(t testing.TB, cond string) capture {
	t.Helper()
	if c, ok := captures[cond]; ok {
		return c
	}
	c := capture{readGz(t, cond+".trace.gz"), readGz(t, cond+".postgresql.json.gz")}
	captures[cond] = c
	return c
}

// feedTrace passes a trace to a.
func feedTrace(t testing.TB, a *dbwait.Analyzer, name string, trace []byte) {
	t.Helper()
	if _, err := analysis.Run(context.Background(), name, bytes.NewReader(trace), analysis.Options{}, analysis.Use(a)); err != nil {
		t.Fatal(err)
	}
}

// analyse joins a condition's capture with opts.
func analyse(t testing.TB, cond string, opts dbwait.Options) *dbwait.Result {
	t.Helper()
	c := loadCapture(t, cond)
	a := dbwait.New(opts)
	feedTrace(t, a, cond+".trace", c.trace)
	if err := dbwait.FeedPGLog(a, pglog.NewReader(bytes.NewReader(c.pglog))); err != nil {
		t.Fatal(err)
	}
	r, err := a.Finalize()
	if err != nil {
		t.Fatalf("%s: %v", cond, err)
	}
	return r
}

// covered returns the queries over the threshold that host samples cover,
// and how many of them have verdict v.
func covered(r *dbwait.Result, v dbwait.Verdict) (over, withV int) {
	for _, q := range r.Queries {
		if q.Verdict == dbwait.Inside || q.Evidence.Host == nil {
			continue
		}
		over++
		if q.Verdict == v {
			withV++
		}
	}
	return over, withV
}

// TestLabCaptures checks each real capture for what its condition must
// show (issue 5's acceptance, on recorded data), and its text report
// against a golden file.
func TestLabCaptures(t *testing.T) {
	base := analyse(t, "baseline", dbwait.Options{})
	for _, tc := range []struct {
		cond  string
		check func(t *testing.T, r *dbwait.Result)
	}{
		{"baseline", func(t *testing.T, r *dbwait.Result) {
			if in := r.Summary.ByVerdict[dbwait.Inside].Count; in*100 < 95*r.Summary.Matched {
				t.Errorf("%d of %d inside, want ≥ 95 %% at baseline", in, r.Summary.Matched)
			}
		}},
		{"lock", func(t *testing.T, r *dbwait.Result) {
			q := longest(r, func(q dbwait.Query) time.Duration { return q.DB })
			if q.DB < 500*time.Millisecond || q.Verdict != dbwait.Inside || q.LockWait < 100*time.Millisecond {
				t.Errorf("the lock waiter: DB %v, lock wait %v, verdict %v; want ≥ 0.5 s, ≥ deadlock_timeout, inside", q.DB, q.LockWait, q.Verdict)
			}
			if q.App < q.DB {
				t.Errorf("app %v < DB %v", q.App, q.DB)
			}
		}},
		{"pause", func(t *testing.T, r *dbwait.Result) {
			q := longest(r, func(q dbwait.Query) time.Duration { return q.Outside })
			if q.Outside < 200*time.Millisecond || q.Verdict != dbwait.Paused {
				t.Errorf("the paused lookup: outside %v, verdict %v; want ≥ 0.2 s, paused", q.Outside, q.Verdict)
			}
			if !q.Evidence.Placed || q.Evidence.Gap < q.Outside*9/10 {
				t.Errorf("gap %v (placed %v) for outside %v: the stop should cover the outside time", q.Evidence.Gap, q.Evidence.Placed, q.Outside)
			}
			if d := q.Evidence.Host; d == nil || d.Throttled != 0 || d.Wait > q.Evidence.Gap/2 {
				t.Errorf("host evidence %+v: want flat counters", d)
			}
		}},
		{"quota", func(t *testing.T, r *dbwait.Result) {
			over, thr := covered(r, dbwait.Throttled)
			if over == 0 || thr < over*8/10 {
				t.Errorf("%d of %d over the threshold throttled, want ≥ 80 %% and some", thr, over)
			}
			if d := r.Host.Delta; d == nil || d.Throttled == 0 || d.CgroupSome <= base.Host.Delta.CgroupSome {
				t.Errorf("host over the trace %+v: want nr_throttled > 0 and cgroup PSI above baseline's %v", d, base.Host.Delta.CgroupSome)
			}
		}},
		{"cpu", func(t *testing.T, r *dbwait.Result) {
			if n := r.Summary.ByVerdict[dbwait.Throttled].Count; n != 0 || r.Host.Delta.Throttled != 0 {
				t.Errorf("%d throttled, nr_throttled %d: want none without a quota", n, r.Host.Delta.Throttled)
			}
		}},
		{"proxy", func(t *testing.T, r *dbwait.Result) {
			added := r.Summary.OutsideP50 - base.Summary.OutsideP50
			if added < 20*time.Millisecond || added > 40*time.Millisecond {
				t.Errorf("difference p50 %v over baseline, want 30 ms ± 10 ms", added)
			}
			over, netw := covered(r, dbwait.Network)
			if over == 0 || netw < over*9/10 || r.Host.Delta.Throttled != 0 {
				t.Errorf("%d of %d network, nr_throttled %d; want ≥ 90 %% and 0", netw, over, r.Host.Delta.Throttled)
			}
		}},
	} {
		t.Run(tc.cond, func(t *testing.T) {
			r := analyse(t, tc.cond, dbwait.Options{})
			checkInvariants(t, r)
			tc.check(t, r)
			var b bytes.Buffer
			if err := dbwaitreport.WriteText(&b, r, dbwaitreport.TextOptions{}); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.cond+".txt", b.Bytes())
		})
	}
}

// checkInvariants asserts what holds for every result: every span joined
// (the captures are complete), clocks agree, terms add up, verdicts follow
// the threshold, evidence lies inside its span.
func checkInvariants(t *testing.T, r *dbwait.Result) {
	t.Helper()
	s := r.Summary
	if s.Matched != s.Spans || len(r.Unmatched) != 0 {
		t.Errorf("%d of %d spans matched, %d unmatched; want all", s.Matched, s.Spans, len(r.Unmatched))
	}
	if r.ClockOffset < -r.Options.ClockTolerance || r.ClockOffset > r.Options.ClockTolerance {
		t.Errorf("clock offset %v: the trace and the log come from one host", r.ClockOffset)
	}
	n := 0
	for _, vs := range s.ByVerdict {
		n += vs.Count
	}
	if n != s.Matched {
		t.Errorf("verdict counts sum to %d, want %d", n, s.Matched)
	}
	for _, q := range r.Queries {
		switch {
		case q.End < q.Start || q.App != q.End.Sub(q.Start):
			t.Errorf("span %v..%v, app %v", q.Start, q.End, q.App)
		case q.Outside != q.App-q.DB:
			t.Errorf("outside %v != app %v − DB %v", q.Outside, q.App, q.DB)
		case (q.Verdict == dbwait.Inside) != (q.Outside <= r.Options.Threshold):
			t.Errorf("outside %v, verdict %v: the threshold %v decides inside", q.Outside, q.Verdict, r.Options.Threshold)
		case q.Evidence.Gap > q.App || q.Evidence.Runnable > q.App:
			t.Errorf("gap %v, runnable %v exceed the span %v", q.Evidence.Gap, q.Evidence.Runnable, q.App)
		case q.DBStart.IsZero() || q.StartWall.IsZero():
			t.Errorf("statement or span not on the wall clock: %v, %v", q.DBStart, q.StartWall)
		case !q.Evidence.Placed:
			t.Errorf("statement of %v not placed in its span", q.TraceParent)
		}
	}
}

// longest returns the query with the largest f.
func longest(r *dbwait.Result, f func(dbwait.Query) time.Duration) dbwait.Query {
	var best dbwait.Query
	for i, q := range r.Queries {
		if i == 0 || f(q) > f(best) {
			best = q
		}
	}
	return best
}

// golden compares got with testdata/golden/name, rewriting it with -update;
// a mismatch writes name.got beside it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), got, *update)
}
