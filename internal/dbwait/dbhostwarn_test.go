package dbwait_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
)

// recording writes a dbhost recording from `from` to `to` with a heartbeat
// every 100 ms and, for each backend, a first line at seen[pid] with its
// counter at 1 s (and a line at back[pid] with the counter gone back to 0,
// when given).
func recording(from, to time.Time, seen map[int]time.Time, back map[int]time.Time) string {
	type line struct {
		at       time.Time
		pid      int
		runDelay time.Duration
	}
	var lines []line
	for t := from; !t.After(to); t = t.Add(100 * time.Millisecond) {
		lines = append(lines, line{t, 0, 0})
	}
	for pid, at := range seen {
		lines = append(lines, line{at, pid, time.Second})
	}
	for pid, at := range back {
		lines = append(lines, line{at, pid, 0})
	}
	slices.SortStableFunc(lines, func(a, b line) int { return a.at.Compare(b.at) })
	var b strings.Builder
	fmt.Fprintf(&b, "%s period_ns=%d\n", dbhost.Header, 10*time.Millisecond)
	for _, l := range lines {
		fmt.Fprintf(&b, "%d %d %d\n", l.at.UnixNano(), l.pid, l.runDelay)
	}
	return b.String()
}

// TestDBHostCoverageWarning (issue 29, item 17): a recording that does not
// cover every statement says why in one warning, with each reason right
// and each PID named once.
func TestDBHostCoverageWarning(t *testing.T) {
	c := loadCapture(t, "pause")
	ref := analyse(t, "pause", dbwait.Options{})
	first, last := ref.Queries[0].StartWall, ref.Queries[len(ref.Queries)-1].StartWall
	pids := map[int]int{}
	for _, q := range ref.Queries {
		pids[q.PID]++
	}
	var pid int // the backend of the most statements
	for p, n := range pids {
		if n > pids[pid] {
			pid = p
		}
	}
	midQ := ref.Queries[len(ref.Queries)/2]
	mid := midQ.StartWall
	for _, tc := range []struct {
		name        string
		rec         string
		want, never []string
	}{
		{"another time", recording(last.Add(time.Hour), last.Add(time.Hour+time.Second), map[int]time.Time{pid: last.Add(time.Hour)}, nil),
			[]string{"outside it (another time or host?)"}, []string{"PID"}},
		{"backend absent", recording(first.Add(-time.Second), last.Add(time.Second), nil, nil),
			[]string{fmt.Sprintf("%d statements of backends it has no line of (PID", len(ref.Queries))}, []string{"were not seen", "from before"}},
		{"backend seen late", recording(first.Add(-time.Second), last.Add(time.Second), map[int]time.Time{pid: mid}, nil),
			[]string{fmt.Sprintf("of backends it first saw after their statement began (PID %d)", pid)}, []string{fmt.Sprintf("%d, %d", pid, pid)}},
		{"recording began late", recording(mid, last.Add(time.Second), map[int]time.Time{pid: mid}, nil),
			[]string{"began before the recording or ended after it"}, []string{"were not seen", fmt.Sprintf("%d %d", pid, pid)}},
		{"PID taken over", recording(first.Add(-time.Second), last.Add(time.Second), map[int]time.Time{pid: first.Add(-time.Second)}, map[int]time.Time{pid: mid.Add(midQ.App / 2)}),
			[]string{fmt.Sprintf("1 statement of backends whose run-queue counter went back, another process having taken the PID (PID %d)", pid)}, []string{"were not seen"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := withRecording(t, c, tc.rec, false)
			// read for the trace's window only, the same
			if win := withRecording(t, c, tc.rec, true); fmt.Sprint(win.Warnings, *win.DBHost) != fmt.Sprint(res.Warnings, *res.DBHost) {
				t.Errorf("read for the trace's window:\n%v %+v\nwhole:\n%v %+v", win.Warnings, *win.DBHost, res.Warnings, *res.DBHost)
			}
			var warn string
			for _, e := range res.Warnings {
				if strings.HasPrefix(e.Error(), "the database host's recording") {
					if warn != "" {
						t.Errorf("two warnings about the recording:\n%s\n%s", warn, e)
					}
					warn = e.Error()
				}
			}
			t.Log(warn)
			for _, s := range tc.want {
				if !strings.Contains(warn, s) {
					t.Errorf("warning %q does not say %q", warn, s)
				}
			}
			for _, s := range tc.never {
				if strings.Contains(warn, s) {
					t.Errorf("warning %q says %q", warn, s)
				}
			}
		})
	}
}

// withRecording joins the capture with a recording of the database host,
// read whole or for the trace's window.
func withRecording(t *testing.T, c capture, rec string, window bool) *dbwait.Result {
	t.Helper()
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "pause.trace", c.trace)
	var from, to time.Time
	if window {
		var ok bool
		if from, to, ok = a.DBHostWindow(); !ok {
			t.Fatal("no window for a trace with clock snapshots")
		}
	}
	w, err := dbhost.ReadWindow(t.Context(), "rec", strings.NewReader(rec), from, to)
	if err != nil {
		t.Fatal(err)
	}
	a.DBHost(w)
	if err := dbwait.FeedPGLog(a, pglog.NewReader(bytes.NewReader(c.pglog))); err != nil {
		t.Fatal(err)
	}
	res, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	return res
}
