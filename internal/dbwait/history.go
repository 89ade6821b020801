package dbwait

import (
	"fmt"
	"hash/maphash"
	"time"

	"github.com/latscope/latscope/internal/pglog"
)

// historyLog is what performance_schema history exports (--mysql-csv)
// held: their distinct rows and the earliest statement start on the wall
// clock. The history is a ring of
// performance_schema_events_statements_history_long_size rows, so an
// export read after a long trace has lost the trace's first statements;
// exports read every few seconds keep them, and overlap: a row in two
// exports is one statement, counted and joined once. The set of rows
// seen grows with the distinct rows read (each export is at most a ring).
type historyLog struct {
	rows  int       // distinct statements read from exports
	dups  int       // rows read again from another export, left out
	first time.Time // the earliest start of a placed statement, or zero
	seen  map[historyKey]struct{}
	seed  maphash.Seed
}

// historyKey identifies a row of the history across exports: its
// traceparent, THREAD_ID, TIMER_WAIT and, where the export has it,
// EVENT_ID — the columns that stay the same from one export to the next.
// END_TIME does not: the documented query computes it from a clock
// anchor read with each export (UTC_TIMESTAMP(6) against the current
// statement's TIMER_START), which moves by microseconds between exports.
// A thread runs one statement at a time and a traceparent names one
// span, so two rows that agree on these are one statement. A row without
// a traceparent (only counted) is told apart by its text too.
type historyKey struct {
	tp     pglog.TraceParent
	thread int
	event  uint64 // EVENT_ID; 0 when the export has none
	wait   time.Duration
	sql    uint64 // a hash of SQL_TEXT, for rows without a traceparent
}

// add records s, read from an export, and tells whether it is new: false
// for a row an earlier export held, which is left out.
func (h *historyLog) add(s pglog.Statement, event uint64) bool {
	if h.seen == nil {
		h.seen, h.seed = map[historyKey]struct{}{}, maphash.MakeSeed()
	}
	k := historyKey{tp: s.TraceParent, thread: s.PID, event: event, wait: s.Duration}
	if !s.TraceParent.IsValid() {
		k.sql = maphash.String(h.seed, s.SQL)
	}
	if _, ok := h.seen[k]; ok {
		h.dups++
		return false
	}
	h.seen[k] = struct{}{}
	h.rows++
	if s.End.IsZero() {
		return true
	}
	if start := s.End.Add(-s.Duration); h.first.IsZero() || start.Before(h.first) {
		h.first = start
	}
	return true
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
	held := fmt.Sprintf("the export held %d", h.rows)
	if h.dups > 0 {
		held = fmt.Sprintf("the exports held %d distinct statements; %d rows were in an earlier export too and were counted once", h.rows, h.dups)
	}
	what := fmt.Sprintf("performance_schema's events_statements_history_long is a ring of performance_schema_events_statements_history_long_size rows (%s): export it every few seconds while the trace runs (each export another --mysql-csv), raise that size, or read the slow log with long_query_time = 0 (--mysql-slowlog), which keeps every statement", held)
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
