package dbwait

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/dbhost"
	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/pglog"
	"github.com/latscope/latscope/internal/tcpproxy"
	"github.com/latscope/latscope/internal/tracein"
)

// The truth of the proxy and db-quota conditions is taken from clocks
// other than dbwait's inputs' rules: the proxy's own log (latscope-lab proxy
// --log: when it read each chunk and when it had written it on, on
// CLOCK_MONOTONIC, the trace's clock, with the statement's traceparent)
// and the database host's recording, placed against the database's own
// timer (dbhost.Waits.Place). Neither is a verdict of dbwait's.

// proxyHolds are the proxy's holds of a run's chunks, by the traceparent of
// the statement they belong to, as intervals on the trace's clock.
type proxyHolds map[pglog.TraceParent][]span

// span is an interval on the trace's clock.
type span struct{ from, to tracein.Time }

// readProxyHolds reads a run's proxy log (name is for errors): every
// chunk's hold, either way (a to-server chunk is passed on at once, its
// hold is how long the proxy took to write it on), by its traceparent.
// Chunks before the first traceparent on their connection have none and
// belong to no statement.
func readProxyHolds(name string, log []byte) (proxyHolds, error) {
	_, events, err := tcpproxy.ReadLog(bytes.NewReader(log))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h := proxyHolds{}
	for _, e := range events {
		if !e.TraceParent.IsValid() {
			continue
		}
		h[e.TraceParent] = append(h[e.TraceParent], span{tracein.Time(e.Read), tracein.Time(e.Written)})
	}
	return h, nil
}

// network is the time inside [from, to] that the proxy held one of tp's
// chunks (the union of the holds, so that chunks held at once count
// once), and whether the log has any chunk of tp.
func (h proxyHolds) network(tp pglog.TraceParent, from, to tracein.Time) (time.Duration, bool) {
	spans := h[tp]
	if len(spans) == 0 {
		return 0, false
	}
	var clipped []span
	for _, s := range spans {
		if s.from, s.to = max(s.from, from), min(s.to, to); s.to > s.from {
			clipped = append(clipped, s)
		}
	}
	slices.SortFunc(clipped, func(a, b span) int { return int(a.from - b.from) })
	var sum time.Duration
	var cur span
	for i, s := range clipped {
		switch {
		case i == 0:
			cur = s
		case s.from <= cur.to:
			cur.to = max(cur.to, s.to)
		default:
			sum += time.Duration(cur.to - cur.from)
			cur = s
		}
	}
	if len(clipped) > 0 {
		sum += time.Duration(cur.to - cur.from)
	}
	return sum, true
}

// dbHostShare is how long statement q's backend waited on its host's run
// queue outside the database's timer (before it read the query and after
// it logged the end), as the database host's recording places it, at most
// q's difference; false when the statement cannot be placed (no clock
// times, or the recording does not cover its backend over its span).
func dbHostShare(dbh *dbhost.Waits, q dbwait.Query) (time.Duration, bool) {
	if dbh == nil || q.StartWall.IsZero() || q.DBStart.IsZero() || q.PID == 0 {
		return 0, false
	}
	p, miss := dbh.Place(q.PID, q.StartWall, q.DBStart, q.DBEnd, q.StartWall.Add(q.App))
	if miss != dbhost.Covered {
		return 0, false
	}
	return min(p.Outside(), max(q.Outside, 0)), true
}

// shareTruth is the right verdicts for a difference of outside of which
// part, known from a clock of its own, is one cause's (want) and the rest
// another's (rest), weighed as dbwait's rules weigh causes: the part's
// cause when it is half the difference or more, mixed when the part and
// the rest are each a third or more, the rest's cause when the rest is
// half or more; at a boundary both neighbours are right.
func shareTruth(outside, part time.Duration, want, rest []dbwait.Verdict) []dbwait.Verdict {
	var out []dbwait.Verdict
	if 2*part >= outside { // d ≥ ½
		out = append(out, want...)
	}
	if 3*part >= outside && 3*(outside-part) >= outside { // d, 1−d ≥ ⅓
		out = append(out, dbwait.Mixed)
	}
	if 2*(outside-part) >= outside { // 1−d ≥ ½
		out = append(out, rest...)
	}
	return out
}

// truthFiles sets what rr's truth needs beside the verdicts: the database
// host's recording and, when the run had the proxy (rr.ProxyLog), its log,
// read from the file proxyLog (gzipped when its name ends in .gz, as a
// kept run's is).
func (rr *RunResult) truthFiles(proxyLog string, dbh *dbhost.Waits) error {
	rr.dbh = dbh
	if rr.ProxyLog == "" {
		return nil
	}
	var log []byte
	var err error
	switch {
	case strings.HasSuffix(proxyLog, ".gz"):
		log, err = gunzipFile(proxyLog)
	default:
		log, err = os.ReadFile(proxyLog)
	}
	if err != nil {
		return fmt.Errorf("the proxy's log: %w", err)
	}
	rr.proxy, err = readProxyHolds(rr.ProxyLog, log)
	return err
}
