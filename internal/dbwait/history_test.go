package dbwait_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
)

// TestHistoryRingWarns: an export of performance_schema's history that
// kept only the last statements of a real capture (the ring overwrote the
// first) says so, with the export's earliest statement and what keeps
// every statement; an export of all of them says nothing.
func TestHistoryRingWarns(t *testing.T) {
	t.Parallel()
	c := loadCapture(t, "lock")
	var stmts []pglog.Statement
	pglog.Statements(pglog.NewReader(bytes.NewReader(c.pglog)), func(s pglog.Statement) { stmts = append(stmts, s) })
	slices.SortFunc(stmts, func(x, y pglog.Statement) int { return x.End.Compare(y.End) })
	for _, tc := range []struct {
		name    string
		keep    int // the last statements the ring kept; 0: all
		endTime bool
		want    string
	}{
		{"whole history", 0, true, ""},
		{"ring kept the last half", len(stmts) / 2, true, "from before its earliest statement"},
		{"ring kept the last half, not placed", len(stmts) / 2, false, "have no statement in the export"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := stmts
			if tc.keep > 0 {
				kept = stmts[len(stmts)-tc.keep:]
			}
			a := dbwait.New(dbwait.Options{})
			feedTrace(t, a, "lock", c.trace)
			if err := a.ReadMySQLCSV(context.Background(), "history.csv", bytes.NewReader(mysqlExport(t, kept, false, tc.endTime))); err != nil {
				t.Fatal(err)
			}
			res, err := a.Finalize()
			if err != nil {
				t.Fatal(err)
			}
			var found string
			for _, w := range res.Warnings {
				if strings.Contains(w.Error(), "events_statements_history_long is a ring") {
					found = w.Error()
				}
			}
			switch {
			case tc.want == "" && found != "":
				t.Errorf("warned on a whole export: %s", found)
			case tc.want != "" && !strings.Contains(found, tc.want):
				t.Errorf("warning %q, want one saying %q (%d of %d statements kept, %d spans unmatched)", found, tc.want, len(kept), len(stmts), len(res.Unmatched))
			case tc.want != "" && !strings.Contains(found, "--mysql-slowlog"):
				t.Errorf("warning %q does not point to the slow log", found)
			}
			t.Logf("%d of %d statements kept: %d spans unmatched; %s", len(kept), len(stmts), len(res.Unmatched), found)
		})
	}
}

// TestHistoryExportsOverlap: a real capture's statements exported as
// three rings that overlap — each export read while the trace ran holds
// the end of the one before, as periodic exports of
// events_statements_history_long do — are each joined once: the same
// spans and verdicts as one whole export, the statement count the
// distinct rows, and no warning of a ring that lost statements or of a
// traceparent logged too often. The overlapping rows keep their
// THREAD_ID, TIMER_WAIT and EVENT_ID (exported, or not: the documented
// query before it had none), but their END_TIME moves by a few µs from
// export to export, as the documented query's clock anchor
// (UTC_TIMESTAMP(6) against the current statement's TIMER_START) does.
func TestHistoryExportsOverlap(t *testing.T) {
	t.Parallel()
	c, stmts, ids := lockStatements(t)
	n := len(stmts)
	judge := func(t *testing.T, exports ...[]byte) *dbwait.Result {
		t.Helper()
		a := dbwait.New(dbwait.Options{})
		feedTrace(t, a, "lock", c.trace)
		for i, e := range exports {
			if err := a.ReadMySQLCSV(context.Background(), fmt.Sprintf("history-%d.csv", i), bytes.NewReader(e)); err != nil {
				t.Fatal(err)
			}
		}
		res, err := a.Finalize()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, withEvent := range []bool{true, false} {
		t.Run(fmt.Sprintf("EVENT_ID %v", withEvent), func(t *testing.T) {
			whole := judge(t, historyExport(stmts, ids, 0, withEvent))
			// three rings of 45 % of the statements each, the next starting at
			// 30 % and 60 %: over a quarter of the statements are in two exports
			var exports [][]byte
			rows := 0
			for k, from := range []int{0, n * 30 / 100, n * 60 / 100} {
				to := min(from+n*45/100, n)
				if k == 2 {
					to = n
				}
				exports = append(exports, historyExport(stmts[from:to], ids[from:to], time.Duration(3*k-2)*time.Microsecond, withEvent))
				rows += to - from
			}
			got := judge(t, exports...)
			t.Logf("%d statements in 3 exports of %d rows: %d joined, %d spans unmatched, %d statements counted", n, rows, len(got.Queries), len(got.Unmatched), got.Summary.Statements)
			if rows <= n {
				t.Fatalf("the exports do not overlap: %d rows for %d statements", rows, n)
			}
			if got.Summary.Statements != n || whole.Summary.Statements != n {
				t.Errorf("%d statements counted, want the %d distinct rows (one whole export: %d)", got.Summary.Statements, n, whole.Summary.Statements)
			}
			if len(got.Queries) != len(whole.Queries) || len(got.Unmatched) != len(whole.Unmatched) || got.Summary.Matched != whole.Summary.Matched {
				t.Fatalf("%d joined, %d unmatched; one whole export: %d, %d", len(got.Queries), len(got.Unmatched), len(whole.Queries), len(whole.Unmatched))
			}
			seen := map[pglog.TraceParent]int{}
			for i, q := range got.Queries {
				seen[q.TraceParent]++
				w := whole.Queries[i]
				if q.TraceParent != w.TraceParent || q.DB != w.DB || q.Verdict != w.Verdict {
					t.Errorf("span %d: %v DB %v %v; one whole export: %v DB %v %v", i, q.TraceParent, q.DB, q.Verdict, w.TraceParent, w.DB, w.Verdict)
				}
			}
			for tp, k := range seen {
				if k > 1 {
					t.Errorf("traceparent %v joined %d times", tp, k)
				}
			}
			for _, w := range got.Warnings {
				if s := w.Error(); strings.Contains(s, "is a ring") || strings.Contains(s, "were left out") || strings.Contains(s, "have no statement") {
					t.Errorf("warning from the overlap: %s", s)
				}
			}
		})
	}
}

// TestHistoryExportsGap: overlapping exports with a gap between two of
// them — the ring overwrote statements before the next export — still
// say that spans have no statement, counting the distinct rows.
func TestHistoryExportsGap(t *testing.T) {
	t.Parallel()
	c, stmts, ids := lockStatements(t)
	n := len(stmts)
	a := dbwait.New(dbwait.Options{})
	feedTrace(t, a, "lock", c.trace)
	for k, cut := range [][2]int{{0, n * 40 / 100}, {n * 30 / 100, n * 55 / 100}, {n * 75 / 100, n}} {
		if err := a.ReadMySQLCSV(context.Background(), fmt.Sprintf("history-%d.csv", k), bytes.NewReader(historyExport(stmts[cut[0]:cut[1]], ids[cut[0]:cut[1]], 0, true))); err != nil {
			t.Fatal(err)
		}
	}
	distinct := n*55/100 + n - n*75/100 // the first 55 % and the last 25 %
	res, err := a.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the exports held %d distinct statements; %d rows were in an earlier export too", distinct, n*40/100-n*30/100)
	var found string
	for _, w := range res.Warnings {
		if strings.Contains(w.Error(), "is a ring") {
			found = w.Error()
		}
	}
	if !strings.Contains(found, "have no statement in the export") || !strings.Contains(found, want) || res.Summary.Statements != distinct {
		t.Errorf("%d statements counted, warning %q; want %d and a warning saying %q", res.Summary.Statements, found, distinct, want)
	}
	t.Logf("%d spans unmatched: %s", len(res.Unmatched), found)
}

// historyExport is a CSV export of stmts as the documented query gives
// it, with EVENT_ID (each statement's from ids) if withEvent, and each
// END_TIME moved by shift (the export's clock anchor).
func historyExport(stmts []pglog.Statement, ids []int, shift time.Duration, withEvent bool) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	header := []string{"THREAD_ID", "TIMER_WAIT", "LOCK_TIME", "SQL_TEXT", "END_TIME"}
	if withEvent {
		header = append(header, "EVENT_ID")
	}
	w.Write(header)
	for i, s := range stmts {
		row := []string{strconv.Itoa(s.PID), strconv.FormatInt(int64(s.Duration)*1000, 10),
			strconv.FormatInt(int64(s.LockWait)*1000, 10), s.SQL, s.End.Add(shift).UTC().Format("2006-01-02 15:04:05.000000")}
		if withEvent {
			row = append(row, strconv.Itoa(ids[i]))
		}
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

// lockStatements loads the kept "lock" capture and returns it with its
// logged statements in the order they ended, and event IDs 1…n for them.
func lockStatements(t *testing.T) (capture, []pglog.Statement, []int) {
	t.Helper()
	c := loadCapture(t, "lock")
	var stmts []pglog.Statement
	pglog.Statements(pglog.NewReader(bytes.NewReader(c.pglog)), func(s pglog.Statement) { stmts = append(stmts, s) })
	slices.SortFunc(stmts, func(x, y pglog.Statement) int { return x.End.Compare(y.End) })
	ids := make([]int, len(stmts))
	for i := range ids {
		ids[i] = i + 1
	}
	return c, stmts, ids
}
