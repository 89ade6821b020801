package dbwait_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

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
