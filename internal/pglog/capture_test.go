package pglog_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/internal/pgcluster/pgtest"
	"github.com/latscope/latscope/internal/pglog"
)

// The capture: queries run against a real cluster to produce
// testdata/postgres.jsonl. Each carries its own traceparent so that the
// checks can find its statement.

// holdTime is how long a lock holder keeps its ACCESS EXCLUSIVE lock after
// the waiter is seen waiting.
const holdTime = 300 * time.Millisecond

// captureQuery is one query of the capture.
type captureQuery struct {
	name string
	mode pgx.QueryExecMode
	sql  string
	args []any
	tp   int  // traceparent number (see tpFor); queries may share one to reuse a cached statement
	lock bool // run while another session holds a table lock
	fail bool // the query is expected to fail
}

// captureQueries run in this order.
var captureQueries = []captureQuery{
	{name: "simple", mode: pgx.QueryExecModeSimpleProtocol, sql: "SELECT pg_sleep(0.02)::text", tp: 1},
	{name: "simple-param", mode: pgx.QueryExecModeSimpleProtocol, sql: "SELECT ($1::int + 1)::text", args: []any{41}, tp: 2},
	{name: "exec", mode: pgx.QueryExecModeExec, sql: "SELECT pg_sleep(0.02)::text", tp: 3},
	{name: "exec-param", mode: pgx.QueryExecModeExec, sql: "SELECT ($1::int + 1)::text", args: []any{41}, tp: 4},
	{name: "cache", mode: pgx.QueryExecModeCacheStatement, sql: "SELECT pg_sleep(0.02)::text", tp: 5},
	{name: "cache-reuse", mode: pgx.QueryExecModeCacheStatement, sql: "SELECT pg_sleep(0.02)::text", tp: 5},
	{name: "error", mode: pgx.QueryExecModeExec, sql: "SELECT (1/(count(*)-count(*)))::text FROM t", tp: 6, fail: true},
	{name: "lock-simple", mode: pgx.QueryExecModeSimpleProtocol, sql: "SELECT count(*)::text FROM t", tp: 7, lock: true},
	{name: "lock-exec", mode: pgx.QueryExecModeExec, sql: "SELECT count(*)::text FROM t", tp: 8, lock: true},
}

// holdTP numbers the traceparent of the holder's sleep for lock query q.
func holdTP(q captureQuery) int { return 100 + q.tp }

// tpFor makes the n-th test traceparent.
func tpFor(n int) pglog.TraceParent {
	var tp pglog.TraceParent
	copy(tp.TraceID[:], "latscope-capture")
	tp.TraceID[15] = byte(n)
	tp.SpanID[7] = byte(n)
	tp.Flags = 1
	return tp
}

// commented prefixes sql with the comment of traceparent n.
func commented(n int, sql string) string {
	return pglog.Comment(tpFor(n)) + " " + sql
}

// capture runs captureQueries on a new cluster and returns its jsonlog.
func capture(t *testing.T) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := pgtest.Start(t)
	conns := make([]*pgx.Conn, 3) // [0] runs queries, [1] holds locks, [2] watches quietly
	for i := range conns {
		conn, err := pgx.Connect(ctx, c.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		conns[i] = conn
	}
	run, holder, watcher := conns[0], conns[1], conns[2]
	mustExec(t, watcher, "SET log_min_duration_statement = -1")
	mustExec(t, run, "CREATE TABLE t (x int); INSERT INTO t SELECT generate_series(1, 10)")
	for _, q := range captureQueries {
		if q.lock {
			lockWait(t, ctx, run, holder, watcher, q)
			continue
		}
		var s string
		err := run.QueryRow(ctx, commented(q.tp, q.sql), append([]any{q.mode}, q.args...)...).Scan(&s)
		if (err != nil) != q.fail {
			t.Fatalf("%s: err = %v, want failure %v", q.name, err, q.fail)
		}
	}
	const marker = "latscope capture end"
	mustExec(t, run, "SELECT '"+marker+"'")
	path, err := c.LogFile()
	if err != nil {
		t.Fatal(err)
	}
	return waitFor(t, path, marker)
}

// lockWait runs q on run while holder keeps an ACCESS EXCLUSIVE lock on t
// for holdTime after q is seen waiting.
func lockWait(t *testing.T, ctx context.Context, run, holder, watcher *pgx.Conn, q captureQuery) {
	t.Helper()
	mustExec(t, holder, "BEGIN")
	mustExec(t, holder, "LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
	done := make(chan error, 1)
	go func() {
		var s string
		done <- run.QueryRow(ctx, commented(q.tp, q.sql), q.mode).Scan(&s)
	}()
	for n := 0; n == 0; {
		err := watcher.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 't'::regclass").Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mustExec(t, holder, commented(holdTP(q), fmt.Sprintf("SELECT pg_sleep(%g)", holdTime.Seconds())))
	mustExec(t, holder, "COMMIT")
	if err := <-done; err != nil {
		t.Fatalf("%s: %v", q.name, err)
	}
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// waitFor polls the log until it holds s (the logging collector writes
// asynchronously) and returns the file up to the end of that line.
func waitFor(t *testing.T, path, s string) []byte {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(b, []byte(s)); i >= 0 {
			if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
				return b[:i+j+1]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q not logged after 10s", path, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// statementsOf parses a whole log strictly.
func statementsOf(t *testing.T, log []byte) ([]pglog.Entry, []pglog.Statement) {
	t.Helper()
	var entries []pglog.Entry
	r := pglog.NewReader(bytes.NewReader(log))
	for {
		e, err := r.Next()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatal(err)
			}
			break
		}
		entries = append(entries, e)
	}
	var stmts []pglog.Statement
	if err := pglog.Statements(pglog.NewReader(bytes.NewReader(log)), func(s pglog.Statement) { stmts = append(stmts, s) }); err != nil {
		t.Fatal(err)
	}
	return entries, stmts
}

// checkCapture asserts what the capture must show: traceparents recovered,
// phases summed, lock waits inside the waiter's duration.
func checkCapture(t *testing.T, entries []pglog.Entry, stmts []pglog.Statement) {
	t.Helper()
	byTP := map[pglog.TraceParent][]pglog.Statement{}
	for _, s := range stmts {
		if s.TraceParent.IsValid() {
			byTP[s.TraceParent] = append(byTP[s.TraceParent], s)
		}
	}
	used := map[int]int{}
	for _, q := range captureQueries {
		list := byTP[tpFor(q.tp)]
		if used[q.tp] >= len(list) {
			t.Errorf("%s: traceparent %s: %d statements, want more", q.name, tpFor(q.tp), len(list))
			continue
		}
		s := list[used[q.tp]]
		used[q.tp]++
		t.Run(q.name, func(t *testing.T) { checkStatement(t, q, s, entries, byTP) })
	}
}

// checkStatement asserts one query's statement.
func checkStatement(t *testing.T, q captureQuery, s pglog.Statement, entries []pglog.Entry, byTP map[pglog.TraceParent][]pglog.Statement) {
	wantPhases := map[pgx.QueryExecMode]int{pgx.QueryExecModeSimpleProtocol: 1, pgx.QueryExecModeExec: 3, pgx.QueryExecModeCacheStatement: 3}[q.mode]
	switch {
	case q.name == "cache-reuse":
		wantPhases = 2 // the statement is cached: bind and execute only
	case q.fail:
		wantPhases = 2 // parse and bind; execute fails
	}
	if s.Phases != wantPhases {
		t.Errorf("Phases = %d, want %d: %v", s.Phases, wantPhases, s)
	}
	if q.fail != (s.Error != "") {
		t.Errorf("Error = %q, want failure %v", s.Error, q.fail)
	}
	if !strings.Contains(s.SQL, q.sql[:20]) && q.args == nil {
		t.Errorf("SQL = %q, want it to hold %q", s.SQL, q.sql)
	}
	if got := sumPhases(entries, s); got != s.Duration {
		t.Errorf("Duration = %v, want the sum of its phase lines %v", s.Duration, got)
	}
	if !s.Start.Equal(s.End.Add(-s.Duration)) {
		t.Errorf("Start %v != End %v - Duration %v", s.Start, s.End, s.Duration)
	}
	if q.lock {
		checkLockWait(t, q, s, entries, byTP)
	} else if s.LockWait != 0 || s.Blocker != 0 {
		t.Errorf("unexpected lock wait %v (blocker %d)", s.LockWait, s.Blocker)
	}
}

// checkLockWait asserts that the waiter's duration holds the holder's
// sleep, that log_lock_waits named the holder, and, for the extended
// protocol, that the wait is in the parse line.
func checkLockWait(t *testing.T, q captureQuery, s pglog.Statement, entries []pglog.Entry, byTP map[pglog.TraceParent][]pglog.Statement) {
	holds := byTP[tpFor(holdTP(q))]
	if len(holds) != 1 {
		t.Fatalf("holder's sleep: %d statements, want 1", len(holds))
	}
	hold := holds[0]
	if hold.Duration < holdTime {
		t.Errorf("holder slept %v, want >= %v", hold.Duration, holdTime)
	}
	if s.Duration < hold.Duration {
		t.Errorf("waiter Duration %v < the holder's sleep %v", s.Duration, hold.Duration)
	}
	if s.LockWait < 100*time.Millisecond || s.LockWait > s.Duration {
		t.Errorf("LockWait = %v, want >= deadlock_timeout 100ms and <= Duration %v", s.LockWait, s.Duration)
	}
	if s.Blocker != hold.PID {
		t.Errorf("Blocker = %d, want the holder %d", s.Blocker, hold.PID)
	}
	if q.mode != pgx.QueryExecModeExec {
		return
	}
	for _, e := range entries {
		if e.PID == s.PID && e.SQL == s.SQL && e.Phase == pglog.PhaseParse && e.Duration < hold.Duration {
			t.Errorf("parse line %v, want the lock wait (>= %v) in it", e.Duration, hold.Duration)
		}
	}
}

// sumPhases adds the durations of the phase lines that make up s, found
// independently of the Aggregator: walking back from the execute (or, for a
// failed statement, the last) line of s's PID and SQL that ends at s.End,
// through that PID's lines of the same SQL,
// to a parse line (included) or to the end of the previous statement.
func sumPhases(entries []pglog.Entry, s pglog.Statement) time.Duration {
	last := -1
	for i, e := range entries {
		if !isPhase(e) || e.PID != s.PID || e.SQL != s.SQL || !e.End.Equal(s.End) {
			continue
		}
		if s.Error != "" { // ends at its last logged phase
			last = i
		} else if e.Phase == pglog.PhaseExecute || e.Phase == pglog.PhaseStatement {
			last = i
			break
		}
	}
	var sum time.Duration
	for i := last; i >= 0; i-- {
		e := entries[i]
		if e.PID != s.PID || !isPhase(e) {
			continue
		}
		if e.SQL != s.SQL || (i < last && (e.Phase == pglog.PhaseExecute || e.Phase == pglog.PhaseStatement)) {
			break
		}
		sum += e.Duration
		if e.Phase == pglog.PhaseParse || e.Phase == pglog.PhaseStatement {
			break
		}
	}
	return sum
}

// isPhase reports a duration line of a statement phase.
func isPhase(e pglog.Entry) bool { return e.HasDuration && e.Phase != pglog.PhaseNone }
