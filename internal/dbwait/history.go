package dbwait

import (
	"fmt"
	"time"

	"github.com/latscope/latscope/internal/pglog"
)

// historyLog is what a performance_schema history export (--mysql-csv)
// held: its rows and the earliest statement start on the wall clock. The
// history is a ring of performance_schema_events_statements_history_long_size
// rows, so an export read after a long trace has lost the trace's first
// statements.
type historyLog struct {
	rows  int       // statements read from exports
	first time.Time // the earliest start of a placed statement, or zero
}

// add counts s, read from an export.
func (h *historyLog) add(s pglog.Statement) {
	h.rows++
	if s.End.IsZero() {
		return
	}
	if start := s.End.Add(-s.Duration); h.first.IsZero() || start.Before(h.first) {
		h.first = start
	}
}

// minUnmatchedShare is the share of spans without a statement above which
// a history export is said to have lost some even when the statements are
// not placed on the wall clock.
const minUnmatchedShare = 0.1

// historyWarning says, when spans have no statement in a history export,
// that the ring may have overwritten them and what keeps every statement;
// nil when there is nothing to say.
func (a *Analyzer) historyWarning(r *Result) error {
	h := a.history
	spans := len(r.Queries) + len(r.Unmatched)
	if h.rows == 0 || len(r.Unmatched) == 0 || spans == 0 {
		return nil
	}
	what := fmt.Sprintf("performance_schema's events_statements_history_long is a ring of performance_schema_events_statements_history_long_size rows (the export held %d): export it every few seconds while the trace runs (each export another --mysql-csv), raise that size, or read the slow log with long_query_time = 0 (--mysql-slowlog), which keeps every statement", h.rows)
	if !h.first.IsZero() && a.clock.known() {
		before := 0
		for _, q := range r.Unmatched {
			if !q.StartWall.IsZero() && q.StartWall.Before(h.first.Add(-a.opts.PGClockOffset)) {
				before++
			}
		}
		if before > 0 {
			return fmt.Errorf("%d of the trace's %d DB spans have no statement in the export, %d of them from before its earliest statement (%s UTC), and cannot be judged: %s",
				len(r.Unmatched), spans, before, h.first.UTC().Format("15:04:05.000"), what)
		}
	}
	if share := float64(len(r.Unmatched)) / float64(spans); share >= minUnmatchedShare {
		return fmt.Errorf("%d of the trace's %d DB spans (%.0f %%) have no statement in the export: %s", len(r.Unmatched), spans, 100*share, what)
	}
	return nil
}
